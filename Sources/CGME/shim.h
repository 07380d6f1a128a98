// Game_Music_Emu (Debian: libgme-dev, pkg-config libgme), for the chiptune example.
#include <gme/gme.h>
