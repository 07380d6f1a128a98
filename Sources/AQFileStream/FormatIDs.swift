import AQTypes

// File types and data formats this parser adds to AQTypes' list (Core Audio's values where
// Core Audio has one).

extension AudioFileTypeID {
    /// RF64 (EBU Tech 3306): WAVE with 64-bit sizes in a `ds64` chunk, `'RF64'`.
    public static let rf64: FourCharCode = "RF64"
    /// BW64 (ITU-R BS.2088): RF64's successor, same layout, `'BW64'`.
    public static let bw64: FourCharCode = "BW64"
    /// Sony Wave64: WAVE with GUID chunk IDs and 64-bit sizes, `'W64f'`.
    public static let wave64: FourCharCode = "W64f"
    /// Native FLAC (`fLaC` stream), `'flac'`.
    public static let flac: FourCharCode = "flac"
}

extension AudioFormatID {
    /// Free Lossless Audio Codec, `'flac'`. Magic cookie: a `dfLa` box body (version/flags,
    /// then the STREAMINFO metadata block).
    public static let flac: FourCharCode = "flac"
}

/// A short, human name for a file type (`"FLAC"`, `"RF64"`), for messages.
/// Thread safety: pure; any thread.
public func fileTypeName(_ t: FourCharCode) -> String {
    switch t {
    case AudioFileTypeID.wave: "WAVE"
    case AudioFileTypeID.rf64: "RF64"
    case AudioFileTypeID.bw64: "BW64"
    case AudioFileTypeID.wave64: "Wave64"
    case AudioFileTypeID.aiff: "AIFF"
    case AudioFileTypeID.aifc: "AIFF-C"
    case AudioFileTypeID.caf: "CAF"
    case AudioFileTypeID.next: "NeXT/Sun"
    case AudioFileTypeID.mp3: "MP3"
    case AudioFileTypeID.mp2: "MPEG Layer II"
    case AudioFileTypeID.mp1: "MPEG Layer I"
    case AudioFileTypeID.aacADTS: "ADTS AAC"
    case AudioFileTypeID.flac: "FLAC"
    case AudioFileTypeID.mpeg4: "MPEG-4"
    case AudioFileTypeID.m4a: "M4A"
    case AudioFileTypeID.ogg: "Ogg"
    default: "'\(t)'"
    }
}

/// File formats recognised by their first bytes that this parser does not read, by name.
/// Returns nil when the bytes start none of them. `v` must hold at least 12 bytes (fewer: nil).
func foreignFormatName(_ v: UnsafeRawBufferPointer) -> String? {
    guard v.count >= 12 else { return nil }
    let head = v.fcc(0)
    switch head {
    case "wvpk": return "WavPack"
    case "MAC ": return "Monkey's Audio (APE)"
    case "MThd": return "Standard MIDI"
    case "DSD ": return "DSF (DSD)"
    case "FRM8": return "DSDIFF (DSD)"
    case "TTA1": return "True Audio (TTA)"
    case "MPCK": return "Musepack"
    case "OFR ": return "OptimFROG"
    default: break
    }
    if v[0] == 0x1A, v[1] == 0x45, v[2] == 0xDF, v[3] == 0xA3 { return "Matroska/WebM" }
    if v[0] == 0x30, v[1] == 0x26, v[2] == 0xB2, v[3] == 0x75 { return "ASF/WMA" }
    if v[0] == 0x23, v[1] == 0x21, v[2] == 0x41, v[3] == 0x4D, v[4] == 0x52 { return "AMR" }
    if v[0] == 0x2E, v[1] == 0x72, v[2] == 0x61, v[3] == 0xFD { return "RealAudio" }
    if v[0] == 0x4D, v[1] == 0x50, v[2] == 0x2B { return "Musepack" }
    return nil
}

/// Inspection of single packets, for readers that need a packet's own frame count.
/// Thread safety: pure; any thread.
public enum PacketInspection {
    /// The frame count an Apple Lossless packet's header states, when the packet says it is
    /// shorter than the format's frames per packet (the last packet of a stream): 3 bits of
    /// element type, 4 of instance, 12 unused, 1 "has size", 2 of shift, 1 "uncompressed",
    /// then 32 bits of frames. Nil when the header has no size or the bytes are too few.
    public static func alacFrames(_ p: UnsafeRawBufferPointer) -> Int? {
        guard p.count >= 7 else { return nil }
        var bits: UInt64 = 0
        for i in 0..<7 { bits = bits << 8 | UInt64(p[i]) }
        func field(_ at: Int, _ n: Int) -> UInt64 { (bits >> UInt64(56 - at - n)) & ((1 << UInt64(n)) - 1) }
        guard field(19, 1) == 1 else { return nil }
        let frames = Int(field(23, 32))
        return frames > 0 ? frames : nil
    }
}
