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

extension AudioQueue {
    // MARK: - Properties by ID (AudioQueueGetPropertySize, AudioQueueGetProperty, AudioQueueSetProperty)

    /// The size in bytes of a property's value (`AudioQueueGetPropertySize`), as the reference
    /// lays it out: `IsRunning`, `NumberChannels`, `EnableLevelMetering` a `UInt32` (4);
    /// `SampleRate` a `Float64` (8); `MagicCookie` its bytes; `ChannelLayout` the C
    /// `AudioChannelLayout` (12 + 20 per channel description); the level meters 8 per channel
    /// (two `Float32`); `CurrentDevice` its UTF-8 bytes (on Linux there is no `CFStringRef`).
    /// Any thread but the render thread; does not block.
    /// - Throws: `.invalidProperty` for an unknown ID, `.invalidQueue` for a stale handle.
    public func propertySize(_ rawID: UInt32) throws(AudioQueueError) -> Int {
        try property(rawID).count
    }

    /// A property's value as bytes (`AudioQueueGetProperty`), laid out as
    /// ``propertySize(_:)`` says (integers and floats little-endian). The level meters are
    /// refused with `.invalidProperty` while metering is off.
    /// Any thread but the render thread; does not block.
    public func property(_ rawID: UInt32) throws(AudioQueueError) -> [UInt8] {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        if locked({ disposed }) { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        switch id {
        case .isRunning: return u32(isRunning ? 1 : 0)
        case .deviceSampleRate: return withUnsafeBytes(of: deviceSampleRate.bitPattern.littleEndian) { Array($0) }
        case .deviceNumberChannels: return u32(UInt32(deviceChannelCount))
        case .currentDevice: return Array(currentDevice.utf8)
        case .magicCookie: return magicCookie
        case .channelLayout: return channelLayout.bytes
        case .enableLevelMetering: return u32(isLevelMeteringEnabled ? 1 : 0)
        case .currentLevelMeter, .currentLevelMeterDB:
            let states = try id == .currentLevelMeter ? currentLevelMeter() : currentLevelMeterDB()
            return states.flatMap { u32($0.averagePower.bitPattern) + u32($0.peakPower.bitPattern) }
        }
    }

    /// Sets a property from bytes (`AudioQueueSetProperty`): `MagicCookie`, `ChannelLayout`,
    /// `EnableLevelMetering` (a `UInt32`, 0 or not), `CurrentDevice` (UTF-8 bytes). The others
    /// are read-only (`.invalidProperty`); bytes of the wrong size are `.invalidPropertySize`.
    /// Any thread but the render thread; does not block.
    public func setProperty(_ rawID: UInt32, _ value: [UInt8]) throws(AudioQueueError) {
        guard let id = AudioQueuePropertyID(rawValue: rawID) else {
            throw AudioQueueError(.invalidProperty, "unknown property ID \(rawID)")
        }
        switch id {
        case .magicCookie:
            try setMagicCookie(value)
        case .channelLayout:
            guard let l = AudioChannelLayout(bytes: value) else {
                throw AudioQueueError(.invalidPropertySize, "\(value.count) bytes are not an AudioChannelLayout")
            }
            try setChannelLayout(l)
        case .enableLevelMetering:
            guard value.count == 4 else { throw AudioQueueError(.invalidPropertySize, "EnableLevelMetering is a UInt32 (4 bytes)") }
            try setLevelMeteringEnabled(value.contains { $0 != 0 })
        case .currentDevice:
            guard let uid = String(bytes: value, encoding: .utf8) else {
                throw AudioQueueError(.invalidPropertySize, "CurrentDevice is a UTF-8 device identifier")
            }
            try setCurrentDevice(uid)
        case .isRunning, .deviceSampleRate, .deviceNumberChannels, .currentLevelMeter, .currentLevelMeterDB:
            throw AudioQueueError(.invalidProperty, "\(id) is read-only")
        }
    }

    /// Sets `kAudioQueueProperty_CurrentDevice`. An engine renders on one device, so the only
    /// device a queue can be set to is its engine's (its listeners then run on the calling
    /// thread); another device's identifier is refused with `.invalidDevice` (make an engine on
    /// that device and a queue on it). Any thread but the render thread; does not block.
    public func setCurrentDevice(_ uid: String) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            guard uid == hub.device.uid else {
                throw AudioQueueError(.invalidDevice, "device \(uid) is not this engine's (\(hub.device.uid)); an engine renders on one device")
            }
        }
        notify(.currentDevice)
    }
}
