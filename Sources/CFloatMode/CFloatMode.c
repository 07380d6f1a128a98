// Everything is in the header (static inline); SwiftPM wants one source file per C target.
#include "CFloatMode.h"
