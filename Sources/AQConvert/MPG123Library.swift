import AQTypes
import CMPG123

/// libmpg123, opened at run time on first use (issue 25): ``PacketDecoder`` decodes MPEG Layer
/// III with it when it loads (docs/codecs.md, "MP3 through libmpg123"), at about two thirds of
/// libavcodec's CPU time per track-second; nothing links it.
///
/// Thread safety: any thread but the render thread. The first ``load()`` blocks while the library
/// opens (milliseconds); concurrent first calls wait for the one load; later calls return at once.
public enum MPG123Library {
    /// The library opened: `libmpg123.so.0`. Any thread.
    public static var soname: String { String(cString: aq_mpg123_soname()) }

    /// Opens the library on the first call. Returns nil once it is loaded, else why not
    /// ("libmpg123.so.0 could not be loaded: <dlerror>"); every later call gives the same answer.
    /// Blocks on the first call (see the type); never the render thread.
    public static func load() -> String? {
        if aq_mpg123_load() { return nil }
        return aq_mpg123_load_error().map { String(cString: $0) } ?? "\(soname) could not be loaded"
    }

    /// Runs the same load on the library named, into a table of its own that it then closes:
    /// nil when it opens and has every function used, else the message ``load()`` would give.
    /// For tests and diagnostics. Blocks for dlopen.
    public static func probe(soname: String) -> String? {
        var message = [CChar](repeating: 0, count: 512)
        if aq_mpg123_probe(soname, &message, message.count) == 0 { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One MPEG Layer III stream through libmpg123, packet by packet, into planar Float32: the
/// libmpg123 side of ``PacketDecoder``. Not thread-safe (the decoder's thread).
final class MPG123Stream {
    private let stream: OpaquePointer
    /// Interleaved frames as libmpg123 writes them, before they are split into planes.
    private let interleaved: UnsafeMutablePointer<Float>
    /// Splits them: interleaved native Float32 at the stream's rate and channel count.
    private let deinterleaver: PCMDeinterleaver
    /// Frames ``interleaved`` holds: four of the largest Layer III packets (one is 1152 frames).
    private static let scratchFrames = 4 * 1152

    /// Nil when libmpg123 is not loaded or refuses the rate or channel count (1 or 2).
    init?(rate: Double, channels: Int) {
        guard aq_mpg123_load(), channels == 1 || channels == 2,
            let split = try? PCMDeinterleaver(format: .linearPCM(sampleRate: rate, channels: UInt32(channels), bits: 32, isFloat: true)),
            let s = aq_mpg123_stream_new(Int(rate.rounded()), Int32(channels), nil)
        else { return nil }
        stream = s
        deinterleaver = split
        interleaved = .allocate(capacity: MPG123Stream.scratchFrames * channels)
    }

    deinit {
        aq_mpg123_stream_free(stream)
        interleaved.deallocate()
    }

    /// Decodes one whole packet into `output`'s planes at `offset` (room up to `capacity`).
    /// Frames written; -1 when the packet did not decode and nothing came out of it. Frames
    /// beyond the room are dropped and added to `dropped`.
    func decode(
        _ bytes: UnsafeRawBufferPointer, into output: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int,
        capacity: Int, dropped: inout Int
    ) -> Int {
        let room = max(0, min(capacity - offset, MPG123Stream.scratchFrames))
        var frames = 0, lost = 0
        let status = aq_mpg123_stream_decode(stream, bytes.baseAddress, bytes.count, interleaved, room, &frames, &lost)
        dropped += lost
        let n = frames
        deinterleaver.convert(interleaved, frames: n, into: output, offset: offset)
        if status < 0 && n == 0 { return -1 }
        return n
    }

    /// Drops the bit reservoir and the synthesis state: the next packet decodes as a stream's first.
    func reset() {
        _ = aq_mpg123_stream_reset(stream)
    }
}
