// Audio File Services, writing compressed packets (issue 23): AAC, HE-AAC, ALAC and MP3 packets
// into a CAF made by AudioFileCreateWithURL, as a recorder writes what its queue encoded. The
// header keeps 4 KiB before the audio data for the magic cookie (`kuki`, set with
// AudioFileSetProperty at any time; the rest is a `free` chunk); packets are appended in order;
// AudioFileClose writes the data chunk's size and the packet table (`pakt`, after the data, as
// ffmpeg writes it; every reader of CAF, this library's too, takes it there).
import AQTypes
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The packets of a compressed CAF being written. Used from one thread at a time.
final class CAFPacketState {
    /// Bytes kept for the `kuki` chunk (and a `free` chunk for the rest) before the audio data.
    static let cookieRoom = 4096
    /// Where the cookie room starts (after the file header and the 32-byte `desc` chunk).
    static let cookieOffset: Int64 = 8 + 12 + 32

    private(set) var sizes: [UInt32] = []
    private(set) var frames: [UInt32] = []
    private(set) var totalFrames: Int64 = 0
    var cookie: [UInt8] = []
    var priming: Int32 = 0
    var remainder: Int32 = 0

    /// The formats whose packets can be written (and read back by the parser).
    static func accepts(_ f: SFormat) -> Bool {
        let ids: [UInt32] = [UInt32(kAudioFormatMPEG4AAC), UInt32(kAudioFormatMPEG4AAC_HE), UInt32(kAudioFormatAppleLossless), UInt32(kAudioFormatMPEGLayer3)]
        return ids.contains(f.formatID.rawValue) && f.bytesPerPacket == 0 && f.framesPerPacket > 0 && f.channelsPerFrame > 0 && f.sampleRate > 0
    }

    /// The header before the audio data: file header, `desc`, the cookie room, the `data` chunk's
    /// header (size -1 until `dataBytes` is known).
    static func header(_ f: SFormat, cookie: [UInt8], dataBytes: Int64?) -> [UInt8] {
        var b = PCMHeader.Bytes()
        b.tag("caff"); b.be16(1); b.be16(0)
        b.tag("desc"); b.be64(32)
        b.be64(f.sampleRate.bitPattern); b.be32(f.formatID.rawValue); b.be32(f.formatFlags.rawValue)
        b.be32(0); b.be32(f.framesPerPacket); b.be32(f.channelsPerFrame); b.be32(f.bitsPerChannel)
        b.raw(room(cookie))
        b.tag("data"); b.be64(dataBytes.map { UInt64(4 + $0) } ?? UInt64.max); b.be32(0)
        return b.out
    }

    /// The cookie room's bytes: a `kuki` chunk (when there is a cookie) and a `free` chunk.
    static func room(_ cookie: [UInt8]) -> [UInt8] {
        var b = PCMHeader.Bytes()
        var used = 0
        if !cookie.isEmpty {
            b.tag("kuki"); b.be64(UInt64(cookie.count)); b.raw(cookie)
            used = 12 + cookie.count
        }
        if used < cookieRoom {
            b.tag("free"); b.be64(UInt64(cookieRoom - used - 12)); b.raw([UInt8](repeating: 0, count: cookieRoom - used - 12))
        }
        return b.out
    }

    /// True when `cookie` fits the room (with a `free` chunk's header after it, or exactly).
    static func fits(_ cookie: [UInt8]) -> Bool {
        let used = 12 + cookie.count
        return used == cookieRoom || used + 12 <= cookieRoom
    }

    /// The cookie a CAF keeps for `format`: AAC's is an MPEG-4 `esds` (version and flags, then
    /// the ES descriptor), as Apple's encoder gives it and ffmpeg reads it; a bare
    /// AudioSpecificConfig (what an ADTS file's cookie is here) is wrapped in one. ALAC's is a
    /// `frma` atom then the `alac` atom (as ffmpeg writes it in CAF); an MP4's bare `alac` atom
    /// gets the `frma` atom before it. Others as given.
    static func fileCookie(_ cookie: [UInt8], format f: SFormat) -> [UInt8] {
        if f.formatID.rawValue == UInt32(kAudioFormatAppleLossless) {
            guard cookie.count >= 36, Array(cookie[4..<8]) == Array("alac".utf8) else { return cookie }
            return [0, 0, 0, 12] + Array("frmaalac".utf8) + cookie
        }
        let aac = f.formatID.rawValue == UInt32(kAudioFormatMPEG4AAC) || f.formatID.rawValue == UInt32(kAudioFormatMPEG4AAC_HE)
        guard aac, !cookie.isEmpty, cookie.count < 100, cookie[0] != 0x03, !(cookie.count > 4 && cookie[0..<4] == [0, 0, 0, 0]) else { return cookie }
        let decoderSpecific: [UInt8] = [0x05, UInt8(cookie.count)] + cookie
        let decoderConfig: [UInt8] = [0x04, UInt8(13 + decoderSpecific.count), 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] + decoderSpecific
        let slConfig: [UInt8] = [0x06, 0x01, 0x02]
        let es: [UInt8] = [0x03, UInt8(3 + decoderConfig.count + slConfig.count), 0x00, 0x00, 0x00] + decoderConfig + slConfig
        return [0, 0, 0, 0] + es
    }

    /// Counts a packet written.
    func add(size: UInt32, frames f: UInt32) {
        sizes.append(size)
        frames.append(f)
        totalFrames += Int64(f)
    }

    /// The `pakt` chunk: counts, valid frames, priming and remainder, then each packet's size
    /// (and its frames when the format's packets vary in frames), as variable-length integers.
    func packetTable(_ f: SFormat) -> [UInt8] {
        var body = PCMHeader.Bytes()
        body.be64(UInt64(sizes.count))
        body.be64(UInt64(max(0, totalFrames - Int64(priming) - Int64(remainder))))
        body.be32(UInt32(bitPattern: priming)); body.be32(UInt32(bitPattern: remainder))
        for (i, s) in sizes.enumerated() {
            body.raw(Self.varint(s))
            if f.framesPerPacket == 0 { body.raw(Self.varint(frames[i])) }
        }
        var b = PCMHeader.Bytes()
        b.tag("pakt"); b.be64(UInt64(body.out.count)); b.raw(body.out)
        return b.out
    }

    /// CAF's variable-length integer: seven bits a byte, most significant first, the high bit set
    /// on every byte but the last.
    static func varint(_ v: UInt32) -> [UInt8] {
        var out = [UInt8(v & 0x7F)]
        var rest = v >> 7
        while rest > 0 {
            out.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return out
    }
}
