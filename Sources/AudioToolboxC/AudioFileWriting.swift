// Audio File Services, writing (issue 23): linear PCM into WAVE, RF64, AIFF, AIFC and CAF files
// made by AudioFileCreateWithURL. The caller's bytes go into the file as they are, at the byte or
// packet offset asked for (so the format given must be one the container stores as it is: WAVE
// and RF64 little-endian, AIFF big-endian, AIFC and CAF either); the header is written at
// creation with sizes of 0 (CAF and RF64: -1, "still being written") and its sizes when the file
// is optimized or closed (RF64's in its `ds64` chunk). Compressed packets go to the CAF and M4A
// writers (AudioFilePacketWriting.swift, AudioFileMP4Writing.swift). (AQSession's WAV and CAF writers take planar float frames or encoded
// packets at the end of the file; these files take raw bytes anywhere, so the header layouts are
// written here.) docs/c-api.md, "Audio File Services".
import AQTypes
import CAudioToolbox
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file being written. Used from one thread at a time (the AudioFileID's rule).
final class AudioFileWriteState {
    let storage: any AudioFileStorage
    let fileType: UInt32
    /// The data format (its rate may change before the first packet: `setSampleRate`).
    private(set) var format: SFormat
    /// Where the audio data starts in the file, and the end of what was written (from it).
    let dataOffset: Int64
    private(set) var dataBytes: Int64 = 0
    private var closed = false

    /// Compressed packets in a CAF (AudioFilePacketWriting.swift) or an M4A
    /// (AudioFileMP4Writing.swift); nil for linear PCM.
    let packets: CAFPacketState?
    /// An M4A (or MPEG-4) file: its `moov` is written after the data at close.
    let mp4: Bool
    /// User data (AudioFileUserData.swift): chunks written after the audio data (CAF: after
    /// the packet table) at every optimize and at close, counted in the header's sizes.
    var userData = PendingUserData()
    /// Whether the container has chunks for user data (CAF, WAVE, AIFF; not MPEG-4).
    var acceptsUserData: Bool { !mp4 }

    /// Writes the header into `storage` (a file made for writing, or the caller's callbacks),
    /// which it then owns. Blocks on the storage.
    init(storage: any AudioFileStorage, fileType: UInt32, format: SFormat) throws(AudioFileFailure) {
        let (layout, compressed) = try Self.check(fileType: fileType, format: format)
        self.storage = storage
        self.fileType = fileType
        self.format = format
        self.layout = layout
        packets = compressed ? CAFPacketState() : nil
        mp4 = MP4Writing.isMP4(fileType)
        let header = mp4 ? MP4Writing.header(fileType)
            : compressed ? CAFPacketState.header(format, cookie: [], dataBytes: nil)
            : PCMHeader.bytes(layout, format: format, dataBytes: nil, rf64: fileType == UInt32(kAudioFileRF64Type))
        dataOffset = Int64(header.count)
        guard write(header, at: 0) else {
            closed = true
            storage.close()
            throw AudioFileFailure(status: kAudioFilePermissionsError, "cannot write the header")
        }
    }
    private let layout: PCMHeader.Layout
    /// An RF64 file: WAVE with the `ds64` chunk's 64-bit sizes from the start.
    private var rf64: Bool { fileType == UInt32(kAudioFileRF64Type) }

    /// The header layout for `format` in `fileType` (compressed: packets in a CAF or an M4A), or
    /// the result code refusing it; checked before a file is made.
    static func check(fileType: UInt32, format: SFormat) throws(AudioFileFailure) -> (PCMHeader.Layout, compressed: Bool) {
        if MP4Writing.isMP4(fileType) {
            try MP4Writing.check(format)
            return (.caf, true)
        }
        if fileType == UInt32(kAudioFileCAFType) && CAFPacketState.accepts(format) { return (.caf, true) }
        return (try PCMHeader.check(fileType: fileType, format: format), false)
    }

    deinit { if !closed { storage.close() } }

    /// Appends compressed packets (`descriptions` locate them in `from`); they must follow the
    /// packets written so far (`start`).
    func writePackets(start: Int64, count: Int, descriptions: UnsafePointer<CPacketDescription>?, byteCount: Int, from: UnsafeRawPointer) throws(AudioFileFailure) -> Int {
        guard let packets else { throw AudioFileFailure(status: kAudioFileUnspecifiedError, "not a packet file") }
        guard let descriptions else { throw AudioFileFailure(status: paramError, "compressed packets need their descriptions") }
        guard start == Int64(packets.sizes.count) else {
            throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "packet \(start) written after \(packets.sizes.count): compressed packets are written in order")
        }
        for i in 0..<count {
            let d = descriptions[i]
            let offset = Int(d.mStartOffset), size = Int(d.mDataByteSize)
            guard offset >= 0, size > 0, offset + size <= byteCount else {
                throw AudioFileFailure(status: paramError, "packet description \(i) lies outside the \(byteCount) bytes given")
            }
            guard write(UnsafeRawBufferPointer(start: from + offset, count: size), at: dataOffset + dataBytes) else {
                throw AudioFileFailure(status: kAudioFilePermissionsError, "write failed")
            }
            dataBytes += Int64(size)
            // A format of constant frames per packet counts them all (a reader's description of a
            // last, shorter packet says so in mVariableFramesInPacket; the remainder frames are what
            // trims it); variable ones take the description's.
            packets.add(size: d.mDataByteSize, frames: format.framesPerPacket > 0 ? format.framesPerPacket : d.mVariableFramesInPacket)
        }
        return count
    }

    /// Sets the magic cookie (compressed packets only); it must fit the room kept for it.
    func setCookie(_ cookie: [UInt8]) throws(AudioFileFailure) {
        guard let packets else { throw AudioFileFailure(status: kAudioFileUnsupportedPropertyError, "linear PCM has no magic cookie") }
        if mp4 {
            // Kept for the `moov` written at close: any size.
            packets.cookie = try MP4Writing.fileCookie(cookie, format: format)
            return
        }
        let cookie = CAFPacketState.fileCookie(cookie, format: format)
        guard CAFPacketState.fits(cookie) else {
            throw AudioFileFailure(status: kAudioFileBadPropertySizeError, "a cookie of \(cookie.count) bytes: at most \(CAFPacketState.cookieRoom - 12)")
        }
        packets.cookie = cookie
        guard write(CAFPacketState.room(cookie), at: CAFPacketState.cookieOffset) else {
            throw AudioFileFailure(status: kAudioFilePermissionsError, "write failed")
        }
    }

    /// Sets the rate of a compressed file before its first packet (ExtAudioFile's file format at
    /// rate 0 takes the client's): the header is written again.
    func setSampleRate(_ rate: Double) throws(AudioFileFailure) {
        guard let packets, packets.sizes.isEmpty else {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "the rate is set before the first packet of a compressed file")
        }
        format.sampleRate = rate
        if mp4 { return }  // the rate is in the `moov`, written at close
        guard write(CAFPacketState.header(format, cookie: packets.cookie, dataBytes: nil), at: 0) else {
            throw AudioFileFailure(status: kAudioFilePermissionsError, "header write failed")
        }
    }

    /// Writes `count` bytes of audio data at `start` (from the data's start).
    func writeBytes(start: Int64, count: Int, from: UnsafeRawPointer) throws(AudioFileFailure) {
        guard packets == nil else {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "compressed packets are written with AudioFileWritePackets")
        }
        guard start >= 0 else { throw AudioFileFailure(status: kAudioFileInvalidPacketOffsetError, "negative offset \(start)") }
        guard count > 0 else { return }
        if layout != .caf && !rf64 && dataOffset + start + Int64(count) > Int64(UInt32.max) {
            throw AudioFileFailure(status: kAudioFileDoesNotAllow64BitDataSizeError, "WAVE and AIFF data stop at 4 GiB (kAudioFileRF64Type does not)")
        }
        guard write(UnsafeRawBufferPointer(start: from, count: count), at: dataOffset + start) else {
            throw AudioFileFailure(status: kAudioFilePermissionsError, "write failed")
        }
        dataBytes = max(dataBytes, start + Int64(count))
    }

    /// Writes the header's sizes (AudioFileOptimize, AudioFileClose).
    func updateHeader() throws(AudioFileFailure) {
        if let packets, mp4 {
            // The `mdat` box's size, then the `moov` after the data.
            let moov = MP4Writing.moov(format, packets, dataOffset: dataOffset)
            guard write(MP4Writing.mdatHeader(dataBytes: dataBytes), at: dataOffset - 16),
                  write(moov, at: dataOffset + dataBytes), storage.truncate(dataOffset + dataBytes + Int64(moov.count)) else {
                throw AudioFileFailure(status: kAudioFilePermissionsError, "moov write failed")
            }
            return
        }
        if let packets {
            // The data's size, then the packet table after the data, then the user data.
            let table = packets.packetTable(format) + userData.bytes(caf: true, littleEndian: false)
            guard write(CAFPacketState.header(format, cookie: packets.cookie, dataBytes: dataBytes), at: 0),
                  write(table, at: dataOffset + dataBytes), storage.truncate(dataOffset + dataBytes + Int64(table.count)) else {
                throw AudioFileFailure(status: kAudioFilePermissionsError, "header write failed")
            }
            return
        }
        let caf = layout == .caf
        let wave = layout == .wave || layout == .waveFloat || layout == .waveExtensible
        let trailing = userData.bytes(caf: caf, littleEndian: wave)
        let header = PCMHeader.bytes(layout, format: format, dataBytes: dataBytes, rf64: rf64, trailing: Int64(trailing.count))
        guard write(header, at: 0) else { throw AudioFileFailure(status: kAudioFilePermissionsError, "header write failed") }
        // WAVE and AIFF chunks are padded to an even size.
        let pad: Int64 = !caf && dataBytes % 2 == 1 ? 1 : 0
        if pad == 1 { _ = write([0], at: dataOffset + dataBytes) }
        // The user data after the audio data; a file that had more of it before is cut.
        if !trailing.isEmpty || storage.size > dataOffset + dataBytes + pad {
            guard write(trailing, at: dataOffset + dataBytes + pad),
                  storage.truncate(dataOffset + dataBytes + pad + Int64(trailing.count)) else {
                throw AudioFileFailure(status: kAudioFilePermissionsError, "user data write failed")
            }
        }
    }

    /// Writes the sizes and closes the file.
    func finish() throws(AudioFileFailure) {
        defer {
            storage.close()
            closed = true
        }
        try updateHeader()
    }

    var packetCount: Int64 {
        if let packets { return Int64(packets.sizes.count) }
        return format.bytesPerPacket > 0 ? dataBytes / Int64(format.bytesPerPacket) : 0
    }

    /// Frames written (compressed: every packet's frames).
    var frameCount: Int64 { packets?.totalFrames ?? packetCount }

    private func write(_ bytes: [UInt8], at offset: Int64) -> Bool {
        bytes.withUnsafeBytes { write($0, at: offset) }
    }
    private func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
        storage.write(bytes, at: offset)
    }
}

/// The headers of linear PCM in WAVE, AIFF, AIFC and CAF. Plain functions: any thread.
enum PCMHeader {
    enum Layout { case wave, waveFloat, waveExtensible, aiff, aifc(compression: String), caf }

    /// The header layout for `format` in `fileType`, or the reason it cannot be written.
    static func check(fileType: UInt32, format f: SFormat) throws(AudioFileFailure) -> Layout {
        // RF64 is WAVE with 64-bit sizes: the same formats.
        let fileType = fileType == UInt32(kAudioFileRF64Type) ? UInt32(kAudioFileWAVEType) : fileType
        let wave = UInt32(kAudioFileWAVEType), aiff = UInt32(kAudioFileAIFFType), aifc = UInt32(kAudioFileAIFCType), caf = UInt32(kAudioFileCAFType)
        guard [wave, aiff, aifc, caf].contains(fileType) else {
            throw AudioFileFailure(status: kAudioFileUnsupportedFileTypeError, "writes WAVE, RF64, AIFF, AIFC, CAF and M4A only")
        }
        let flags = f.formatFlags.rawValue
        let isFloat = flags & UInt32(kAudioFormatFlagIsFloat) != 0
        let bigEndian = flags & UInt32(kAudioFormatFlagIsBigEndian) != 0
        let signed = flags & UInt32(kAudioFormatFlagIsSignedInteger) != 0
        let bits = Int(f.bitsPerChannel), channels = Int(f.channelsPerFrame)
        let usable = f.formatID.rawValue == UInt32(kAudioFormatLinearPCM) && f.sampleRate > 0 && channels > 0
            && flags & UInt32(kAudioFormatFlagIsNonInterleaved) == 0 && f.framesPerPacket == 1
            && bits > 0 && bits % 8 == 0 && Int(f.bytesPerFrame) == channels * bits / 8 && f.bytesPerPacket == f.bytesPerFrame
            && (isFloat ? (bits == 32 || bits == 64) : bits <= 32)
        guard usable else {
            throw AudioFileFailure(status: kAudioFileUnsupportedDataFormatError, "writes packed, interleaved linear PCM only (8–32-bit integer, 32/64-bit float)")
        }
        let unsupported = AudioFileFailure(status: kAudioFileUnsupportedDataFormatError, "this container cannot hold \(f)")
        switch fileType {
        case wave:
            // WAVE: little-endian; 8-bit unsigned, wider signed.
            guard !bigEndian || bits == 8 else { throw unsupported }
            guard isFloat || (bits == 8 ? !signed : signed) else { throw unsupported }
            if channels > 2 || (!isFloat && bits > 16 && bits != 24 && bits != 32) { return .waveExtensible }
            return isFloat ? .waveFloat : .wave
        case aiff:
            guard !isFloat, signed, bigEndian || bits == 8 else { throw unsupported }
            return .aiff
        case aifc:
            if isFloat { guard bigEndian else { throw unsupported }; return .aifc(compression: bits == 32 ? "fl32" : "fl64") }
            guard signed else { throw unsupported }
            if bigEndian || bits == 8 { return .aifc(compression: "NONE") }
            guard bits == 16 else { throw unsupported }  // 'sowt' is 16-bit little-endian
            return .aifc(compression: "sowt")
        default:
            // CAF's integers are signed (it has no unsigned flag).
            guard isFloat || signed else { throw unsupported }
            return .caf
        }
    }

    /// The header for `dataBytes` of audio data (nil: not known yet); `rf64`: a WAVE layout as
    /// RF64 (`RF64` and the data chunk's sizes -1, the real ones in a `ds64` chunk after it).
    /// `trailing`: bytes of chunks after the data (user data), counted in RIFF's and FORM's sizes.
    static func bytes(_ layout: Layout, format f: SFormat, dataBytes: Int64?, rf64: Bool = false, trailing: Int64 = 0) -> [UInt8] {
        var b = Bytes()
        let data = dataBytes ?? 0
        let bits = Int(f.bitsPerChannel), channels = Int(f.channelsPerFrame)
        switch layout {
        case .wave, .waveFloat, .waveExtensible:
            let extensible = layout == .waveExtensible
            let fmtSize = extensible ? 40 : 16
            let ds64Size = 28
            let riffSize: Int64 = Int64(4 + (rf64 ? 8 + ds64Size : 0) + 8 + fmtSize + 8) + data + data % 2 + trailing
            if rf64 {
                b.tag("RF64"); b.le32(UInt32.max); b.tag("WAVE")
                b.tag("ds64"); b.le32(UInt32(ds64Size))
                b.le64(UInt64(riffSize)); b.le64(UInt64(data)); b.le64(UInt64(data / Int64(max(1, f.bytesPerFrame))))
                b.le32(0)  // no table of other chunks' sizes
            } else {
                b.tag("RIFF"); b.le32(UInt32(clamping: riffSize)); b.tag("WAVE")
            }
            b.tag("fmt "); b.le32(UInt32(fmtSize))
            let isFloat = f.formatFlags.rawValue & UInt32(kAudioFormatFlagIsFloat) != 0
            b.le16(extensible ? 0xFFFE : (isFloat ? 3 : 1)); b.le16(UInt16(channels))
            b.le32(UInt32(f.sampleRate)); b.le32(UInt32(f.sampleRate) * f.bytesPerFrame)
            b.le16(UInt16(f.bytesPerFrame)); b.le16(UInt16(bits))
            if extensible {
                b.le16(22); b.le16(UInt16(bits)); b.le32(0)  // valid bits, no channel mask
                // KSDATAFORMAT_SUBTYPE_PCM / _IEEE_FLOAT: {0000000X-0000-0010-8000-00aa00389b71}
                b.le32(isFloat ? 3 : 1); b.raw([0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
            }
            b.tag("data"); b.le32(rf64 ? UInt32.max : UInt32(clamping: data))
        case .aiff, .aifc:
            var compression: String?
            if case .aifc(let c) = layout { compression = c }
            let commSize: Int = compression == nil ? 18 : 18 + 4 + 2  // + compression type, empty pstring
            let fixed: Int = 4 + (compression == nil ? 0 : 12) + 8 + commSize + 8 + 8
            let formSize: Int64 = Int64(fixed) + data + data % 2 + trailing
            b.tag("FORM"); b.be32(UInt32(clamping: formSize)); b.tag(compression == nil ? "AIFF" : "AIFC")
            if compression != nil { b.tag("FVER"); b.be32(4); b.be32(0xA280_5140) }
            b.tag("COMM"); b.be32(UInt32(commSize)); b.be16(UInt16(channels))
            b.be32(UInt32(clamping: data / Int64(max(1, f.bytesPerFrame)))); b.be16(UInt16(bits))
            b.raw(extended80(f.sampleRate))
            if let compression { b.tag(compression); b.raw([0, 0]) }
            b.tag("SSND"); b.be32(UInt32(clamping: 8 + data)); b.be32(0); b.be32(0)
        case .caf:
            b.tag("caff"); b.be16(1); b.be16(0)
            b.tag("desc"); b.be64(32)
            b.be64(f.sampleRate.bitPattern); b.tag("lpcm")
            let isFloat = f.formatFlags.rawValue & UInt32(kAudioFormatFlagIsFloat) != 0
            let little = f.formatFlags.rawValue & UInt32(kAudioFormatFlagIsBigEndian) == 0
            b.be32((isFloat ? 1 : 0) | (little ? 2 : 0))
            b.be32(f.bytesPerPacket); b.be32(f.framesPerPacket); b.be32(f.channelsPerFrame); b.be32(f.bitsPerChannel)
            b.tag("data"); b.be64(dataBytes.map { UInt64(4 + $0) } ?? UInt64.max); b.be32(0)  // edit count
        }
        return b.out
    }

    /// An IEEE 754 80-bit extended number (AIFF's sample rate).
    static func extended80(_ v: Double) -> [UInt8] {
        guard v > 0 else { return [UInt8](repeating: 0, count: 10) }
        let exponent = Int(floor(log2(v)))
        let mantissa = UInt64(v / pow(2, Double(exponent - 63)))
        var out = [UInt8]()
        let e = UInt16(exponent + 16383)
        out.append(UInt8(e >> 8)); out.append(UInt8(e & 0xFF))
        for i in (0..<8).reversed() { out.append(UInt8((mantissa >> (UInt64(i) * 8)) & 0xFF)) }
        return out
    }

    /// A little byte builder.
    struct Bytes {
        var out: [UInt8] = []
        mutating func tag(_ s: String) { out += Array(s.utf8) }
        mutating func raw(_ b: [UInt8]) { out += b }
        mutating func le16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        mutating func le32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        mutating func le64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        mutating func be16(_ v: UInt16) { withUnsafeBytes(of: v.bigEndian) { out += $0 } }
        mutating func be32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { out += $0 } }
        mutating func be64(_ v: UInt64) { withUnsafeBytes(of: v.bigEndian) { out += $0 } }
    }
}

extension PCMHeader.Layout: Equatable {}
