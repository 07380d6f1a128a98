import Foundation

/// A minimal RIFF/WAVE reader for the files jack-record and sox write: 32-bit float, or 16-,
/// 24- or 32-bit integer PCM (plain or WAVE_FORMAT_EXTENSIBLE), any channel count, to planar
/// `[[Float]]` (integers scaled to −1…1). Standalone on purpose: it is a test oracle, not the
/// project's parser.
///
/// Thread safety: a plain value; any thread.
package struct WAVFile: Sendable {
    /// Frames per second.
    package var sampleRate: Int
    /// One array of samples per channel, all of the same length.
    package var channels: [[Float]]
    /// Bits per sample in the file.
    package var bitsPerSample: Int
    /// True for IEEE float data.
    package var isFloat: Bool
    /// Frames per channel.
    package var frameCount: Int { channels.first?.count ?? 0 }
    /// Seconds of audio.
    package var duration: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }
}

/// Reads WAV files into ``WAVFile``. Any thread.
package enum WAVReader {
    /// Reads the file at `url`.
    package static func read(_ url: URL) throws(TestingError) -> WAVFile {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw TestingError("cannot read \(url.path): \(error)") }
        return try parse(data, name: url.lastPathComponent)
    }

    /// Parses the bytes of a WAV file (`name` is for messages).
    package static func parse(_ data: Data, name: String = "WAV data") throws(TestingError) -> WAVFile {
        let b = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        guard b.count >= 12, b[0..<4].elementsEqual("RIFF".utf8), b[8..<12].elementsEqual("WAVE".utf8) else {
            throw TestingError("\(name): not a RIFF/WAVE file")
        }
        var fmt: (tag: Int, channels: Int, rate: Int, align: Int, bits: Int)?
        var dataRange: Range<Int>?
        var o = 12
        while o + 8 <= b.count {
            let size = u32(o + 4)
            let body = o + 8
            let end = min(body + size, b.count)  // a recorder killed early may leave a short data chunk
            let id = String(decoding: b[o..<o + 4], as: UTF8.self)
            if id == "fmt " {
                guard size >= 16, body + 16 <= b.count else { throw TestingError("\(name): short fmt chunk") }
                var tag = u16(body)
                if tag == 0xFFFE, size >= 26 { tag = u16(body + 24) }  // extensible: sub-format GUID
                fmt = (tag, u16(body + 2), u32(body + 4), u16(body + 12), u16(body + 14))
            } else if id == "data" {
                dataRange = body..<end
            }
            o = body + size + (size & 1)
        }
        guard let fmt else { throw TestingError("\(name): no fmt chunk") }
        guard let dataRange else { throw TestingError("\(name): no data chunk") }
        guard fmt.channels > 0, fmt.align == fmt.channels * fmt.bits / 8 else {
            throw TestingError("\(name): inconsistent fmt chunk (\(fmt.channels) channels, \(fmt.bits) bits, align \(fmt.align))")
        }
        let isFloat: Bool
        switch (fmt.tag, fmt.bits) {
        case (3, 32): isFloat = true
        case (1, 16), (1, 24), (1, 32): isFloat = false
        default: throw TestingError("\(name): unsupported format tag \(fmt.tag) with \(fmt.bits) bits")
        }
        let frames = dataRange.count / fmt.align
        let bytes = fmt.bits / 8
        var channels = [[Float]](repeating: [Float](repeating: 0, count: frames), count: fmt.channels)
        for f in 0..<frames {
            for c in 0..<fmt.channels {
                let p = dataRange.lowerBound + f * fmt.align + c * bytes
                let v: Float
                switch (isFloat, bytes) {
                case (true, _): v = Float(bitPattern: UInt32(u32(p)))
                case (false, 2): v = Float(Int16(truncatingIfNeeded: u16(p))) / 32768
                case (false, 3): v = Float(Int32(truncatingIfNeeded: (u16(p) | Int(b[p + 2]) << 16) << 8) >> 8) / 8_388_608
                default: v = Float(Int32(truncatingIfNeeded: u32(p))) / 2_147_483_648
                }
                channels[c][f] = v
            }
        }
        return WAVFile(sampleRate: fmt.rate, channels: channels, bitsPerSample: fmt.bits, isFloat: isFloat)
    }
}

/// Finds impulses in recorded audio. Any thread.
package enum ImpulseFinder {
    /// Frame indices in `samples` whose magnitude exceeds `threshold`, in order.
    package static func find(_ samples: [Float], threshold: Float = 0.5) -> [Int] {
        samples.indices.filter { abs(samples[$0]) > threshold }
    }

    /// ``find(_:threshold:)`` for each channel.
    package static func find(channels: [[Float]], threshold: Float = 0.5) -> [[Int]] {
        channels.map { find($0, threshold: threshold) }
    }
}
