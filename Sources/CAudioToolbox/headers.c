/* The C part of libAudioToolbox.so: the run-loop mode constants (data, which Swift's @c cannot
 * export). Everything else is in Sources/AudioToolboxC. */
#include <CoreFoundation/CFRunLoop.h>

const CFStringRef kCFRunLoopDefaultMode = (CFStringRef) "kCFRunLoopDefaultMode";
const CFStringRef kCFRunLoopCommonModes = (CFStringRef) "kCFRunLoopCommonModes";
