import AQConvert
import AQCore
import AQTypes
import Foundation

extension AudioChannelLayout {
    /// `kAudioChannelLayoutTag_Mono`
    public static let mono = AudioChannelLayout(tag: AudioChannelLayoutTag.mono)
    /// `kAudioChannelLayoutTag_Stereo`
    public static let stereo = AudioChannelLayout(tag: AudioChannelLayoutTag.stereo)
    /// `kAudioChannelLayoutTag_DiscreteInOrder | n`
    public static func discrete(_ n: Int) -> AudioChannelLayout { AudioChannelLayout(tag: (147 << 16) | UInt32(n)) }
    /// `kAudioChannelLayoutTag_MPEG_5_1_A`: L R C LFE Ls Rs.
    public static let mpeg51A = AudioChannelLayout(tag: (121 << 16) | 6)
    /// `kAudioChannelLayoutTag_MPEG_5_1_B`: L R Ls Rs C LFE.
    public static let mpeg51B = AudioChannelLayout(tag: (122 << 16) | 6)
    /// `kAudioChannelLayoutTag_MPEG_5_1_C`: L C R Ls Rs LFE.
    public static let mpeg51C = AudioChannelLayout(tag: (123 << 16) | 6)
    /// `kAudioChannelLayoutTag_MPEG_5_1_D`: C L R Ls Rs LFE.
    public static let mpeg51D = AudioChannelLayout(tag: (124 << 16) | 6)

    /// Channels the layout describes: the tag's low 16 bits; for
    /// `kAudioChannelLayoutTag_UseChannelDescriptions`, the descriptions; for
    /// `kAudioChannelLayoutTag_UseChannelBitmap`, the bits set.
    public var channelCount: Int {
        switch tag {
        case AudioChannelLayoutTag.useChannelDescriptions: descriptions.count
        case AudioChannelLayoutTag.useChannelBitmap: bitmap.nonzeroBitCount
        default: Int(tag & 0xFFFF)
        }
    }

    /// The device output (0-based) of each channel, in WAVE speaker order (L, R, C, LFE, Ls,
    /// Rs, Lc, Rc, then discrete channels by number); -1 for a speaker the order has no place
    /// for. Known tags: mono, stereo, discrete in order, MPEG 5.1 A–D; channel descriptions by
    /// label (`kAudioChannelLabel_Left` 1 … `RightCenter` 8, `Discrete_n` as `1 << 16 | n`);
    /// channel bitmaps (WAVE's `dwChannelMask`, bit k is output k). Other tags: in order.
    public var speakerOrder: [Int] {
        let n = channelCount
        switch tag {
        case AudioChannelLayout.mpeg51B.tag: return [0, 1, 4, 5, 2, 3]
        case AudioChannelLayout.mpeg51C.tag: return [0, 2, 1, 4, 5, 3]
        case AudioChannelLayout.mpeg51D.tag: return [2, 0, 1, 4, 5, 3]
        case AudioChannelLayoutTag.useChannelDescriptions:
            return descriptions.map { d in
                if d.label >= 1 && d.label <= 8 { return Int(d.label) - 1 }
                if d.label >> 16 == 1 { return Int(d.label & 0xFFFF) }
                return -1
            }
        case AudioChannelLayoutTag.useChannelBitmap:
            return (0..<32).filter { bitmap & (1 << UInt32($0)) != 0 }
        default:
            return Array(0..<n)
        }
    }

    /// The renderer's channel map for this layout on a device of `outputs` channels: speakers
    /// the device lacks are not played; a mono layout plays on every output.
    func channelMap(outputs: Int) -> ChannelMap {
        if tag == AudioChannelLayoutTag.mono { return .standard(channels: 1) }
        return ChannelMap(speakerOrder.map { $0 < outputs ? $0 : -1 })
    }

    /// The C struct's bytes: tag, bitmap, description count, then each description.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        func put(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        put(tag)
        put(bitmap)
        put(UInt32(descriptions.count))
        for d in descriptions {
            put(d.label)
            put(d.flags)
            put(d.coordinate0.bitPattern)
            put(d.coordinate1.bitPattern)
            put(d.coordinate2.bitPattern)
        }
        return out
    }

    /// Reads the C struct's bytes; nil when they are not one.
    init?(bytes: [UInt8]) {
        func get(_ i: Int) -> UInt32 {
            UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        }
        guard bytes.count >= 12 else { return nil }
        let count = Int(get(8))
        guard count <= 64, bytes.count == 12 + 20 * count else { return nil }
        var descriptions: [AudioChannelDescription] = []
        for k in 0..<count {
            let o = 12 + 20 * k
            descriptions.append(AudioChannelDescription(
                label: get(o), flags: get(o + 4),
                coordinates: (Float(bitPattern: get(o + 8)), Float(bitPattern: get(o + 12)), Float(bitPattern: get(o + 16)))))
        }
        self.init(tag: get(0), bitmap: get(4), descriptions: descriptions)
    }
}
