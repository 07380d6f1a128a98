/* annotations.c — code written for Apple's headers uses their annotations; they must build with
 * gcc and clang (issue 12). Exits 0. */
#include <AudioToolbox/AudioToolbox.h>
#include <CoreAudioTypes/CoreAudioTypes.h>
#include <CoreFoundation/CoreFoundation.h>

CF_ASSUME_NONNULL_BEGIN
typedef CF_ENUM(UInt32, MyMode) { kMyModeA = 1, kMyModeB = 2 };
typedef CF_OPTIONS(UInt32, MyOptions) { kMyOptionX = 1u << 0, kMyOptionY = 1u << 1 };

static int count(const char *_Nullable s, const char *_Nonnull t, void *__nullable u) API_AVAILABLE(macos(10.5), ios(2.0));
static int count(const char *_Nullable s, const char *_Nonnull t, void *__nullable u) {
    (void)u;
    return (s ? (int)strlen(s) : 0) + (int)strlen(t);
}
extern void legacy(void) __OSX_AVAILABLE_STARTING(__MAC_10_5, __IPHONE_2_0);
CF_ASSUME_NONNULL_END

int main(void) {
    MyMode m = kMyModeB;
    MyOptions o = kMyOptionX | kMyOptionY;
    bool ok = m == 2 && o == 3 && count(NULL, "ab", NULL) == 2;
    uint32_t tag = AudioChannelLayoutTag_GetNumberOfChannels(kAudioChannelLayoutTag_MPEG_5_1_A);
    return ok && tag == 6 && noErr == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
