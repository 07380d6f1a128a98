// Audio Converter Services' C functions (AudioToolbox/AudioConverter.h), issue 23: decoding
// (AQConvert's PacketDecoder) or converting linear PCM (PCMDeinterleaver), then routing channels
// and converting the rate (ConverterStage) into the destination's linear PCM (PlanarPCM) or,
// from linear PCM, into AAC or ALAC packets (ConverterEncoding.swift), pulled through the
// caller's input procedure. A converter is used from one thread at a time;
// the procedure runs on that thread.
import AQConvert
import AQTypes
import CAudioToolbox
import Foundation

/// What an `AudioConverterRef` points to. Used from one thread at a time.
final class CConverter {
    let input: CFormat
    /// The destination, completed (an encoder's frames per packet and flags).
    let output: CFormat
    /// The encoding to AAC or ALAC, when the destination is one of them.
    let encoding: ConverterEncoding?
    let channels: Int
    private var decoder: PacketDecoder?
    private let deinterleaver: PCMDeinterleaver?
    private var cookie: [UInt8] = []
    private let planes: [UnsafeMutablePointer<Float>]
    private let capacity: Int
    /// Channel routing and rate conversion after decoding (a pass-through at the same rate and
    /// channel count with the default map).
    let stage: ConverterStage
    /// The input procedure said the input has ended (0 packets, noErr).
    private var sourceEnded = false
    /// kAudioConverterSampleRateConverterQuality and …Complexity as set (libsoxr's
    /// high-quality linear-phase recipe serves them all: docs/c-api.md).
    var rateQuality = UInt32(kAudioConverterQuality_High)
    var rateComplexity = UInt32(kAudioConverterSampleRateConverterComplexity_Normal)
    /// Properties AudioConverterSetProperty takes.
    static let settable: Set<UInt32> = [UInt32(kAudioConverterDecompressionMagicCookie), UInt32(kAudioConverterChannelMap),
                                        UInt32(kAudioConverterSampleRateConverterQuality), UInt32(kAudioConverterSampleRateConverterComplexity)]
    /// kAudioConverterPrimeInfo as set on a converter that is not an encoder. A decoder drops the
    /// first `leadingFrames` decoded frames (the source's priming, as a file's packet table gives
    /// it) after its creation and after each reset; `trailingFrames` is kept and read back and
    /// cuts nothing, as Apple's decoders (Apple's ConvertFile: "the audio converter does not cut
    /// off trailing zeros"). Linear PCM sources keep both and use neither.
    var prime = AudioConverterPrimeInfo(leadingFrames: 0, trailingFrames: 0)
    /// Decoded frames still to drop for `prime.leadingFrames`.
    private var leadingToDrop = 0
    /// Decoded frames held: `held` frames, of which `given` were given out.
    private var held = 0
    private var given = 0
    private static let pcmChunk = 4096

    init(input: CFormat, output: CFormat) throws(AudioFileFailure) {
        self.input = input
        channels = Int(input.mChannelsPerFrame)
        let i = SFormat(c: input)
        guard output.mChannelsPerFrame >= 1, channels >= 1 else {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "no channels")
        }
        var destination = output
        if PacketEncoder.canEncode(SFormat(c: output).formatID) {
            let e = try ConverterEncoding(destination: output, source: i)
            encoding = e
            destination = e.format
        } else {
            encoding = nil
        }
        self.output = destination
        stage = try ConverterStage(inChannels: channels, outChannels: Int(destination.mChannelsPerFrame), inRate: input.mSampleRate, outRate: destination.mSampleRate)
        if encoding == nil, let problem = ExtAudioFileReader.clientFormatProblem(output, file: i, converting: true) {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "destination: \(problem)")
        }
        if i.formatID == AudioFormatID.linearPCM || i.formatID == AudioFormatID.uLaw || i.formatID == AudioFormatID.aLaw {
            do { deinterleaver = try PCMDeinterleaver(format: i) } catch {
                throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "source: \(error)")
            }
            capacity = Self.pcmChunk
        } else {
            guard PacketDecoder.canDecode(i) else {
                throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "source '\(i.formatID)' is not decoded here")
            }
            deinterleaver = nil
            capacity = max(PacketDecoder.maximumFramesPerPacket(i), 1)
        }
        let frames = capacity
        planes = (0..<max(1, channels)).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
    }

    deinit { for p in planes { p.deallocate() } }

    var ref: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    func setCookie(_ bytes: [UInt8]) {
        cookie = bytes
        decoder = nil  // made with it at the next fill
    }

    /// Sets kAudioConverterPrimeInfo (not an encoder's): from now on the decoder drops the
    /// leading frames it has not dropped yet, up to the new count.
    func setPrime(_ p: AudioConverterPrimeInfo) {
        leadingToDrop = max(0, Int(p.leadingFrames) - (Int(prime.leadingFrames) - leadingToDrop))
        prime = p
    }

    func reset() {
        leadingToDrop = Int(prime.leadingFrames)
        decoder = nil
        held = 0
        given = 0
        sourceEnded = false
        stage.reset()
        encoding?.reset()
    }

    /// The decoder, made on first use (after the cookie had its chance to be set).
    private func makeDecoder() throws(AudioFileFailure) -> PacketDecoder {
        if let decoder { return decoder }
        do {
            let d = try PacketDecoder(format: SFormat(c: input), magicCookie: cookie)
            decoder = d
            return d
        } catch {
            throw AudioFileFailure(status: kAudioConverterErr_FormatNotSupported, "decoder: \(error)")
        }
    }

    /// AudioConverterFillComplexBuffer to linear PCM: returns the frames made and the status to answer.
    func fill(_ proc: AudioConverterComplexInputDataProc, _ user: UnsafeMutableRawPointer?, frames wanted: Int,
              into list: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>) throws(AudioFileFailure) -> (Int, OSStatus) {
        let nonInterleaved = output.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        let buffers = UnsafeMutableRawPointer(list).advanced(by: 8).assumingMemoryBound(to: CAudioToolbox.AudioBuffer.self)
        let bufferCount = nonInterleaved ? stage.outChannels : 1
        guard Int(list.pointee.mNumberBuffers) >= bufferCount else { throw AudioFileFailure(status: paramError, "\(bufferCount) buffers needed") }
        var room = wanted
        for b in 0..<bufferCount {
            guard buffers[b].mData != nil else { throw AudioFileFailure(status: paramError, "buffer \(b) has no data") }
            room = min(room, Int(buffers[b].mDataByteSize) / Int(output.mBytesPerFrame))
        }
        guard room > 0 || wanted == 0 else { throw AudioFileFailure(status: kAudioConverterErr_InvalidOutputSize, "no room for a frame") }
        var made = 0
        var status: OSStatus = 0
        let outChannels = stage.outChannels
        while made < room {
            if let s = try refill(proc, user, frames: room - made) {
                status = s
                break
            }
            let k = min(stage.held - stage.given, room - made)
            PlanarPCM.store(stage.out, from: stage.given, count: k, at: made, format: output, channels: outChannels, buffers: buffers)
            stage.gave(k)
            made += k
        }
        for b in 0..<bufferCount { buffers[b].mDataByteSize = UInt32(made * Int(output.mBytesPerFrame)) }
        return (made, status)
    }

    /// Makes converted frames ready in the stage (`stage.given < stage.held`: returns nil),
    /// asking the input procedure for up to `frames` frames of PCM (a packet of a compressed
    /// format) when nothing is held; returns the procedure's status when it is not noErr, and
    /// noErr once the input ended and the stage gave everything.
    func refill(_ proc: AudioConverterComplexInputDataProc, _ user: UnsafeMutableRawPointer?, frames: Int) throws(AudioFileFailure) -> OSStatus? {
        while stage.given >= stage.held {
            if given < held {
                let k = min(held - given, stage.chunk)
                stage.push(planes, from: given, count: k)
                given += k
                continue
            }
            if sourceEnded {
                if stage.ended { return 0 }
                stage.finish()
                continue
            }
            var count: UInt32 = deinterleaver != nil ? UInt32(max(1, min(frames, Self.pcmChunk))) : 1
            var inList = CAudioToolbox.AudioBufferList(mNumberBuffers: 1, mBuffers: CAudioToolbox.AudioBuffer(mNumberChannels: UInt32(channels), mDataByteSize: 0, mData: nil))
            var descriptions: UnsafeMutablePointer<CPacketDescription>? = nil
            let status = proc(ref, &count, &inList, &descriptions, user)
            if status != 0 { return status }
            if count == 0 {
                sourceEnded = true
                continue
            }
            guard let data = inList.mBuffers.mData else { throw AudioFileFailure(status: kAudioConverterErr_InvalidInputSize, "input without data") }
            try take(data, bytes: Int(inList.mBuffers.mDataByteSize), packets: Int(count), descriptions: descriptions)
        }
        return nil
    }

    /// Decodes or converts the input given into the planes (replacing what was given out).
    private func take(_ data: UnsafeMutableRawPointer, bytes: Int, packets: Int, descriptions: UnsafeMutablePointer<CPacketDescription>?) throws(AudioFileFailure) {
        held = 0
        given = 0
        let planePointers = planes
        if let deinterleaver {
            let frames = min(packets, bytes / max(1, Int(input.mBytesPerFrame)), capacity)
            planePointers.withUnsafeBufferPointer { deinterleaver.convert(data, frames: frames, into: $0.baseAddress!, offset: 0) }
            held = frames
            return
        }
        let decoder = try makeDecoder()
        guard packets == 1 else { throw AudioFileFailure(status: kAudioConverterErr_InvalidInputSize, "one packet was asked for") }
        let offset: Int, size: Int, frames: Int
        if let d = descriptions?.pointee {
            (offset, size) = (Int(d.mStartOffset), Int(d.mDataByteSize))
            frames = Int(d.mVariableFramesInPacket > 0 ? d.mVariableFramesInPacket : input.mFramesPerPacket)
        } else if input.mBytesPerPacket > 0 {
            (offset, size, frames) = (0, Int(input.mBytesPerPacket), Int(input.mFramesPerPacket))
        } else {
            throw AudioFileFailure(status: kAudioConverterErr_RequiresPacketDescriptionsError, "compressed input needs its packet descriptions")
        }
        guard offset >= 0, size >= 0, offset + size <= bytes else {
            throw AudioFileFailure(status: kAudioConverterErr_InvalidInputSize, "a packet description outside the input")
        }
        held = planePointers.withUnsafeBufferPointer {
            decoder.decode(UnsafeRawBufferPointer(start: data + offset, count: size), framesIfCorrupt: frames, into: $0.baseAddress!, offset: 0, capacity: capacity)
        }
        if leadingToDrop > 0 {
            // The source's priming (kAudioConverterPrimeInfo): given out to no one.
            given = min(held, leadingToDrop)
            leadingToDrop -= given
        }
    }
}

/// Live converters: one not in the table (never made, or disposed of) is kAudio_ParamError.
enum Converters {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: [UnsafeMutableRawPointer: CConverter] = [:]
    static func get(_ id: OpaquePointer?) -> CConverter? {
        guard let id else { return nil }
        return lock.withLock { live[UnsafeMutableRawPointer(id)] }
    }
}

func withConverter(_ id: OpaquePointer?, _ body: (CConverter) throws(AudioFileFailure) -> Void) -> OSStatus {
    guard let c = Converters.get(id) else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in try body(c) }
}

/// `AudioConverterNew`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterNew(_ inSourceFormat: UnsafePointer<CFormat>?, _ inDestinationFormat: UnsafePointer<CFormat>?,
                                 _ outAudioConverter: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard let inSourceFormat, let inDestinationFormat, let outAudioConverter else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let c = try CConverter(input: inSourceFormat.pointee, output: inDestinationFormat.pointee)
        Converters.lock.withLock { Converters.live[UnsafeMutableRawPointer(c.ref)] = c }
        outAudioConverter.pointee = c.ref
    }
}

/// `AudioConverterNewSpecific`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`
/// (the class descriptions are accepted and not used: one codec a format here). Any thread; does
/// not block.
@c public func AudioConverterNewSpecific(_ inSourceFormat: UnsafePointer<CFormat>?, _ inDestinationFormat: UnsafePointer<CFormat>?,
                                         _ inNumberClassDescriptions: UInt32, _ inClassDescriptions: UnsafePointer<AudioClassDescription>?,
                                         _ outAudioConverter: UnsafeMutablePointer<OpaquePointer?>?) -> OSStatus {
    guard inNumberClassDescriptions == 0 || inClassDescriptions != nil else { return paramError }
    return AudioConverterNew(inSourceFormat, inDestinationFormat, outAudioConverter)
}

/// `AudioConverterDispose`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterDispose(_ inAudioConverter: OpaquePointer?) -> OSStatus {
    guard let inAudioConverter else { return paramError }
    let removed = Converters.lock.withLock { Converters.live.removeValue(forKey: UnsafeMutableRawPointer(inAudioConverter)) }
    return removed == nil ? paramError : 0
}

/// `AudioConverterReset`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterReset(_ inAudioConverter: OpaquePointer?) -> OSStatus {
    withConverter(inAudioConverter) { c throws(AudioFileFailure) in c.reset() }
}

/// A converter property's value in its C layout.
func converterProperty(_ c: CConverter, _ id: UInt32) throws(AudioFileFailure) -> [UInt8] {
    func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    switch Int(id) {
    case Int(kAudioConverterCurrentInputStreamDescription): return of(c.input)
    case Int(kAudioConverterCurrentOutputStreamDescription): return of(c.output)
    case Int(kAudioConverterPropertyMaximumOutputPacketSize): return of(try c.encoding?.maximumPacketSize() ?? c.output.mBytesPerPacket)
    case Int(kAudioConverterPrimeInfo): return of(try c.encoding?.primeInfo() ?? c.prime)
    case Int(kAudioConverterCompressionMagicCookie), Int(kAudioConverterEncodeBitRate), Int(kAudioConverterCodecQuality):
        guard let e = c.encoding else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "not an encoder") }
        return try e.property(id)
    case Int(kAudioConverterChannelMap): return c.stage.map.flatMap { of(Int32($0)) }
    case Int(kAudioConverterSampleRateConverterQuality): return of(c.rateQuality)
    case Int(kAudioConverterSampleRateConverterComplexity): return of(c.rateComplexity)
    default: throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "property '\(FourCharCode(rawValue: id))' not supported")
    }
}

/// `AudioConverterGetPropertyInfo`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterGetPropertyInfo(_ inAudioConverter: OpaquePointer?, _ inPropertyID: UInt32, _ outSize: UnsafeMutablePointer<UInt32>?,
                                             _ outWritable: UnsafeMutablePointer<Bool>?) -> OSStatus {
    withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        if inPropertyID == UInt32(kAudioConverterDecompressionMagicCookie), c.encoding == nil {
            outWritable?.pointee = true
            outSize?.pointee = 0
            return
        }
        outSize?.pointee = UInt32(try converterProperty(c, inPropertyID).count)
        outWritable?.pointee = CConverter.settable.contains(inPropertyID) || (inPropertyID == UInt32(kAudioConverterEncodeBitRate) && c.encoding?.isAAC == true)
            || (inPropertyID == UInt32(kAudioConverterCodecQuality) && c.encoding != nil)
            || (inPropertyID == UInt32(kAudioConverterPrimeInfo) && c.encoding == nil)
    }
}

/// `AudioConverterGetProperty`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterGetProperty(_ inAudioConverter: OpaquePointer?, _ inPropertyID: UInt32, _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?,
                                         _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioPropertyDataSize, let outPropertyData else { return paramError }
    return withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        try copyProperty(try converterProperty(c, inPropertyID), to: outPropertyData, size: ioPropertyDataSize, tooSmall: kAudioConverterErr_BadPropertySizeError)
    }
}

/// `AudioConverterSetProperty`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterSetProperty(_ inAudioConverter: OpaquePointer?, _ inPropertyID: UInt32, _ inPropertyDataSize: UInt32,
                                         _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        let bytes = inPropertyDataSize == 0 || inPropertyData == nil ? [] : Array(UnsafeRawBufferPointer(start: inPropertyData, count: Int(inPropertyDataSize)))
        func uint32() throws(AudioFileFailure) -> UInt32 {
            guard bytes.count == 4 else { throw AudioFileFailure(status: kAudioConverterErr_BadPropertySizeError, "the property takes 4 bytes") }
            return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        }
        switch Int(inPropertyID) {
        case Int(kAudioConverterEncodeBitRate):
            guard let e = c.encoding else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "not an encoder") }
            try e.setBitRate(Int(try uint32()))
        case Int(kAudioConverterCodecQuality):
            guard let e = c.encoding else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "not an encoder") }
            e.codecQuality = try uint32()
        case Int(kAudioConverterDecompressionMagicCookie):
            guard c.encoding == nil else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "an encoder takes no decompression cookie") }
            c.setCookie(bytes)
        case Int(kAudioConverterPrimeInfo):
            guard c.encoding == nil else { throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "an encoder's prime info is its own") }
            guard bytes.count == MemoryLayout<AudioConverterPrimeInfo>.size else {
                throw AudioFileFailure(status: kAudioConverterErr_BadPropertySizeError, "an AudioConverterPrimeInfo")
            }
            c.setPrime(bytes.withUnsafeBytes { $0.loadUnaligned(as: AudioConverterPrimeInfo.self) })
        case Int(kAudioConverterChannelMap):
            guard bytes.count % 4 == 0 else { throw AudioFileFailure(status: kAudioConverterErr_BadPropertySizeError, "the map is SInt32s") }
            let map = stride(from: 0, to: bytes.count, by: 4).map { i in Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i, as: Int32.self) }) }
            try c.stage.setMap(map)
        case Int(kAudioConverterSampleRateConverterQuality):
            // libsoxr's high-quality recipe serves every quality asked for; the value is kept.
            c.rateQuality = try uint32()
        case Int(kAudioConverterSampleRateConverterComplexity):
            let v = try uint32()
            let known = [kAudioConverterSampleRateConverterComplexity_Linear, kAudioConverterSampleRateConverterComplexity_Normal,
                         kAudioConverterSampleRateConverterComplexity_Mastering, kAudioConverterSampleRateConverterComplexity_MinimumPhase].map { UInt32($0) }
            guard known.contains(v) else { throw AudioFileFailure(status: paramError, "unknown complexity '\(FourCharCode(rawValue: v))'") }
            c.rateComplexity = v
        default:
            throw AudioFileFailure(status: kAudioConverterErr_PropertyNotSupported, "property '\(FourCharCode(rawValue: inPropertyID))' is not settable here")
        }
    }
}

/// `AudioConverterFillComplexBuffer`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterFillComplexBuffer(_ inAudioConverter: OpaquePointer?, _ inInputDataProc: AudioConverterComplexInputDataProc?,
                                               _ inInputDataProcUserData: UnsafeMutableRawPointer?, _ ioOutputDataPacketSize: UnsafeMutablePointer<UInt32>?,
                                               _ outOutputData: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>?,
                                               _ outPacketDescription: UnsafeMutablePointer<CPacketDescription>?) -> OSStatus {
    guard let inInputDataProc, let ioOutputDataPacketSize, let outOutputData else { return paramError }
    var answer: OSStatus = 0
    let result = withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        let wanted = Int(ioOutputDataPacketSize.pointee)
        let (made, status) = c.encoding != nil
            ? try c.fillPackets(inInputDataProc, inInputDataProcUserData, packets: wanted, into: outOutputData, descriptions: outPacketDescription)
            : try c.fill(inInputDataProc, inInputDataProcUserData, frames: wanted, into: outOutputData)
        ioOutputDataPacketSize.pointee = UInt32(made)
        answer = status
    }
    return result != 0 ? result : answer
}
