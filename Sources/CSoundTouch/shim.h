/* SoundTouch's C interface (Debian's libsoundtouch-dev: SoundTouchDLL.h, libSoundTouchDll.so,
 * LGPL-2.1), for AQConvert's TimePitch (issue 22; docs/codecs.md, "Time and pitch"). */
#include <SoundTouchDLL.h>
