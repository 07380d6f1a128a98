// Extended Audio File Services, reading at a client rate other than the file's (issue 23): the
// reader's frames at the file's rate, routed to the client's channels, go through libsoxr
// (AQConvert's RateConverter, the converter AudioConverter uses) on the calling thread.
//
// Positions, as Apple's Q&A QA1609 and header give them: ExtAudioFileSeek and ExtAudioFileTell
// count frames at the FILE's rate. The client's stream of a file of L frames is exactly
// round(L × client / file) frames; file frame F is client frame round(F × client / file) (F's
// time, to the nearest client frame), which is where a read after ExtAudioFileSeek(F) starts,
// and ExtAudioFileTell gives round(C × file / client) for client position C. A Tell right after
// Seek(F) gives F when the client's rate is higher (at a lower one, the file frame nearest F's
// client frame); a seek to what Tell says while the position has not moved keeps the position
// exactly; a seek to a Tell saved earlier lands on that file frame's client frame, which is
// within client / file / 2 client frames of where Tell was asked (between two file frames'
// client frames when the client's rate is higher).
//
// A seek restarts the resampler at a file frame that falls exactly on a client frame (a
// multiple of file / gcd(file, client) frames, whole rates only) at least `margin` client frames
// before the target, and drops the output up to the target: the frames a read then gives are
// the read-through's to within the rounding of libsoxr's arithmetic (docs/c-api.md has the
// measured difference). A seek within the first margin, a seek to the current position, and
// any seek between rates that are not whole numbers restart from the file's first frame and
// give the read-through's frames exactly (at the cost of converting everything before them).
// Used from one thread at a time, like its reader.
import AQConvert
import CAudioToolbox

final class ExtAudioFileRateStage {
    let fileRate: Double
    let clientRate: Double
    let channels: Int
    private let rate: RateConverter
    /// The client's frames in all, for a file of `fileLength` frames.
    let clientLength: Int64
    /// The client frame the next read gives.
    private(set) var clientPosition: Int64 = 0
    /// The next file frame to feed the resampler, and whether its stream must start over first.
    private var fileNext: Int64 = 0
    private var restart = true
    /// Converted frames held: `held`, of which `given` were given out or dropped.
    private let out: [UnsafeMutablePointer<Float>]
    private let outCapacity: Int
    private var held = 0
    private var given = 0
    /// Converted frames still to drop before the client's position (after a restart).
    private var toDrop: Int64 = 0
    private var flushed = false
    /// File frames fed a call.
    static let chunk = 4096
    /// Client frames a restart after a seek begins before the target (the resampler's filter
    /// settles in far fewer: see docs/c-api.md).
    static let margin: Int64 = 8192
    /// File and client frames of one aligned step (nil: rates that are not whole numbers).
    private let step: (file: Int64, client: Int64)?

    /// A stage from `fileRate` to `clientRate` for `channels` planes of a file of `fileLength`
    /// frames. Any thread (allocates).
    init(fileRate: Double, clientRate: Double, channels: Int, fileLength: Int64) throws(AudioFileFailure) {
        self.fileRate = fileRate
        self.clientRate = clientRate
        self.channels = channels
        do { rate = try RateConverter(inputRate: fileRate, outputRate: clientRate, channels: channels) } catch {
            throw AudioFileFailure(status: kExtAudioFileError_InvalidDataFormat, "client format: \(error)")
        }
        clientLength = Int64(rate.outputFrames(forInputFrames: Int(fileLength)))
        if fileRate == fileRate.rounded(), clientRate == clientRate.rounded() {
            let a = Int64(fileRate), b = Int64(clientRate)
            var (x, y) = (a, b)
            while y != 0 { (x, y) = (y, x % y) }
            step = (a / x, b / x)
        } else {
            step = nil
        }
        outCapacity = RateConverter.maximumOutputFrames(inputFrames: Self.chunk, inputRate: fileRate, outputRate: clientRate) + 4096
        let oc = outCapacity
        out = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: oc) }
    }

    deinit { for p in out { p.deallocate() } }

    /// The client frame of file frame `f`: round(f × client / file).
    func clientFrame(ofFile f: Int64) -> Int64 { Int64(rate.outputFrames(forInputFrames: Int(f))) }

    /// ExtAudioFileTell's answer: round(C × file / client) for the client position C, in whole
    /// numbers when the rates are (halves rounded up).
    var fileFrame: Int64 {
        if let step { return (2 * clientPosition * step.file + step.client) / (2 * step.client) }
        return Int64((Double(clientPosition) * fileRate / clientRate).rounded(.toNearestOrAwayFromZero))
    }

    /// ExtAudioFileSeek to file frame `f`: the next read starts at its client frame.
    func seek(toFile f: Int64) {
        // Seeking to what Tell says changes nothing (the position may lie between the client
        // frames of two file frames: F's own client frame is up to client / file / 2 away).
        if f == fileFrame { return }
        let target = clientFrame(ofFile: f)
        if target == clientPosition { return }
        clientPosition = target
        restart = true
    }

    /// Starts the resampler's stream over at an aligned file frame before the client position.
    private func startOver() {
        var m: Int64 = 0
        if let step, clientPosition > Self.margin { m = (clientPosition - Self.margin) / step.client }
        fileNext = m * (step?.file ?? 0)
        toDrop = clientPosition - m * (step?.client ?? 0)
        rate.reset()
        held = 0
        given = 0
        flushed = false
        restart = false
    }

    /// Reads up to `room` client frames into `buffers` (the client's `format`) from frame 0 of
    /// them; `source(at:max:)` gives the reader's routed frames at a file position (the index
    /// into `planes` and the count, 0 at the file's end). Returns the frames read.
    func read(_ room: Int, format: CFormat, buffers: UnsafeMutablePointer<CAudioToolbox.AudioBuffer>, planes: [UnsafeMutablePointer<Float>],
              source: (Int64, Int) throws(AudioFileFailure) -> (Int, Int)) throws(AudioFileFailure) -> Int {
        if restart { startOver() }
        var produced = 0
        while produced < room && clientPosition < clientLength {
            if given < held {
                if toDrop > 0 {
                    let k = Int(min(Int64(held - given), toDrop))
                    given += k
                    toDrop -= Int64(k)
                    continue
                }
                let k = min(held - given, room - produced, Int(clientLength - clientPosition))
                PlanarPCM.store(out, from: given, count: k, at: produced, format: format, channels: channels, buffers: buffers)
                given += k
                produced += k
                clientPosition += Int64(k)
                continue
            }
            if flushed { break }
            let (from, count) = try source(fileNext, Self.chunk)
            if count > 0 {
                let input = planes.map { UnsafePointer($0 + from) }
                held = input.withUnsafeBufferPointer { i in
                    out.withUnsafeBufferPointer { o in rate.process(input: i.baseAddress!, frames: count, output: o.baseAddress!, capacity: outCapacity) }
                }
                given = 0
                fileNext += Int64(count)
            } else {
                held = out.withUnsafeBufferPointer { rate.flush(output: $0.baseAddress!, capacity: outCapacity) }
                given = 0
                if held == 0 { flushed = true }
            }
        }
        return produced
    }
}
