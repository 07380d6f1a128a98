/* audiofile_global.c — issue 23: AudioFileGetGlobalInfo(Size) as programs ask it (which types
 * are read and written, names, extensions, MIME types, the formats and stream descriptions a
 * writable type takes), and every stream description offered for every writable type accepted by
 * AudioFileCreateWithURL (2 channels, 44.1 kHz) in DIR. Prints "N passed, M failed".
 * Usage: audiofile_global DIR */
#include <AudioToolbox/AudioToolbox.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define EXPECT(c, ...) do { if (c) passed++; else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static int contains(const UInt32 *list, UInt32 bytes, UInt32 v) {
    for (UInt32 i = 0; i < bytes / 4; i++) if (list[i] == v) return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    UInt32 size = 0, types[64];
    EXPECT(AudioFileGetGlobalInfoSize(kAudioFileGlobalInfo_ReadableTypes, 0, NULL, &size) == noErr && size >= 14 * 4, "readable size %u", size);
    size = sizeof types;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_ReadableTypes, 0, NULL, &size, types) == noErr && contains(types, size, kAudioFileWAVEType)
           && contains(types, size, kAudioFileMP3Type) && contains(types, size, kAudioFileM4AType) && contains(types, size, kAudioFileFLACType), "readable");
    UInt32 two = 8;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_ReadableTypes, 0, NULL, &two, types) == noErr && two == 8, "as many as fit: %u", two);
    UInt32 writable[16];
    UInt32 writableSize = sizeof writable;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_WritableTypes, 0, NULL, &writableSize, writable) == noErr && writableSize == 28
           && contains(writable, writableSize, kAudioFileM4AType) && contains(writable, writableSize, kAudioFileRF64Type)
           && contains(writable, writableSize, kAudioFileCAFType), "writable: %u bytes", writableSize);

    AudioFileTypeID caf = kAudioFileCAFType, mp3 = kAudioFileMP3Type;
    CFStringRef name = NULL;
    size = sizeof name;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_FileTypeName, sizeof caf, &caf, &size, &name) == noErr && name && CFEqual(name, CFSTR("CAF")), "CAF's name");
    if (name) CFRelease(name);
    CFArrayRef extensions = NULL;
    size = sizeof extensions;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_ExtensionsForType, sizeof mp3, &mp3, &size, &extensions) == noErr && extensions
           && CFArrayGetCount(extensions) == 1 && CFEqual(CFArrayGetValueAtIndex(extensions, 0), CFSTR("mp3")), "MP3's extensions");
    if (extensions) CFRelease(extensions);
    CFStringRef wav = CFSTR("wav"), unknown = CFSTR("xyz"), mime = CFSTR("audio/mpeg");
    size = sizeof types;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_TypesForExtension, sizeof wav, &wav, &size, types) == noErr && contains(types, size, kAudioFileWAVEType), "types for .wav");
    size = sizeof types;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_TypesForExtension, sizeof unknown, &unknown, &size, types) == noErr && size == 0, "types for .xyz: none");
    size = sizeof types;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_TypesForMIMEType, sizeof mime, &mime, &size, types) == noErr && size == 4 && types[0] == kAudioFileMP3Type, "audio/mpeg");
    UInt32 formats[16];
    size = sizeof formats;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableFormatIDs, sizeof caf, &caf, &size, formats) == noErr
           && contains(formats, size, kAudioFormatMPEG4AAC) && contains(formats, size, kAudioFormatAppleLossless), "CAF's formats");
    size = sizeof formats;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableFormatIDs, sizeof mp3, &mp3, &size, formats) == kAudioFileUnsupportedFileTypeError, "MP3 is not written");
    size = sizeof formats;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableFormatIDs, 2, &mp3, &size, formats) == kAudioFileBadPropertySizeError, "specifier size");
    size = sizeof formats;
    EXPECT(AudioFileGetGlobalInfo(0x7a7a7a7a, 0, NULL, &size, formats) == kAudioFileUnsupportedPropertyError, "unknown property");

    /* Every stream description offered is one AudioFileCreateWithURL takes. */
    for (UInt32 t = 0; t < writableSize / 4; t++) {
        size = sizeof formats;
        AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableFormatIDs, 4, &writable[t], &size, formats);
        for (UInt32 k = 0; k < size / 4; k++) {
            AudioFileTypeAndFormatID pair = {writable[t], formats[k]};
            AudioStreamBasicDescription offered[32];
            UInt32 bytes = sizeof offered;
            OSStatus s = AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat, sizeof pair, &pair, &bytes, offered);
            EXPECT(s == noErr && bytes >= sizeof(AudioStreamBasicDescription), "descriptions for %x/%x: %d", writable[t], formats[k], (int)s);
            for (UInt32 i = 0; s == noErr && i < bytes / sizeof offered[0]; i++) {
                AudioStreamBasicDescription f = offered[i];
                f.mSampleRate = 44100;
                f.mChannelsPerFrame = 2;
                UInt32 fsize = sizeof f;
                AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, NULL, &fsize, &f);
                char path[512];
                snprintf(path, sizeof path, "%s/global-%x-%x-%u", argv[1], writable[t], formats[k], i);
                CFURLRef url = CFURLCreateFromFileSystemRepresentation(NULL, (const UInt8 *)path, (CFIndex)strlen(path), false);
                AudioFileID file = NULL;
                s = AudioFileCreateWithURL(url, writable[t], &f, kAudioFileFlags_EraseFile, &file);
                EXPECT(s == noErr, "create %s (flags %x, %u bits): %d", path, f.mFormatFlags, f.mBitsPerChannel, (int)s);
                if (file) AudioFileClose(file);
                CFRelease(url);
            }
        }
    }
    AudioFileTypeAndFormatID wrong = {kAudioFileWAVEType, kAudioFormatMPEG4AAC};
    AudioStreamBasicDescription none[4];
    size = sizeof none;
    EXPECT(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat, sizeof wrong, &wrong, &size, none) == kAudioFileUnsupportedDataFormatError, "AAC in WAVE");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
