/* cf_types.c — issue 23: the Core Foundation an AudioToolbox program sees is the toolchain's
 * (libFoundation.so), whichever compiler reads the headers: clang -fblocks reads the toolchain's
 * own headers, gcc and C++ without blocks AQSyncCFSubset.h. CFSTR, CFString, CFURL, CFData,
 * CFNumber, Boolean as CF's bool, the run-loop mode constants, and a CFRunLoopTimer firing on
 * the current thread's loop (no audio, no server). Prints "N passed, M failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <CoreFoundation/CoreFoundation.h>
#include <stdio.h>
#include <string.h>

/* What Apple's umbrella headers bring and programs rely on (issue 23). */
#include <TargetConditionals.h>
#if !TARGET_OS_LINUX || TARGET_OS_MAC || TARGET_OS_IPHONE || !TARGET_RT_LITTLE_ENDIAN
#error "TARGET_ macros for Linux expected"
#endif
#if !defined(COREAUDIOTYPES_VERSION) || !defined(MAC_OS_X_VERSION_10_5) || !defined(MAC_OS_X_VERSION_MAX_ALLOWED)
#error "the version macros Core Audio utility code tests"
#endif

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static int fired;
static void tick(CFRunLoopTimerRef timer, void *info) {
    (void)timer;
    int *count = (int *)info;
    if (++*count == 3) CFRunLoopStop(CFRunLoopGetCurrent());
}

int main(void) {
    EXPECT(sizeof(Boolean) == 1, "Boolean is one byte");
    void *none = nil;
    EXPECT(none == NULL, "nil");
    EXPECT(CFSwapInt32HostToBig(1) == 0x01000000u && CFSwapInt16BigToHost(0x0102) == 0x0201, "CFByteOrder");
    EXPECT(isprint('a') && toupper('a') == 'A', "ctype.h through the umbrella");
    CFStringRef constant = CFSTR("hello");
    EXPECT(CFStringGetLength(constant) == 5, "CFSTR length %ld", (long)CFStringGetLength(constant));
    CFStringRef made = CFStringCreateWithCString(kCFAllocatorDefault, "hello", kCFStringEncodingUTF8);
    EXPECT(CFStringCompare(made, constant, 0) == kCFCompareEqualTo && CFEqual(made, constant), "CFString equality");
    EXPECT(CFGetTypeID(made) == CFStringGetTypeID(), "type id");
    CFRelease(made);
    EXPECT(CFEqual(kCFRunLoopDefaultMode, CFSTR("kCFRunLoopDefaultMode")), "kCFRunLoopDefaultMode is CF's");

    const char *path = "/tmp/some dir/file.caf";
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    char back[256] = "";
    EXPECT(url && CFURLGetFileSystemRepresentation(url, true, (UInt8 *)back, sizeof back) && strcmp(back, path) == 0, "CFURL round trip: '%s'", back);
    CFStringRef extension = url ? CFURLCopyPathExtension(url) : NULL;
    EXPECT(extension && CFEqual(extension, CFSTR("caf")), "path extension");
    if (extension) CFRelease(extension);
    if (url) CFRelease(url);

    UInt8 bytes[3] = {1, 2, 3};
    CFDataRef data = CFDataCreate(NULL, bytes, 3);
    EXPECT(CFDataGetLength(data) == 3 && CFDataGetBytePtr(data)[2] == 3, "CFData");
    CFRelease(data);
    SInt32 v = 44100, w = 0;
    CFNumberRef number = CFNumberCreate(NULL, kCFNumberSInt32Type, &v);
    EXPECT(CFNumberGetValue(number, kCFNumberSInt32Type, &w) && w == 44100, "CFNumber");
    CFRelease(number);

    /* A repeating timer on this thread's loop: three ticks 20 ms apart, then the callout stops
     * the loop. */
    CFRunLoopTimerContext context = {0, &fired, NULL, NULL, NULL};
    CFRunLoopTimerRef timer = CFRunLoopTimerCreate(NULL, CFAbsoluteTimeGetCurrent() + 0.02, 0.02, 0, 0, tick, &context);
    CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer, kCFRunLoopDefaultMode);
    CFRunLoopRunResult r = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 5, false);
    EXPECT(r == kCFRunLoopRunStopped && fired == 3, "timer: %d ticks, result %d", fired, (int)r);
    CFRunLoopTimerInvalidate(timer);
    CFRelease(timer);
    /* (An invalidated timer does not fire again; swift-corelibs-foundation's loops keep a source
     * of their own, so an otherwise empty loop times out rather than finishing.) */
    r = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.1, false);
    EXPECT(fired == 3 && (r == kCFRunLoopRunTimedOut || r == kCFRunLoopRunFinished), "after the invalidation: %d ticks, result %d", fired, (int)r);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
