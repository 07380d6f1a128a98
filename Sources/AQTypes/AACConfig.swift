/// What an MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1) says about an AAC stream's
/// layers: the core (LC) and whether SBR (HE-AAC) and parametric stereo (HE-AAC v2) are signalled
/// present, signalled absent, or not signalled at all (implicit signalling: only the bitstream
/// tells). Issue 23.
///
/// Thread safety: a plain value; use from any thread.
public struct AACStreamConfig: Hashable, Sendable {
    /// The AAC sampling-frequency table (index → Hz).
    public static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
    /// The core's audio object type (2 = AAC LC).
    public var coreObjectType: UInt8
    /// The core's sampling-frequency index (15: an explicit rate, ``coreSampleRate``).
    public var coreSampleRateIndex: UInt8
    /// The core's rate in Hz.
    public var coreSampleRate: Int
    /// The channel configuration (0: a program config element gives the channels).
    public var channelConfiguration: UInt8
    /// SBR signalled present (true), signalled absent (false), or not signalled (nil).
    public var sbr: Bool?
    /// Parametric stereo signalled present (true), absent (false), or not signalled (nil).
    public var ps: Bool?
    /// The SBR output rate when signalled.
    public var extensionSampleRate: Int?

    /// Parses an AudioSpecificConfig (the bytes, not an `esds`). Nil when too short or malformed.
    public init?(audioSpecificConfig asc: [UInt8]) {
        var r = BitReader(asc)
        func objectType() -> UInt8? {
            guard let t = r.read(5) else { return nil }
            if t == 31 { return r.read(6).map { UInt8(32 + $0) } }
            return UInt8(t)
        }
        func rate() -> (UInt8, Int)? {
            guard let i = r.read(4) else { return nil }
            if i == 15 { return r.read(24).map { (15, Int($0)) } }
            guard i < 13 else { return nil }
            return (UInt8(i), Self.sampleRates[Int(i)])
        }
        guard var aot = objectType(), aot != 0, let (ci, cr) = rate(), let ch = r.read(4) else { return nil }
        coreSampleRateIndex = ci
        coreSampleRate = cr
        channelConfiguration = UInt8(ch)
        sbr = nil
        ps = nil
        extensionSampleRate = nil
        if aot == 5 || aot == 29 {
            // Explicit hierarchical signalling: the output rate, then the core's object type.
            sbr = true
            if aot == 29 { ps = true }
            guard let (_, er) = rate(), let core = objectType() else { return nil }
            extensionSampleRate = er
            aot = core
        }
        coreObjectType = aot
        // GASpecificConfig, then the backward-compatible sync extension (0x2B7) if any.
        guard [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(aot) else { return }
        guard let _ = r.read(1), let dependsOnCore = r.read(1) else { return }
        if dependsOnCore == 1 { guard r.read(14) != nil else { return } }
        guard let extensionFlag = r.read(1) else { return }
        guard ch != 0 else { return }  // a program config element follows: not walked
        if aot == 6 || aot == 20 { guard r.read(3) != nil else { return } }
        if extensionFlag == 1 {
            if aot == 22 { guard r.read(16) != nil else { return } }
            if [17, 19, 20, 23].contains(aot) { guard r.read(3) != nil else { return } }
            guard r.read(1) != nil else { return }
        }
        guard sbr == nil, r.left >= 16, r.peek(11) == 0x2B7 else { return }
        _ = r.read(11)
        guard objectType() == 5, let present = r.read(1) else { return }
        if present == 1 {
            guard let (_, er) = rate() else { return }
            sbr = er != cr  // "downsampled" SBR at the core's own rate: treated as the core
            if sbr == true { extensionSampleRate = er }
            if r.left >= 12, r.peek(11) == 0x548 {
                _ = r.read(11)
                ps = r.read(1).map { $0 == 1 }
            }
        } else {
            sbr = false
        }
    }

    /// Whether the stream is taken for HE-AAC: SBR signalled present, or not signalled and the
    /// core at 24 kHz or less (implicit signalling, as Apple's parsers assume: an encoder only
    /// halves the core rate for SBR). A core that carries no SBR data decodes correctly either
    /// way: an HE decoder then only upsamples it.
    public var isHE: Bool {
        guard coreObjectType == 2, outputSampleRate != nil else { return false }
        return sbr ?? (coreSampleRate <= 24000)
    }

    /// Whether the stream is taken for HE-AAC v2 (parametric stereo): HE, a mono core, and PS
    /// not signalled absent. A mono HE-AAC v1 stream decoded as v2 gives its mono on both channels.
    public var isHEv2: Bool { isHE && channelConfiguration == 1 && ps != false }

    /// The SBR output rate: the signalled one, else twice the core's (nil above 96 kHz or when
    /// the rate is not in the table).
    public var outputSampleRate: Int? {
        let r = extensionSampleRate ?? 2 * coreSampleRate
        return Self.sampleRates.contains(r) ? r : nil
    }

    /// An AudioSpecificConfig for a decoder that must decode the stream as the given layers:
    /// the core (LC, `sbr` false: SBR signalled absent, so any SBR data is skipped and the
    /// output is the core at its own rate), HE (`sbr`: SBR signalled present at
    /// ``outputSampleRate``) and, with `ps`, parametric stereo present (else absent).
    /// Nil when the config cannot be rebuilt (a core other than LC, a program config element,
    /// an explicit rate); the caller then uses the stream's own.
    public func decoderConfig(sbr useSBR: Bool, ps usePS: Bool) -> [UInt8]? {
        guard coreObjectType == 2, coreSampleRateIndex < 13, (1...7).contains(channelConfiguration) else { return nil }
        var w = BitWriter()
        w.write(UInt32(coreObjectType), 5)
        w.write(UInt32(coreSampleRateIndex), 4)
        w.write(UInt32(channelConfiguration), 4)
        w.write(0, 3)  // GASpecificConfig: 1024 frames, no core coder, no extension
        w.write(0x2B7, 11)
        w.write(5, 5)
        if useSBR {
            guard let out = outputSampleRate, let i = Self.sampleRates.firstIndex(of: out) else { return nil }
            w.write(1, 1)
            w.write(UInt32(i), 4)
            w.write(0x548, 11)
            w.write(usePS ? 1 : 0, 1)
        } else {
            w.write(0, 1)
        }
        return w.bytes
    }

    /// Core Audio's format list for the stream whose core format is `core`: HE-AAC v2 (`aacp`,
    /// stereo), HE-AAC (`aach`) at the full rate with 2048 frames a packet, when the stream is
    /// taken for them (``isHEv2``, ``isHE``), then the core itself. `coreTag` is the core's
    /// channel layout tag.
    public func formatList(core: AudioStreamBasicDescription, coreTag: UInt32) -> [AudioFormatListItem] {
        var items: [AudioFormatListItem] = []
        if isHE, let out = outputSampleRate {
            func he(_ id: FourCharCode, _ channels: UInt32) -> AudioStreamBasicDescription {
                AudioStreamBasicDescription(
                    sampleRate: Double(out), formatID: id, formatFlags: [], bytesPerPacket: 0,
                    framesPerPacket: 2048, bytesPerFrame: 0, channelsPerFrame: channels, bitsPerChannel: 0)
            }
            if isHEv2 {
                items.append(AudioFormatListItem(format: he(AudioFormatID.mpeg4AAC_HE_V2, 2), channelLayoutTag: AudioChannelLayoutTag.stereo))
            }
            items.append(AudioFormatListItem(format: he(AudioFormatID.mpeg4AAC_HE, core.channelsPerFrame), channelLayoutTag: coreTag))
        }
        items.append(AudioFormatListItem(format: core, channelLayoutTag: coreTag))
        return items
    }
}

struct BitReader {
    let bytes: [UInt8]
    var position = 0
    init(_ b: [UInt8]) { bytes = b }
    var left: Int { bytes.count * 8 - position }
    func peek(_ n: Int) -> UInt32? {
        guard n <= left else { return nil }
        var v: UInt32 = 0
        for k in 0..<n {
            let p = position + k
            v = v << 1 | UInt32((bytes[p >> 3] >> (7 - UInt8(p & 7))) & 1)
        }
        return v
    }
    mutating func read(_ n: Int) -> UInt32? {
        guard let v = peek(n) else { return nil }
        position += n
        return v
    }
}

struct BitWriter {
    var bytes: [UInt8] = []
    var bits = 0
    mutating func write(_ v: UInt32, _ n: Int) {
        for k in stride(from: n - 1, through: 0, by: -1) {
            if bits & 7 == 0 { bytes.append(0) }
            if (v >> UInt32(k)) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(bits & 7) }
            bits += 1
        }
    }
}
