/* extaudiofile_rate.c — issue 23: ExtAudioFile reading and writing with a client format at
 * another rate than the file's, as Learning Core Audio's chapter 6 converter sets it. FILE (a
 * stereo 1 kHz tone, the right channel at half the left's level) is read as stereo floats at
 * RATE: exactly round(L × RATE / file rate) frames for a file of L frames (FileLengthFrames, in
 * file frames), written to OUT (raw f32le, for the test to compare with ffmpeg's resampling),
 * each channel's level (within 1% of the file's own, read at its rate) and frequency (1 kHz
 * within 1 Hz) measured. Seeks (in FILE frames, as Apple's QA1609 says):
 * ExtAudioFileTell right after ExtAudioFileSeek(F) gives round(C × file / RATE) for C = round(F
 * × RATE / file), and the frames read from there equal the read-through's from C (exactly within
 * the first 8192 client frames; elsewhere within the bound printed as "max seek difference");
 * seeking to what Tell says keeps the position, and seeking back to it after reading on lands
 * on its own client frame, within RATE / file / 2 frames of where Tell was asked (1e-4 of the
 * read-through's frames there). A mono 16-bit client at RATE
 * gives the read-through's left channel to the 16-bit step. Then the read-through is written
 * back through a client at RATE into a 32-bit float WAVE and an ALAC CAF at the file's rate in
 * DIR (exactly round(n × file / RATE) frames) and read back at the file's rate: level and
 * frequency again (a first client rate replaced before writing; a change after writing
 * refused). A client rate of 500 Hz is refused. Prints "N passed, M failed".
 * Usage: extaudiofile_rate FILE RATE OUT DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static AudioStreamBasicDescription floats(Float64 rate, UInt32 channels) {
    AudioStreamBasicDescription f = {0};
    f.mSampleRate = rate; f.mFormatID = kAudioFormatLinearPCM; f.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
    f.mBitsPerChannel = 32; f.mChannelsPerFrame = channels; f.mBytesPerFrame = f.mBytesPerPacket = 4 * channels; f.mFramesPerPacket = 1;
    return f;
}

static SInt64 readSome(ExtAudioFileRef file, SInt64 cap, float *out) {
    SInt64 done = 0;
    while (done < cap) {
        UInt32 n = (UInt32)(cap - done < 1000 ? cap - done : 1000);
        AudioBufferList list = { 1, { { 2, n * 8, out + done * 2 } } };
        if (ExtAudioFileRead(file, &n, &list) != noErr || n == 0) break;
        done += n;
    }
    return done;
}

/* round(x × num / den), halves up, in whole numbers. */
static SInt64 scaled(SInt64 x, SInt64 num, SInt64 den) { return (2 * x * num + den) / (2 * den); }

/* RMS and frequency (rising zero crossings) of channel ch, away from both ends. */
static void measure(const float *x, SInt64 frames, int ch, double rate, double *rms, double *hz) {
    double sum = 0; int crossings = 0;
    SInt64 from = frames / 10, to = frames - frames / 10;
    for (SInt64 i = from; i < to; i++) {
        double v = x[2 * i + ch];
        sum += v * v;
        if (x[2 * (i - 1) + ch] < 0 && v >= 0) crossings++;
    }
    *rms = sqrt(sum / (double)(to - from));
    *hz = crossings * rate / (double)(to - from);
}

/* The file's own levels, read at its rate: what the conversions must keep. */
static double level[2];

static void checkTone(const char *what, const float *x, SInt64 n, double rate) {
    for (int ch = 0; ch < 2; ch++) {
        double rms, hz, want = level[ch];
        measure(x, n, ch, rate, &rms, &hz);
        EXPECT(fabs(rms - want) < 0.01 * want, "%s channel %d: rms %f, not %f", what, ch, rms, want);
        EXPECT(fabs(hz - 1000) < 1, "%s channel %d: %f Hz", what, ch, hz);
    }
}

/* Writes n frames of x (at rate) into a file of `format` at path; returns the file frames. */
static SInt64 writeFile(const char *path, AudioFileTypeID type, AudioStreamBasicDescription format, double rate, const float *x, SInt64 n) {
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    ExtAudioFileRef w = NULL;
    OSStatus r = ExtAudioFileCreateWithURL(url, type, &format, NULL, kAudioFileFlags_EraseFile, &w);
    CFRelease(url);
    EXPECT(r == noErr && w, "create %s: %d", path, (int)r);
    if (!w) return -1;
    /* A client rate set before another, before any frame: the last one counts. */
    AudioStreamBasicDescription first = floats(rate == 32000 ? 16000 : 32000, 2), client = floats(rate, 2);
    EXPECT(ExtAudioFileSetProperty(w, kExtAudioFileProperty_ClientDataFormat, sizeof first, &first) == noErr, "%s: a first client rate", path);
    EXPECT(ExtAudioFileSetProperty(w, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client) == noErr, "%s: client at %g Hz", path, rate);
    for (SInt64 at = 0; at < n; at += 1500) {
        UInt32 k = (UInt32)(n - at < 1500 ? n - at : 1500);
        AudioBufferList list = { 1, { { 2, k * 8, (void *)(x + 2 * at) } } };
        r = ExtAudioFileWrite(w, k, &list);
        if (r != noErr) { EXPECT(0, "%s: write %d", path, (int)r); break; }
    }
    EXPECT(ExtAudioFileSetProperty(w, kExtAudioFileProperty_ClientDataFormat, sizeof first, &first) == kExtAudioFileError_InvalidOperationOrder,
           "%s: the client's rate cannot change after frames were written", path);
    EXPECT(ExtAudioFileDispose(w) == noErr, "%s: dispose", path);
    /* Read back at the file's rate. */
    url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
    ExtAudioFileRef f = NULL;
    EXPECT(ExtAudioFileOpenURL(url, &f) == noErr && f, "%s: open", path);
    CFRelease(url);
    if (!f) return -1;
    SInt64 length = 0;
    UInt32 size = sizeof length;
    ExtAudioFileGetProperty(f, kExtAudioFileProperty_FileLengthFrames, &size, &length);
    AudioStreamBasicDescription c = floats(format.mSampleRate, 2);
    ExtAudioFileSetProperty(f, kExtAudioFileProperty_ClientDataFormat, sizeof c, &c);
    float *y = malloc(sizeof(float) * 2 * (size_t)(length + 10));
    SInt64 got = readSome(f, length + 10, y);
    EXPECT(got == length, "%s: %lld frames read back of %lld", path, (long long)got, (long long)length);
    checkTone(path, y, got, format.mSampleRate);
    free(y);
    ExtAudioFileDispose(f);
    return length;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: extaudiofile_rate FILE RATE OUT DIR\n"); return 2; }
    const double rate = atof(argv[2]);
    CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)argv[1], (CFIndex)strlen(argv[1]), false);
    ExtAudioFileRef file = NULL;
    EXPECT(ExtAudioFileOpenURL(url, &file) == noErr && file, "open");
    CFRelease(url);
    if (!file) { printf("%d passed, %d failed\n", passed, failed); return 1; }
    AudioStreamBasicDescription ff;
    UInt32 size = sizeof ff;
    ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileDataFormat, &size, &ff);
    SInt64 length = 0;
    size = sizeof length;
    EXPECT(ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileLengthFrames, &size, &length) == noErr && length > 0, "length");
    const SInt64 fr = (SInt64)ff.mSampleRate, cr = (SInt64)rate;
    const SInt64 expected = scaled(length, cr, fr);

    float *own = malloc(sizeof(float) * 2 * (size_t)(length + 10));
    AudioStreamBasicDescription same = floats(ff.mSampleRate, 2);
    ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof same, &same);
    SInt64 ownFrames = readSome(file, length + 10, own);
    EXPECT(ownFrames == length, "%lld frames at the file's rate", (long long)ownFrames);
    for (int ch = 0; ch < 2; ch++) {
        double hz;
        measure(own, ownFrames, ch, ff.mSampleRate, &level[ch], &hz);
        EXPECT(fabs(hz - 1000) < 1 && level[ch] > 0.05, "the file: channel %d at %f Hz, rms %f", ch, hz, level[ch]);
    }
    free(own);
    SInt64 atEnd = -1;
    ExtAudioFileTell(file, &atEnd);
    EXPECT(atEnd == length, "Tell at the file's end: %lld", (long long)atEnd);

    AudioStreamBasicDescription bad = floats(500, 2);
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof bad, &bad) == kExtAudioFileError_InvalidDataFormat, "500 Hz refused");
    AudioStreamBasicDescription client = floats(rate, 2);
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof client, &client) == noErr, "client at %g Hz", rate);
    ExtAudioFileTell(file, &atEnd);
    EXPECT(atEnd == length, "a new client format keeps the position: Tell %lld", (long long)atEnd);
    EXPECT(ExtAudioFileSeek(file, 0) == noErr, "seek 0");
    AudioStreamBasicDescription back;
    size = sizeof back;
    ExtAudioFileGetProperty(file, kExtAudioFileProperty_ClientDataFormat, &size, &back);
    EXPECT(back.mSampleRate == rate, "client format read back: %g Hz", back.mSampleRate);
    SInt64 l2 = 0;
    size = sizeof l2;
    ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileLengthFrames, &size, &l2);
    EXPECT(l2 == length, "FileLengthFrames stays in file frames: %lld", (long long)l2);

    float *ref = malloc(sizeof(float) * 2 * (size_t)(expected + 100)), *x = malloc(sizeof(float) * 2 * 4000);
    SInt64 n = readSome(file, expected + 100, ref);
    EXPECT(n == expected, "%lld client frames read, round(%lld x %lld / %lld) = %lld", (long long)n, (long long)length, (long long)cr, (long long)fr, (long long)expected);
    SInt64 tell = -1;
    ExtAudioFileTell(file, &tell);
    EXPECT(tell == scaled(n, fr, cr), "Tell at the end: %lld", (long long)tell);
    checkTone("read-through", ref, n, rate);
    FILE *out = fopen(argv[3], "wb");
    if (out) { fwrite(ref, sizeof(float) * 2, (size_t)n, out); fclose(out); }

    /* Seeks, in file frames. */
    SInt64 seeks[] = { 0, 1, 147, 1000, 4095, 7000, 8191, 12345, 44100, 65536, length / 2 + 3, length - 3000, 20000, 333 };
    double worst = 0;
    for (unsigned s = 0; s < sizeof seeks / sizeof seeks[0]; s++) {
        SInt64 f = seeks[s];
        if (f < 0 || f >= length) continue;
        SInt64 c = scaled(f, cr, fr);
        EXPECT(ExtAudioFileSeek(file, f) == noErr, "seek %lld", (long long)f);
        ExtAudioFileTell(file, &tell);
        EXPECT(tell == scaled(c, fr, cr), "seek %lld: Tell %lld, not %lld", (long long)f, (long long)tell, (long long)scaled(c, fr, cr));
        if (cr > fr) EXPECT(tell == f, "seek %lld: Tell %lld (upsampling: the frame sought)", (long long)f, (long long)tell);
        SInt64 want = n - c < 2000 ? n - c : 2000;
        SInt64 got = readSome(file, 2000, x);
        EXPECT(got == want, "seek %lld: %lld frames, not %lld", (long long)f, (long long)got, (long long)want);
        double d = 0;
        for (SInt64 i = 0; i < 2 * got && i < 2 * want; i++) d = fmax(d, fabs(x[i] - ref[2 * c + i]));
        if (c < 8192) EXPECT(d == 0, "seek %lld (client frame %lld): differs from the read-through by %g", (long long)f, (long long)c, d);
        worst = fmax(worst, d);
        ExtAudioFileTell(file, &tell);
        EXPECT(tell == scaled(c + got, fr, cr), "seek %lld: Tell after reading %lld", (long long)f, (long long)tell);
        /* Seeking to what Tell says keeps the position; seeking back to it later lands on its
         * own client frame, within RATE / file / 2 client frames of where Tell was asked. */
        SInt64 t0 = tell, at = c + got;
        EXPECT(ExtAudioFileSeek(file, t0) == noErr, "seek to Tell");
        SInt64 again = readSome(file, 100, x);
        int same = again == (n - at < 100 ? n - at : 100);
        for (SInt64 i = 0; same && i < 2 * again; i++) same = fabs(x[i] - ref[2 * at + i]) <= 1e-4;
        EXPECT(same, "seek %lld: seeking to Tell (%lld) resumes at client frame %lld", (long long)f, (long long)t0, (long long)at);
        SInt64 back = scaled(t0, cr, fr);
        EXPECT(llabs(back - at) <= (cr + fr - 1) / fr / 2 + 1, "seek %lld: Tell %lld is client frame %lld, %lld away", (long long)f, (long long)t0, (long long)back, (long long)(back - at));
        EXPECT(ExtAudioFileSeek(file, t0) == noErr, "seek back to the saved Tell");
        again = readSome(file, 100, x);
        same = again == (n - back < 100 ? n - back : 100);
        for (SInt64 i = 0; same && i < 2 * again; i++) same = fabs(x[i] - ref[2 * back + i]) <= 1e-4;
        EXPECT(same, "seek %lld: back to the saved Tell %lld resumes at client frame %lld", (long long)f, (long long)t0, (long long)back);
    }
    /* A mono 16-bit client at the same rate: the read-through's left channel, rounded. */
    AudioStreamBasicDescription mono = {0};
    mono.mSampleRate = rate; mono.mFormatID = kAudioFormatLinearPCM;
    mono.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked;
    mono.mBitsPerChannel = 16; mono.mChannelsPerFrame = 1; mono.mFramesPerPacket = 1; mono.mBytesPerFrame = mono.mBytesPerPacket = 2;
    EXPECT(ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, sizeof mono, &mono) == noErr, "mono 16-bit client");
    EXPECT(ExtAudioFileSeek(file, 0) == noErr, "seek 0 (mono)");
    SInt16 *m16 = malloc(sizeof(SInt16) * (size_t)(n + 100));
    SInt64 monoFrames = 0;
    for (;;) {
        UInt32 k = 3000;
        AudioBufferList l = { 1, { { 1, k * 2, m16 + monoFrames } } };
        if (ExtAudioFileRead(file, &k, &l) != noErr || k == 0) break;
        monoFrames += k;
    }
    double monoWorst = 0;
    for (SInt64 i = 0; i < monoFrames && i < n; i++) monoWorst = fmax(monoWorst, fabs(m16[i] / 32768.0 - ref[2 * i]));
    EXPECT(monoFrames == n && monoWorst <= 1 / 32768.0, "mono 16-bit: %lld frames, %g from the left channel", (long long)monoFrames, monoWorst);
    free(m16);
    printf("max seek difference %g\n", worst);
    EXPECT(worst < 1e-4, "a seek's frames within 1e-4 of the read-through's: %g", worst);
    ExtAudioFileDispose(file);

    /* Writing through a client at `rate` into files at the file's rate. */
    char path[4096];
    AudioStreamBasicDescription wav = floats(ff.mSampleRate, 2);
    snprintf(path, sizeof path, "%s/written.wav", argv[4]);
    SInt64 w = writeFile(path, kAudioFileWAVEType, wav, rate, ref, n);
    EXPECT(w == scaled(n, fr, cr), "WAVE written: %lld frames, not %lld", (long long)w, (long long)scaled(n, fr, cr));
    AudioStreamBasicDescription alac = {0};
    alac.mSampleRate = ff.mSampleRate; alac.mFormatID = kAudioFormatAppleLossless; alac.mChannelsPerFrame = 2;
    snprintf(path, sizeof path, "%s/written-alac.caf", argv[4]);
    w = writeFile(path, kAudioFileCAFType, alac, rate, ref, n);
    EXPECT(w == scaled(n, fr, cr), "ALAC written: %lld frames, not %lld", (long long)w, (long long)scaled(n, fr, cr));
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
