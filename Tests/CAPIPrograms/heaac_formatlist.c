/* heaac_formatlist.c — issue 23, offline (AQSYNC_DEVICE=offline): what an internet-radio player
 * does with an HE-AAC stream. argv[1]: an ADTS AAC file whose core runs at 22.05 kHz (implicit
 * SBR); argv[2]: an MP2 file. Checks kAudioFileStreamProperty_FormatList (HE first, then the LC
 * core = DataFormat), the same list from kAudioFilePropertyFormatList and from
 * AudioFormatGetProperty(kAudioFormatProperty_FormatList) given the format and the cookie; then
 * picks the first item an output queue accepts (as StreamingKit/AudioStreamer do) and sets the
 * cookie; an MP2 file's DataFormat ('.mp2', 1152 frames) makes a queue too.
 * Prints "N passed, M failed". */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef struct {
    int ready;
    AudioStreamBasicDescription format;
    AudioFormatListItem list[8];
    UInt32 listSize;
    unsigned char cookie[64];
    UInt32 cookieSize;
} Info;

static void listener(void *user, AudioFileStreamID s, AudioFileStreamPropertyID id, AudioFileStreamPropertyFlags *flags) {
    Info *i = user;
    (void)flags;
    if (id != kAudioFileStreamProperty_ReadyToProducePackets) return;
    i->ready = 1;
    UInt32 size = sizeof i->format;
    EXPECT(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_DataFormat, &size, &i->format) == noErr, "DataFormat");
    Boolean writable;
    EXPECT(AudioFileStreamGetPropertyInfo(s, kAudioFileStreamProperty_FormatList, &i->listSize, &writable) == noErr
           && i->listSize % sizeof(AudioFormatListItem) == 0 && i->listSize <= sizeof i->list, "FormatList size %u", i->listSize);
    EXPECT(AudioFileStreamGetProperty(s, kAudioFileStreamProperty_FormatList, &i->listSize, i->list) == noErr, "FormatList");
    i->cookieSize = sizeof i->cookie;
    if (AudioFileStreamGetProperty(s, kAudioFileStreamProperty_MagicCookieData, &i->cookieSize, i->cookie) != noErr) i->cookieSize = 0;
}
/* Items equal field by field (the struct's 4 bytes of tail padding are not compared). */
static int sameItems(const AudioFormatListItem *a, const AudioFormatListItem *b, UInt32 bytes) {
    for (UInt32 k = 0; k < bytes / sizeof(AudioFormatListItem); k++)
        if (memcmp(&a[k].mASBD, &b[k].mASBD, sizeof a[k].mASBD) != 0 || a[k].mChannelLayoutTag != b[k].mChannelLayoutTag) return 0;
    return 1;
}
static void packets(void *u, UInt32 b, UInt32 n, const void *d, AudioStreamPacketDescription *p) { (void)u; (void)b; (void)n; (void)d; (void)p; }
static void output(void *u, AudioQueueRef q, AudioQueueBufferRef b) { (void)u; (void)q; (void)b; }

static void parse(const char *path, Info *info) {
    FILE *f = fopen(path, "rb");
    if (!f) { printf("cannot open %s\n", path); exit(2); }
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    AudioFileStreamID s;
    EXPECT(AudioFileStreamOpen(info, listener, packets, 0, &s) == noErr, "open");
    EXPECT(AudioFileStreamParseBytes(s, (UInt32)n, buf, 0) == noErr, "parse");
    AudioFileStreamClose(s);
    EXPECT(info->ready, "ready");
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    Info he;
    memset(&he, 0, sizeof he);
    parse(argv[1], &he);
    UInt32 count = he.listSize / sizeof(AudioFormatListItem);
    EXPECT(count == 2, "ADTS stereo 22.05 kHz: 2 items, got %u", count);
    EXPECT(he.list[0].mASBD.mFormatID == kAudioFormatMPEG4AAC_HE && he.list[0].mASBD.mSampleRate == 44100
           && he.list[0].mASBD.mFramesPerPacket == 2048 && he.list[0].mASBD.mChannelsPerFrame == 2
           && he.list[0].mChannelLayoutTag == kAudioChannelLayoutTag_Stereo, "HE-AAC first");
    EXPECT(count >= 2 && memcmp(&he.list[count - 1].mASBD, &he.format, sizeof he.format) == 0, "the last item is DataFormat");
    EXPECT(he.format.mFormatID == kAudioFormatMPEG4AAC && he.format.mSampleRate == 22050 && he.format.mFramesPerPacket == 1024, "DataFormat: the LC core");
    EXPECT(he.cookieSize == 2, "ADTS cookie: an AudioSpecificConfig");

    /* Audio Format Services, given the format and the cookie. */
    AudioFormatInfo fi;
    memset(&fi, 0, sizeof fi);
    fi.mASBD = he.format;
    fi.mMagicCookie = he.cookie;
    fi.mMagicCookieSize = he.cookieSize;
    UInt32 size = 0;
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_FormatList, sizeof fi, &fi, &size) == noErr && size == he.listSize, "AudioFormat FormatList size %u", size);
    AudioFormatListItem items[8];
    size = sizeof items;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatList, sizeof fi, &fi, &size, items) == noErr && size == he.listSize
           && sameItems(items, he.list, size), "AudioFormat FormatList = the parser's");
    fi.mMagicCookie = NULL;
    fi.mMagicCookieSize = 0;
    size = sizeof items;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatList, sizeof fi, &fi, &size, items) == noErr && size == sizeof(AudioFormatListItem)
           && items[0].mASBD.mFormatID == kAudioFormatMPEG4AAC, "no cookie: the format itself");
    size = sizeof items;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FormatList, 4, &fi, &size, items) == kAudioFormatBadSpecifierSizeError, "short specifier");

    /* The first playable item, as a player asks (the HE item), and the decoders. */
    UInt32 index = 99;
    size = sizeof index;
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_FirstPlayableFormatFromList, he.listSize, he.list, &size) == noErr && size == 4, "fpfl size");
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, he.listSize, he.list, &size, &index) == noErr && index == 0,
           "first playable: %u", index);
    AudioFormatListItem odd[2];
    odd[0] = he.list[0];
    odd[0].mASBD.mFormatID = 0x7a7a7a7a;
    odd[1] = he.list[count - 1];
    size = sizeof index;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, sizeof odd, odd, &size, &index) == noErr && index == 1,
           "an unknown format is skipped: %u", index);
    size = sizeof index;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, sizeof odd[0], odd, &size, &index) == kAudioFormatUnsupportedDataFormatError,
           "nothing playable");
    size = sizeof index;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, 10, odd, &size, &index) == kAudioFormatBadSpecifierSizeError, "odd size");
    UInt32 ids[32];
    size = 0;
    EXPECT(AudioFormatGetPropertyInfo(kAudioFormatProperty_DecodeFormatIDs, 0, NULL, &size) == noErr && size >= 4 * 10 && size <= sizeof ids, "acif size %u", size);
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_DecodeFormatIDs, 0, NULL, &size, ids) == noErr, "acif");
    int hasHE = 0, hasMP2 = 0, hasMP1 = 0;
    for (UInt32 k = 0; k < size / 4; k++) {
        hasHE |= ids[k] == kAudioFormatMPEG4AAC_HE_V2;
        hasMP2 |= ids[k] == kAudioFormatMPEGLayer2;
        hasMP1 |= ids[k] == kAudioFormatMPEGLayer1;
    }
    EXPECT(hasHE && hasMP2 && hasMP1, "decoders include HE-AAC v2, MP2, MP1");
    size = sizeof ids;
    EXPECT(AudioFormatGetProperty(kAudioFormatProperty_EncodeFormatIDs, 0, NULL, &size, ids) == noErr && size == 12
           && ids[1] == kAudioFormatMPEG4AAC, "encoders: PCM, AAC, ALAC");

    /* Audio File Services. */
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    AudioFileID file;
    EXPECT(AudioFileOpenURL(url, kAudioFileReadPermission, kAudioFileAAC_ADTSType, &file) == noErr, "AudioFileOpenURL");
    size = sizeof items;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyFormatList, &size, items) == noErr && size == he.listSize
           && sameItems(items, he.list, size), "kAudioFilePropertyFormatList = the parser's");
    AudioFileClose(file);
    CFRelease(url);

    /* A player: the first format a queue accepts. */
    AudioQueueRef q = NULL;
    UInt32 chosen = count;
    for (UInt32 k = 0; k < count; k++) {
        if (AudioQueueNewOutput(&he.list[k].mASBD, output, NULL, NULL, NULL, 0, &q) == noErr) { chosen = k; break; }
    }
    EXPECT(chosen == 0, "the HE format is accepted (item %u)", chosen);
    if (q) {
        EXPECT(AudioQueueSetProperty(q, kAudioQueueProperty_MagicCookie, he.cookie, he.cookieSize) == noErr, "cookie on the HE queue");
        AudioQueueDispose(q, true);
    }
    AudioStreamBasicDescription v2 = he.list[0].mASBD;
    v2.mFormatID = kAudioFormatMPEG4AAC_HE_V2;
    q = NULL;
    EXPECT(AudioQueueNewOutput(&v2, output, NULL, NULL, NULL, 0, &q) == noErr, "an HE-AAC v2 queue");
    if (q) AudioQueueDispose(q, true);

    /* MP2. */
    Info mp2;
    memset(&mp2, 0, sizeof mp2);
    parse(argv[2], &mp2);
    EXPECT(mp2.format.mFormatID == kAudioFormatMPEGLayer2 && mp2.format.mFramesPerPacket == 1152, "MP2 DataFormat");
    EXPECT(mp2.listSize == sizeof(AudioFormatListItem), "MP2: one item");
    q = NULL;
    EXPECT(AudioQueueNewOutput(&mp2.format, output, NULL, NULL, NULL, 0, &q) == noErr, "an MP2 queue");
    if (q) AudioQueueDispose(q, true);
    AudioStreamBasicDescription mp1 = mp2.format;
    mp1.mFormatID = kAudioFormatMPEGLayer1;
    mp1.mFramesPerPacket = 384;
    q = NULL;
    EXPECT(AudioQueueNewOutput(&mp1, output, NULL, NULL, NULL, 0, &q) == noErr, "an MP1 queue");
    if (q) AudioQueueDispose(q, true);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
