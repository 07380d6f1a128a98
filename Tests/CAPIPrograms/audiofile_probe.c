/* audiofile_probe.c — issue 23: opens FILE with AudioFileOpenURL (a CFURL from
 * CFURLCreateFromFileSystemRepresentation) and prints, one `key=value` a line, what players read
 * of it (kAudioFileProperty…), then reads every packet with AudioFileReadPacketData (and the
 * first ones again with AudioFileReadPackets) and prints the frames and bytes read; the test
 * compares them with ffprobe. Also checks the result codes a player can provoke on the file.
 * Prints "N passed, M failed" last. Usage: audiofile_probe FILE */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static void fourcc(UInt32 v, char out[5]) {
    for (int i = 0; i < 4; i++) out[i] = (char)((v >> (24 - 8 * i)) & 0xFF);
    out[4] = 0;
}

static void hex(const UInt8 *b, UInt32 n) {
    for (UInt32 i = 0; i < n; i++) printf("%02x", b[i]);
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    AudioFileID file = NULL;
    OSStatus s = AudioFileOpenURL(url, kAudioFileReadPermission, 0, &file);
    CFRelease(url);
    printf("open=%d\n", (int)s);
    if (s != noErr) return 1;

    UInt32 u32 = 0, size = sizeof u32;
    char cc[5];
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyFileFormat, &size, &u32) == noErr, "FileFormat");
    fourcc(u32, cc);
    printf("fileFormat=%s\n", cc);
    AudioStreamBasicDescription f;
    size = sizeof f;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyDataFormat, &size, &f) == noErr && size == sizeof f, "DataFormat");
    fourcc(f.mFormatID, cc);
    printf("formatID=%s\nsampleRate=%.0f\nchannels=%u\nbitsPerChannel=%u\nframesPerPacket=%u\nbytesPerPacket=%u\n", cc,
           f.mSampleRate, f.mChannelsPerFrame, f.mBitsPerChannel, f.mFramesPerPacket, f.mBytesPerPacket);
    UInt64 packets = 0, bytes = 0;
    size = sizeof packets;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr, "PacketCount");
    size = sizeof bytes;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyAudioDataByteCount, &size, &bytes) == noErr, "ByteCount");
    printf("packets=%llu\nbytes=%llu\n", (unsigned long long)packets, (unsigned long long)bytes);
    UInt32 maxPacket = 0, upper = 0;
    size = 4;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyMaximumPacketSize, &size, &maxPacket) == noErr, "MaximumPacketSize");
    size = 4;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyPacketSizeUpperBound, &size, &upper) == noErr, "PacketSizeUpperBound");
    printf("maximumPacketSize=%u\npacketSizeUpperBound=%u\n", maxPacket, upper);
    EXPECT(upper >= maxPacket, "upper bound %u >= maximum %u", upper, maxPacket);
    SInt64 offset = 0;
    size = sizeof offset;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyDataOffset, &size, &offset) == noErr, "DataOffset");
    printf("dataOffset=%lld\n", (long long)offset);
    Float64 duration = 0;
    size = sizeof duration;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyEstimatedDuration, &size, &duration) == noErr, "EstimatedDuration");
    printf("duration=%.6f\n", duration);
    size = 4;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyBitRate, &size, &u32) == noErr, "BitRate");
    printf("bitRate=%u\n", u32);
    UInt32 cookieSize = 0;
    if (AudioFileGetPropertyInfo(file, kAudioFilePropertyMagicCookieData, &cookieSize, NULL) == noErr && cookieSize > 0) {
        UInt8 *cookie = malloc(cookieSize);
        EXPECT(AudioFileGetProperty(file, kAudioFilePropertyMagicCookieData, &cookieSize, cookie) == noErr, "MagicCookieData");
        printf("cookie=");
        hex(cookie, cookieSize);
        free(cookie);
    } else {
        printf("cookie=\n");
    }
    UInt32 layoutSize = 0;
    if (AudioFileGetPropertyInfo(file, kAudioFilePropertyChannelLayout, &layoutSize, NULL) == noErr) {
        AudioChannelLayout *layout = malloc(layoutSize);
        EXPECT(AudioFileGetProperty(file, kAudioFilePropertyChannelLayout, &layoutSize, layout) == noErr, "ChannelLayout");
        printf("channelLayoutTag=%u\n", layout->mChannelLayoutTag);
        free(layout);
    }
    /* The info dictionary: a CFDictionary of CFStrings with the approximate duration. */
    CFDictionaryRef info = NULL;
    size = sizeof info;
    EXPECT(AudioFileGetPropertyInfo(file, kAudioFilePropertyInfoDictionary, &size, NULL) == noErr && size == sizeof info, "info size");
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyInfoDictionary, &size, &info) == noErr && info != NULL, "InfoDictionary");
    if (info) {
        CFStringRef approximate = CFDictionaryGetValue(info, CFSTR(kAFInfoDictionary_ApproximateDurationInSeconds));
        char text[64] = "";
        EXPECT(approximate && CFGetTypeID(approximate) == CFStringGetTypeID() && CFStringGetCString(approximate, text, sizeof text, kCFStringEncodingUTF8)
               && fabs(atof(text) - duration) < 0.001, "approximate duration '%s' of %f", text, duration);
        CFRelease(info);
    }
    AudioFilePacketTableInfo table;
    size = sizeof table;
    if (AudioFileGetProperty(file, kAudioFilePropertyPacketTableInfo, &size, &table) == noErr)
        printf("validFrames=%lld\npriming=%d\nremainder=%d\n", (long long)table.mNumberValidFrames, table.mPrimingFrames, table.mRemainderFrames);

    /* Every packet, 100 at a time, as a player reads them. */
    UInt32 bufferSize = (upper ? upper : 4096) * 100;
    UInt8 *buffer = malloc(bufferSize);
    AudioStreamPacketDescription descriptions[100];
    SInt64 next = 0;
    unsigned long long frames = 0, readBytes = 0;
    for (;;) {
        UInt32 n = 100, nb = bufferSize;
        s = AudioFileReadPacketData(file, false, &nb, descriptions, next, &n, buffer);
        if (s != noErr || n == 0) break;
        for (UInt32 i = 0; i < n; i++)
            frames += descriptions[i].mVariableFramesInPacket ? descriptions[i].mVariableFramesInPacket : f.mFramesPerPacket;
        readBytes += nb;
        next += n;
    }
    EXPECT(s == noErr, "ReadPacketData: %d", (int)s);
    printf("packetsRead=%lld\nframesRead=%llu\nbytesRead=%llu\n", (long long)next, frames, readBytes);
    EXPECT((UInt64)next == packets, "read %lld packets of %llu", (long long)next, (unsigned long long)packets);
    /* The older call, and the last packet again. */
    UInt32 n = 3, nb = 0;
    EXPECT(AudioFileReadPackets(file, false, &nb, descriptions, 0, &n, buffer) == noErr && n == (packets < 3 ? packets : 3) && nb > 0, "ReadPackets: %u, %u bytes", n, nb);
    n = 5;
    nb = bufferSize;
    EXPECT(AudioFileReadPacketData(file, false, &nb, descriptions, (SInt64)packets - 1, &n, buffer) == noErr && n == 1, "the last packet: %u", n);
    n = 5;
    nb = bufferSize;
    EXPECT(AudioFileReadPacketData(file, false, &nb, descriptions, (SInt64)packets, &n, buffer) == noErr && n == 0 && nb == 0, "past the end: %u packets", n);
    /* Result codes. */
    n = 1;
    nb = bufferSize;
    EXPECT(AudioFileReadPacketData(file, false, &nb, descriptions, -1, &n, buffer) == kAudioFileInvalidPacketOffsetError, "negative packet");
    n = 1;
    nb = 1;
    EXPECT(maxPacket <= 1 || AudioFileReadPacketData(file, false, &nb, descriptions, 0, &n, buffer) == kAudio_ParamError, "no room for a packet");
    size = 2;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyDataFormat, &size, &f) == kAudioFileBadPropertySizeError, "short size");
    size = 4;
    EXPECT(AudioFileGetProperty(file, 0x7a7a7a7a, &size, &u32) == kAudioFileUnsupportedPropertyError, "unknown property");
    UInt32 bytesAsked = 16;
    EXPECT(AudioFileReadBytes(file, false, (SInt64)bytes - 8, &bytesAsked, buffer) == kAudioFileEndOfFileError && bytesAsked == 8, "ReadBytes at the end: %u", bytesAsked);
    UInt32 one = 1;
    EXPECT(AudioFileWriteBytes(file, false, 0, &one, buffer) == kAudioFileOperationNotSupportedError, "writing a file opened for reading");
    AudioFramePacketTranslation t = {0, 2, 0};
    size = sizeof t;
    EXPECT(AudioFileGetProperty(file, kAudioFilePropertyPacketToFrame, &size, &t) == noErr, "PacketToFrame");
    printf("frameOfPacket2=%lld\n", (long long)t.mFrame);
    free(buffer);
    EXPECT(AudioFileClose(file) == noErr, "close");
    EXPECT(AudioFileClose(file) == kAudio_ParamError, "closed twice");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
