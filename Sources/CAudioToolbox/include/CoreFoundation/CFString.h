/*
 * CoreFoundation/CFString.h — aqsync's C API (issue 23): Core Foundation is the Swift toolchain's
 * (swift-corelibs-foundation, exported by libFoundation.so; pkg-config puts its headers on the
 * include path after these). A compiler that reads blocks (clang -fblocks, and Swift) gets the
 * toolchain's own header; one that does not (gcc, clang without -fblocks), which cannot read
 * it, gets AQSyncCFSubset.h: the same declarations for the part of Core Foundation audio
 * programs use, bound to the same library. docs/c-api.md, "Core Foundation".
 */
#if defined(__BLOCKS__)
#include_next <CoreFoundation/CFString.h>
#else
#include <CoreFoundation/AQSyncCFSubset.h>
#endif
