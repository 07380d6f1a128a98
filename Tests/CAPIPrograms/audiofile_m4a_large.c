/* audiofile_m4a_large.c — issue 23: an M4A whose data passes 4 GiB, without writing 4 GiB. The
 * file is made with AudioFileInitializeWithCallbacks; its write callback writes the header and the
 * moov into PATH but skips the packets' bytes (a sparse file: they read as zeros). 4200 ALAC
 * packets of 1 MiB each are written with AudioFileWritePackets; then the file must have a 64-bit
 * mdat header and chunk offsets in a co64 box. ffprobe reads the rest (CAPIAudioFileTests).
 * Prints "N passed, M failed". Usage: audiofile_m4a_large PATH */
#include <AudioToolbox/AudioToolbox.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

enum { kPacketBytes = 1 << 20, kPackets = 4200 };
static UInt8 *packet;
static int fd;
static SInt64 fileSize;

static OSStatus writeProc(void *data, SInt64 position, UInt32 count, const void *buffer, UInt32 *actual) {
    (void)data;
    /* The packets' bytes are skipped: the file stays sparse there. */
    if ((const UInt8 *)buffer < packet || (const UInt8 *)buffer >= packet + kPacketBytes)
        if (pwrite(fd, buffer, count, position) != (ssize_t)count) return kAudioFilePermissionsError;
    if (position + count > fileSize) fileSize = position + count;
    *actual = count;
    return noErr;
}
static SInt64 getSizeProc(void *data) { (void)data; return fileSize; }
static OSStatus setSizeProc(void *data, SInt64 size) {
    (void)data;
    fileSize = size;
    return ftruncate(fd, size) == 0 ? noErr : kAudioFilePermissionsError;
}

static UInt32 be32(const UInt8 *b) { return (UInt32)b[0] << 24 | (UInt32)b[1] << 16 | (UInt32)b[2] << 8 | b[3]; }

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 1;
    packet = calloc(1, kPacketBytes);
    AudioStreamBasicDescription format = {44100, kAudioFormatAppleLossless, 1, 0, 4096, 0, 2, 0, 0};
    AudioFileID f = NULL;
    OSStatus s = AudioFileInitializeWithCallbacks(NULL, NULL, writeProc, getSizeProc, setSizeProc, kAudioFileM4AType, &format, 0, &f);
    EXPECT(s == noErr, "initialize: %d", (int)s);
    if (s != noErr) return 1;
    /* ALACSpecificConfig: 4096 frames, version 0, 16 bits, pb 40, mb 10, kb 14, 2 channels,
     * max run 255, max frame bytes 0, average bit rate 0, 44100 Hz. */
    UInt8 config[24] = {0, 0, 0x10, 0, 0, 16, 40, 10, 14, 2, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAC, 0x44};
    EXPECT(AudioFileSetProperty(f, kAudioFilePropertyMagicCookieData, sizeof config, config) == noErr, "cookie");
    AudioStreamPacketDescription d = {0, 4096, kPacketBytes};
    for (int i = 0; i < kPackets; i++) {
        UInt32 n = 1;
        s = AudioFileWritePackets(f, false, kPacketBytes, &d, i, &n, packet);
        if (s != noErr) { EXPECT(0, "packet %d: %d", i, (int)s); break; }
    }
    EXPECT(AudioFileClose(f) == noErr, "close");
    UInt8 head[64];
    EXPECT(pread(fd, head, sizeof head, 0) == sizeof head, "the header");
    UInt32 ftyp = be32(head);
    UInt64 mdat = 0;
    for (int i = 0; i < 8; i++) mdat = mdat << 8 | head[ftyp + 8 + i];
    EXPECT(be32(head + ftyp) == 1 && memcmp(head + ftyp + 4, "mdat", 4) == 0 && mdat == 16 + (UInt64)kPackets * kPacketBytes,
           "a 64-bit mdat header: %u '%.4s' %llu", be32(head + ftyp), head + ftyp + 4, (unsigned long long)mdat);
    /* The moov follows the data: its chunk offsets are in a co64 box. */
    SInt64 moovAt = ftyp + 16 + (SInt64)kPackets * kPacketBytes;
    SInt64 moovSize = fileSize - moovAt;
    UInt8 *moov = malloc(moovSize > 0 ? moovSize : 1);
    EXPECT(moovSize > 8 && pread(fd, moov, moovSize, moovAt) == moovSize && memcmp(moov + 4, "moov", 4) == 0, "the moov after the data");
    SInt64 co64 = -1;
    int stco = 0;
    for (SInt64 i = 0; i + 4 <= moovSize; i++) {
        if (memcmp(moov + i, "co64", 4) == 0) co64 = i + 4;
        if (memcmp(moov + i, "stco", 4) == 0) stco = 1;
    }
    EXPECT(co64 > 0 && !stco, "chunk offsets in co64");
    if (co64 > 0 && co64 + 8 <= moovSize) {
        /* Chunks of 22 packets: the last chunk's offset is past 4 GiB. */
        UInt32 chunks = be32(moov + co64 + 4);
        UInt64 last = 0;
        SInt64 at = co64 + 8 + (SInt64)(chunks - 1) * 8;
        for (int i = 0; at + 8 <= moovSize && i < 8; i++) last = last << 8 | moov[at + i];
        EXPECT(chunks == (kPackets + 21) / 22 && last == ftyp + 16 + (UInt64)(chunks - 1) * 22 * kPacketBytes,
               "%u chunks, the last at %llu", chunks, (unsigned long long)last);
    }
    free(moov);
    free(packet);
    close(fd);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
