import AQTypes
import Testing

@testable import AQConvert

/// libavcodec loaded on first use (issue 25): a decoder made after the lazy load works, the
/// loader says it is loaded, and a library that cannot be loaded gives the documented message
/// (through the loader's probe, which runs the same load on sonames of the test's choosing).
@Suite struct AVCodecLibraryTests {
    @Test func sonamesComeFromTheHeaders() {
        let (avcodec, avutil) = AVCodecLibrary.sonames
        #expect(avcodec.hasPrefix("libavcodec.so.") && Int(avcodec.dropFirst("libavcodec.so.".count)) != nil)
        #expect(avutil.hasPrefix("libavutil.so.") && Int(avutil.dropFirst("libavutil.so.".count)) != nil)
    }

    /// An ALAC stream encoded and decoded back after the load: exact, and the loader says loaded.
    @Test func aDecoderWorksAfterTheLazyLoad() throws {
        let encoder = try PacketEncoder(format: PacketEncoderTests.format(AudioFormatID.appleLossless, channels: 1))
        #expect(AVCodecLibrary.isLoaded)
        #expect(AVCodecLibrary.load() == nil)
        let frames = 4096
        let input = (0..<frames).map { Float(Int16(truncatingIfNeeded: $0 * 7 - 9000)) / 32768 }
        var packets: [[UInt8]] = []
        input.withUnsafeBufferPointer { b in
            var plane = b.baseAddress!
            encoder.encode(&plane, frames: frames, into: &packets)
        }
        encoder.finish(into: &packets)
        let out = try PacketEncoderTests.decode(packets, encoder)
        #expect(Array(out[0].prefix(frames)) == input)
        #expect(PacketDecoder.decodableFormatIDs().contains(AudioFormatID.mpegLayer3))
    }

    @Test func theLoadedLibrariesProbeClean() {
        let (avcodec, avutil) = AVCodecLibrary.sonames
        #expect(AVCodecLibrary.probe(avcodec: avcodec, avutil: avutil) == nil)
    }

    @Test func anAbsentLibraryIsNamedWithDlerror() throws {
        let message = try #require(AVCodecLibrary.probe(avcodec: "libavcodec.so.999", avutil: AVCodecLibrary.sonames.avutil))
        #expect(message.hasPrefix("libavcodec.so.999 could not be loaded: "), "\(message)")
        #expect(message.contains("cannot open shared object file"), "\(message)")
        // The process's own libraries are untouched by a failed probe.
        #expect(AVCodecLibrary.load() == nil)
    }

    /// A library without FFmpeg's functions (libc): the first one missing is named.
    @Test func aMissingFunctionIsNamed() throws {
        let message = try #require(AVCodecLibrary.probe(avcodec: "libc.so.6", avutil: AVCodecLibrary.sonames.avutil))
        #expect(message.hasPrefix("libc.so.6 could not be loaded: "), "\(message)")
        #expect(message.contains("avcodec_find_decoder"), "\(message)")
    }
}
