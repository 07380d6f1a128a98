import CAVCodec

/// libavcodec and libavutil, opened at run time on first use (issue 25): nothing links them, so
/// a process that never decodes or encodes a compressed format starts without them and their
/// dependencies (docs/codecs.md, "Loading libavcodec").
///
/// ``PacketDecoder`` and ``PacketEncoder`` call ``load()`` before their first libavcodec call
/// and report its failure as their `.decoderUnavailable` / `.encoderUnavailable` error (`'fmt?'`).
///
/// Thread safety: any thread but the render thread. The first ``load()`` blocks while the
/// libraries open (milliseconds: disk and relocations); concurrent first calls wait for the one
/// load; later calls return at once.
public enum AVCodecLibrary {
    /// The libraries opened, from the FFmpeg headers compiled against: `libavcodec.so.59` and
    /// `libavutil.so.57` on Debian 12. Any thread.
    public static var sonames: (avcodec: String, avutil: String) {
        (String(cString: aq_avcodec_soname()), String(cString: aq_avutil_soname()))
    }

    /// Opens the libraries on the first call. Returns nil once they are loaded, else why not
    /// ("libavcodec.so.59 could not be loaded: <dlerror>"); every later call gives the same answer.
    /// Blocks on the first call (see the type); never the render thread.
    public static func load() -> String? {
        if aq_avcodec_load() { return nil }
        return aq_avcodec_load_error().map { String(cString: $0) } ?? "\(sonames.avcodec) could not be loaded"
    }

    /// True once a ``load()`` has succeeded. Never loads; any thread, does not block.
    public static var isLoaded: Bool { aq_avcodec_is_loaded() }

    /// Runs the same load on the libraries named, into a table of its own that it then closes
    /// (the process's libraries are untouched): nil when both open and have every function
    /// used, else the message ``load()`` would give. For tests and diagnostics. Blocks for dlopen.
    public static func probe(avcodec: String, avutil: String) -> String? {
        var message = [CChar](repeating: 0, count: 512)
        if aq_avcodec_probe(avcodec, avutil, &message, message.count) == 0 { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
