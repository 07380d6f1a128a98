// AudioConverterConvertBuffer and AudioConverterConvertComplexBuffer (AudioToolbox/
// AudioConverter.h, issue 23): one linear PCM format to another at the same rate, in one call,
// through the converter's fill with an input procedure of our own that hands over the caller's
// frames. Used from one thread at a time, like the converter.
import CAudioToolbox

/// The caller's interleaved frames not yet handed to the converter.
private struct PCMFeed {
    var data: UnsafeMutableRawPointer
    var frames: Int
    let bytesPerFrame: Int
    let channels: UInt32
}

/// Hands at most the frames asked for, then 0 (the input has ended).
private let feedProc: AudioConverterComplexInputDataProc = { _, ioPackets, ioData, _, user in
    guard let ioPackets, let ioData, let feed = user?.assumingMemoryBound(to: PCMFeed.self) else { return paramError }
    let k = min(Int(ioPackets.pointee), feed.pointee.frames)
    ioPackets.pointee = UInt32(k)
    ioData.pointee.mNumberBuffers = 1
    ioData.pointee.mBuffers = CAudioToolbox.AudioBuffer(mNumberChannels: feed.pointee.channels, mDataByteSize: UInt32(k * feed.pointee.bytesPerFrame), mData: feed.pointee.data)
    feed.pointee.data += k * feed.pointee.bytesPerFrame
    feed.pointee.frames -= k
    return 0
}

extension CConverter {
    /// Converts `frames` interleaved frames at `data` into `list` (room for them all); the
    /// converter's stream starts over before and after. Returns the frames made.
    func convertAll(_ data: UnsafeMutableRawPointer, frames: Int, into list: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>) throws(AudioFileFailure) -> Int {
        let pcm = [UInt32(kAudioFormatLinearPCM), UInt32(kAudioFormatULaw), UInt32(kAudioFormatALaw)]
        guard pcm.contains(input.mFormatID), input.mSampleRate == output.mSampleRate, encoding == nil else {
            throw AudioFileFailure(status: kAudioConverterErr_OperationNotSupported, "converting a buffer takes linear PCM to linear PCM at the same rate (AudioConverterFillComplexBuffer does the rest)")
        }
        reset()
        defer { reset() }
        var feed = PCMFeed(data: data, frames: frames, bytesPerFrame: Int(input.mBytesPerFrame), channels: input.mChannelsPerFrame)
        let (made, status) = try withUnsafeMutablePointer(to: &feed) { p throws(AudioFileFailure) in
            try fill(feedProc, UnsafeMutableRawPointer(p), frames: frames, into: list)
        }
        guard status == 0 else { throw AudioFileFailure(status: status, "converting the buffer") }
        return made
    }
}

/// `AudioConverterConvertBuffer`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterConvertBuffer(_ inAudioConverter: OpaquePointer?, _ inInputDataSize: UInt32, _ inInputData: UnsafeRawPointer?,
                                           _ ioOutputDataSize: UnsafeMutablePointer<UInt32>?, _ outOutputData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inInputData, let ioOutputDataSize, let outOutputData else { return paramError }
    return withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        guard c.output.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) == 0, c.input.mBytesPerFrame > 0, c.output.mBytesPerFrame > 0 else {
            throw AudioFileFailure(status: kAudioConverterErr_OperationNotSupported, "AudioConverterConvertBuffer takes interleaved formats (AudioConverterConvertComplexBuffer takes the others)")
        }
        guard inInputDataSize % c.input.mBytesPerFrame == 0 else {
            throw AudioFileFailure(status: kAudioConverterErr_InvalidInputSize, "\(inInputDataSize) bytes are not whole frames of \(c.input.mBytesPerFrame) bytes")
        }
        let frames = Int(inInputDataSize / c.input.mBytesPerFrame)
        let needed = frames * Int(c.output.mBytesPerFrame)
        guard Int(ioOutputDataSize.pointee) >= needed else {
            throw AudioFileFailure(status: kAudioConverterErr_InvalidOutputSize, "\(frames) frames take \(needed) bytes")
        }
        var list = CAudioToolbox.AudioBufferList(mNumberBuffers: 1, mBuffers: CAudioToolbox.AudioBuffer(mNumberChannels: c.output.mChannelsPerFrame, mDataByteSize: UInt32(needed), mData: outOutputData))
        let made = frames == 0 ? 0 : try c.convertAll(UnsafeMutableRawPointer(mutating: inInputData), frames: frames, into: &list)
        ioOutputDataSize.pointee = UInt32(made * Int(c.output.mBytesPerFrame))
    }
}

/// `AudioConverterConvertComplexBuffer`, exported to C: its contract is in `AudioToolbox/AudioConverter.h`.
@c public func AudioConverterConvertComplexBuffer(_ inAudioConverter: OpaquePointer?, _ inNumberPCMFrames: UInt32,
                                                  _ inInputData: UnsafePointer<CAudioToolbox.AudioBufferList>?,
                                                  _ outOutputData: UnsafeMutablePointer<CAudioToolbox.AudioBufferList>?) -> OSStatus {
    guard let inInputData, let outOutputData else { return paramError }
    return withConverter(inAudioConverter) { c throws(AudioFileFailure) in
        guard c.input.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) == 0 || c.input.mChannelsPerFrame == 1 else {
            throw AudioFileFailure(status: kAudioConverterErr_OperationNotSupported, "a non-interleaved source is not converted here yet")
        }
        guard inInputData.pointee.mNumberBuffers >= 1, let data = inInputData.pointee.mBuffers.mData,
              Int(inInputData.pointee.mBuffers.mDataByteSize) >= Int(inNumberPCMFrames) * Int(c.input.mBytesPerFrame) else {
            throw AudioFileFailure(status: kAudioConverterErr_InvalidInputSize, "the input holds fewer than \(inNumberPCMFrames) frames")
        }
        // The output buffers' sizes say their room; the frames made are all that were given.
        let made = inNumberPCMFrames == 0 ? 0 : try c.convertAll(data, frames: Int(inNumberPCMFrames), into: outOutputData)
        guard made == Int(inNumberPCMFrames) else {
            throw AudioFileFailure(status: kAudioConverterErr_InvalidOutputSize, "room for \(made) of \(inNumberPCMFrames) frames")
        }
    }
}
