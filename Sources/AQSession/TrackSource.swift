import AQConvert
import AQEngine
import Foundation

/// The feeding side of one track: its frames as Float32 at the device's rate, from any frame of
/// the track, with its fades applied on the exact frames. The player enqueues what it produces
/// on a Float32 queue at the device's rate, so the engine converts nothing and a frame's index
/// here is its place on the session's timeline.
///
/// The chain: PCM files through ``AudioFileReader`` and ``PCMDeinterleaver``; compressed files
/// through ``CompressedFileReader`` (the file-stream parser) and ``PacketDecoder``, the decoded
/// frames cut to the gapless window (the file's priming and remainder, `trim_start`,
/// `trim_end`) exactly as the queue's own decoding cuts them; then, when the file's rate is not
/// the device's, a ``RateConverter``; then the fades.
///
/// Positioning (``init(track:deviceRate:length:skip:fadeIn:fadeOut:chunkFrames:)`` with
/// `skip` > 0): PCM seeks the reader to the file frame. Compressed files are parsed from the
/// start (packets are counted, not decoded) up to a pre-roll before the frame: lossless
/// formats (FLAC, ALAC) decode from the packet holding it; MP3, AAC and Opus from
/// ``lossyPrerollPackets`` packets earlier (bit reservoir, overlap), Vorbis and Apple IMA4 from
/// their first packet (libavcodec's IMA4 decoder keeps its running predictor when a packet's
/// 9-bit header is near it: a restart differs, by about −58 dB, for ever); the decoded frames before the exact frame are dropped, so the first frame out is
/// the one the whole stream has there. With rate conversion the converter starts on an input
/// frame whose output frame is whole (a multiple of inputRate / gcd) at least
/// ``converterPrerollFrames`` before the frame, and its output up to the frame is dropped.
///
/// Thread safety: not thread-safe; one thread at a time (made on a control thread, then used
/// by the player's feeder thread).
final class TrackSource {
    /// Packets decoded ahead of the exact frame for lossy codecs.
    static let lossyPrerollPackets: Int64 = 12
    /// Input frames the rate converter runs ahead of the exact frame.
    static let converterPrerollFrames: Int64 = 8192

    let channels: Int
    /// Device frames this source produces in all (from the position it started at).
    let length: Int64
    /// Device frames produced so far.
    private(set) var produced: Int64 = 0
    /// Compressed packets that did not decode (silence of their length in their place), not
    /// counting those of the pre-roll.
    var corruptPackets: Int { max(0, (decoder?.corruptPackets ?? 0) - corruptBaseline) }
    /// True once every frame was produced (or the file ended early).
    var isAtEnd: Bool { produced >= length || (sourceDone && outCount == 0) }

    private let url: URL
    private let fades: Fades
    // PCM
    private let pcm: AudioFileReader?
    private let deinterleaver: PCMDeinterleaver?
    private let raw: UnsafeMutableRawPointer?
    // Compressed
    private let packets: CompressedFileReader?
    private let decoder: PacketDecoder?
    private var framesPerPacket = 0
    private var decodedPosition: Int64 = 0
    private var windowStart: Int64 = 0
    private var windowEnd: Int64 = 0
    private var corruptBaseline = 0
    // File-rate planes.
    private let fileCapacity: Int
    private let filePlanes: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let fileInput: UnsafeMutablePointer<UnsafePointer<Float>>
    private var fileDone = false
    // Rate conversion.
    private let converter: RateConverter?
    private var dropOutput: Int64 = 0
    private var sourceDone = false
    // Device-rate planes, produced and not yet handed out.
    private let outCapacity: Int
    private let outPlanes: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var outHead = 0
    private var outCount = 0
    /// The track's own frame index of the next frame handed out (fades count in it).
    private var trackFrame: Int64

    /// The fades in device frames over a track of `trackLength` frames.
    struct Fades {
        var inLength: Int64 = 0
        var inCurve: FadeCurve = .linear
        var outLength: Int64 = 0
        var outCurve: FadeCurve = .linear
        var trackLength: Int64 = 0
        /// The track's gain points (`gain`), nil: none.
        var envelope: GainEnvelope?

        /// The gain of the track's frame `i` (product of both fades where they overlap, and of
        /// the gain points).
        func gain(_ i: Int64) -> Double {
            var g = envelope?.gain(i) ?? 1
            if i < inLength { g *= inCurve.gain(Double(i) / Double(inLength)) }
            let fromEnd = trackLength - 1 - i
            if fromEnd < outLength { g *= outCurve.gain(Double(fromEnd) / Double(outLength)) }
            return g
        }

        /// True when frames `i..<i+n` all have gain 1.
        func isUnity(_ i: Int64, _ n: Int) -> Bool {
            (envelope?.isUnity ?? true) && i >= inLength && i + Int64(n) <= trackLength - outLength
        }
    }

    /// - Parameters:
    ///   - length: the track's device frames (``Session/deviceLength(of:deviceRate:)``).
    ///   - skip: device frames of the track to skip (0 ..< length).
    /// - Throws: ``SessionError`` for the file, the decoder or the converter.
    init(track: SessionTrack, deviceRate: Double, length trackLength: Int64, skip: Int64, fades: Fades, chunkFrames: Int) throws(SessionError) {
        url = track.file
        self.fades = fades
        trackFrame = skip
        length = trackLength - skip
        let fileRate = track.audio.format.sampleRate
        channels = Int(track.audio.format.channelsPerFrame)
        // Where the file side starts (frames after trim_start) and what the converter drops.
        var fileStart = skip
        var rateConverter: RateConverter?
        if fileRate != deviceRate {
            do {
                rateConverter = try RateConverter(inputRate: fileRate, outputRate: deviceRate, channels: channels)
            } catch {
                throw SessionError(.playback, file: url.path, "track '\(track.name)': \(error.message)")
            }
            fileStart = 0
            if skip > 0, fileRate == fileRate.rounded(), deviceRate == deviceRate.rounded() {
                let g = Self.gcd(Int64(fileRate), Int64(deviceRate))
                let stepIn = Int64(fileRate) / g
                let stepOut = Int64(deviceRate) / g
                let back = (Self.converterPrerollFrames + stepIn - 1) / stepIn
                let k = max(0, skip / stepOut - back)
                fileStart = k * stepIn
                dropOutput = skip - k * stepOut
            } else {
                dropOutput = skip
            }
        }
        converter = rateConverter
        let playable = track.playableFrames
        fileCapacity = max(chunkFrames, 1)
        var fileCap = fileCapacity
        if CompressedFileReader.isCompressed(track.audio.format) {
            let p = try CompressedFileReader(url: track.file)
            let d: PacketDecoder
            do {
                d = try PacketDecoder(format: p.format, magicCookie: p.magicCookie)
            } catch {
                throw SessionError(.unsupportedAudio, file: url.path, "track '\(track.name)': \(error.message)")
            }
            packets = p
            decoder = d
            pcm = nil
            deinterleaver = nil
            raw = nil
            framesPerPacket = Int(p.format.framesPerPacket)
            fileCap = max(fileCap, d.maximumFramesPerPacket * 2)
            let priming = Int64(p.packetTableInfo?.primingFrames ?? 0) + track.trimStart
            windowStart = priming + fileStart
            windowEnd = priming + playable
        } else {
            let r = try AudioFileReader(
                url: track.file, trimStart: track.trimStart + fileStart, frames: playable - fileStart, maximumRequestFrames: fileCapacity)
            let di: PCMDeinterleaver
            do {
                di = try PCMDeinterleaver(format: r.info.format)
            } catch {
                throw SessionError(.unsupportedAudio, file: url.path, "track '\(track.name)': \(error)")
            }
            pcm = r
            deinterleaver = di
            raw = .allocate(byteCount: fileCapacity * r.bytesPerFrame, alignment: 16)
            packets = nil
            decoder = nil
        }
        let actualFileCap = fileCap
        filePlanes = .allocate(capacity: channels)
        fileInput = .allocate(capacity: channels)
        for c in 0..<channels {
            filePlanes[c] = .allocate(capacity: actualFileCap)
            fileInput[c] = UnsafePointer(filePlanes[c])
        }
        outCapacity = RateConverter.maximumOutputFrames(inputFrames: actualFileCap, inputRate: fileRate, outputRate: deviceRate) + 8192
        outPlanes = .allocate(capacity: channels)
        for c in 0..<channels { outPlanes[c] = .allocate(capacity: outCapacity) }
        fileCapacityActual = actualFileCap
        if packets != nil { try skipPackets(format: track.audio.format) }
    }

    private let fileCapacityActual: Int

    deinit {
        raw?.deallocate()
        for c in 0..<channels {
            filePlanes[c].deallocate()
            outPlanes[c].deallocate()
        }
        filePlanes.deallocate()
        fileInput.deallocate()
        outPlanes.deallocate()
    }

    static func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }

    /// Compressed: parses (without decoding) the packets wholly before the pre-roll, counting
    /// their frames.
    private func skipPackets(format: AudioStreamBasicDescription) throws(SessionError) {
        guard let packets, let decoder else { return }
        let preroll: Int64
        switch format.formatID {
        case AudioFormatID.flac, AudioFormatID.appleLossless: preroll = 0
        case AudioFormatID.vorbis, AudioFormatID.appleIMA4: preroll = Int64.max / 4
        default: preroll = Self.lossyPrerollPackets * Int64(decoder.maximumFramesPerPacket)
        }
        var target = windowStart - preroll
        guard target > 0 else { return }
        // Decoders whose output after a restart depends on the packet it began on (MP3
        // through libmpg123) begin on a multiple of their alignment, as the first pass did
        // (packet 0): every pass of a loop, every seek, gives the first pass's samples.
        let align = Int64(decoder.restartAlignment) * Int64(decoder.maximumFramesPerPacket)
        if decoder.restartAlignment > 1 && align > 0 { target = target / align * align }
        // Only whole packets of a known length are skipped; the first one that would reach the
        // pre-roll is decoded.
        while true {
            var skipped = false
            let fpp = framesPerPacket
            let position = decodedPosition
            let got: Bool? = try packets.nextPacket { bytes, d in
                let n = Int64(d.variableFramesInPacket > 0 ? Int(d.variableFramesInPacket) : fpp)
                if n > 0 && position + n <= target {
                    skipped = true
                    self.decodedPosition += n
                } else {
                    self.decodeAndKeep(bytes, d)
                }
                return true
            }
            if got == nil { fileDone = true; return }
            if !skipped { return }
        }
    }

    /// Frames decoded and kept but not yet moved on (the first decoded packet after skipping).
    private var pendingFile = 0
    private var pendingFileOffset = 0

    /// Decodes one packet into the file planes (at `pendingFile`), keeping only the gapless
    /// window's frames.
    private func decodeAndKeep(_ bytes: UnsafeRawBufferPointer, _ d: AudioStreamPacketDescription) {
        guard let decoder else { return }
        let framesIfCorrupt = d.variableFramesInPacket > 0 ? Int(d.variableFramesInPacket) : framesPerPacket
        let at = pendingFileOffset + pendingFile
        let n = decoder.decode(bytes, framesIfCorrupt: framesIfCorrupt, into: filePlanes, offset: at, capacity: fileCapacityActual)
        keep(decoded: n, at: at)
        if decodedPosition + Int64(n) <= windowStart { corruptBaseline = decoder.corruptPackets }
        decodedPosition += Int64(n)
    }

    /// Of `n` frames decoded at the file planes' offset `at`, keeps those inside the window.
    private func keep(decoded n: Int, at: Int) {
        let s = decodedPosition
        let from = Int(min(max(windowStart - s, 0), Int64(n)))
        let to = Int(max(min(windowEnd - s, Int64(n)), Int64(from)))
        if pendingFile == 0 {
            pendingFileOffset = to > from ? at + from : 0
        } else if from > 0 || at != pendingFileOffset + pendingFile {
            for c in 0..<channels { (filePlanes[c] + pendingFileOffset + pendingFile).update(from: filePlanes[c] + at + from, count: to - from) }
        }
        pendingFile += to - from
        if s + Int64(n) >= windowEnd { fileDone = true }
    }

    /// Fills the file planes with the next frames at the file's rate; returns false at the end.
    private func readFile() throws(SessionError) -> Bool {
        if let pcm, let deinterleaver, let raw {
            guard !fileDone else { return false }
            let n = try pcm.read(into: raw, maxFrames: fileCapacity)
            if n == 0 || pcm.isAtEnd { fileDone = true }
            if n > 0 { deinterleaver.convert(raw, frames: n, into: filePlanes, offset: 0) }
            pendingFileOffset = 0
            pendingFile = n
            return n > 0
        }
        guard let packets, let decoder else { return false }
        if pendingFile > 0 { return true }
        pendingFileOffset = 0
        while !fileDone && pendingFileOffset + pendingFile + decoder.maximumFramesPerPacket <= fileCapacityActual && pendingFile < fileCapacity {
            let got: Bool? = try packets.nextPacket { bytes, d in
                self.decodeAndKeep(bytes, d)
                return true
            }
            if got == nil {
                let n = decoder.drain(into: filePlanes, offset: pendingFileOffset + pendingFile, capacity: fileCapacityActual)
                if n > 0 {
                    keep(decoded: n, at: pendingFileOffset + pendingFile)
                    decodedPosition += Int64(n)
                }
                fileDone = true
            }
        }
        return pendingFile > 0
    }

    /// Moves the next frames into the device-rate planes (outCount > 0 after, unless at the end).
    private func refill() throws(SessionError) {
        outHead = 0
        outCount = 0
        while outCount == 0 && !sourceDone {
            let had = try readFile()
            if let converter {
                if had {
                    for c in 0..<channels { fileInput[c] = UnsafePointer(filePlanes[c] + pendingFileOffset) }
                    outCount = converter.process(input: fileInput, frames: pendingFile, output: outPlanes, capacity: outCapacity)
                    pendingFile = 0
                } else {
                    outCount = converter.flush(output: outPlanes, capacity: outCapacity)
                    if outCount == 0 { sourceDone = true }
                }
            } else if had {
                for c in 0..<channels { outPlanes[c].update(from: filePlanes[c] + pendingFileOffset, count: pendingFile) }
                outCount = pendingFile
                pendingFile = 0
            } else {
                sourceDone = true
            }
            if dropOutput > 0 && outCount > 0 {
                let d = Int(min(dropOutput, Int64(outCount)))
                dropOutput -= Int64(d)
                outHead = d
                outCount -= d
            }
        }
    }

    /// `n` frames from ``outHead`` of the output planes, interleaved at `dst`, unchanged: mono
    /// and stereo (nearly every track) without the general loop's index arithmetic (it was 7 %
    /// of a 32-track MP3 render's CPU).
    private func interleave(_ n: Int, into dst: UnsafeMutablePointer<Float>) {
        switch channels {
        case 1:
            dst.update(from: outPlanes[0] + outHead, count: n)
        case 2:
            let l = outPlanes[0] + outHead, r = outPlanes[1] + outHead
            for i in 0..<n {
                dst[2 &* i] = l[i]
                dst[2 &* i &+ 1] = r[i]
            }
        default:
            for c in 0..<channels {
                let src = outPlanes[c] + outHead
                for i in 0..<n { dst[i &* channels &+ c] = src[i] }
            }
        }
    }

    /// Writes up to `maxFrames` interleaved Float32 frames to `destination`, fades applied.
    /// - Returns: frames written; 0 at the end.
    func read(into destination: UnsafeMutablePointer<Float>, maxFrames: Int) throws(SessionError) -> Int {
        var written = 0
        while written < maxFrames && produced < length {
            if outCount == 0 {
                try refill()
                if outCount == 0 { break }
            }
            let n = Int(min(Int64(min(outCount, maxFrames - written)), length - produced))
            let dst = destination + written * channels
            if fades.isUnity(trackFrame, n) {
                interleave(n, into: dst)
            } else {
                for c in 0..<channels {
                    let src = outPlanes[c] + outHead
                    for i in 0..<n { dst[i * channels + c] = src[i] * Float(fades.gain(trackFrame + Int64(i))) }
                }
            }
            outHead += n
            outCount -= n
            written += n
            produced += Int64(n)
            trackFrame += Int64(n)
        }
        return written
    }
}
