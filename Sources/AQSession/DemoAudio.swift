import Foundation

/// The demo session's audio, synthesized deterministically (no audio is committed): a kick, a
/// hi-hat, a bass line and a stereo chord, four bars at 120 BPM, 48 kHz.
///
/// Thread safety: stateless; any thread.
package enum DemoAudio {
    /// The files ``write(to:)`` makes, in order.
    package static let fileNames = ["kick.wav", "hats.wav", "bass.wav", "chords.wav"]

    /// Writes the demo's files into `folder` (created if needed) and returns their URLs.
    ///
    /// - Throws: ``SessionError`` `.output` when a file cannot be written.
    @discardableResult
    package static func write(to folder: URL) throws(SessionError) -> [URL] {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw SessionError(.output, file: folder.path, "cannot create the folder: \(error.localizedDescription)")
        }
        let rate = 48000.0
        let beat = Int(rate / 2)  // 120 BPM
        let bars = 4
        let frames = beat * 4 * bars
        var urls: [URL] = []
        func emit(_ name: String, channels: Int, _ format: WAVSampleFormat, _ sample: (Int, Int) -> Double) throws(SessionError) {
            let url = folder.appendingPathComponent(name)
            let w = try WAVWriter(url: url, sampleRate: Int(rate), channels: channels, format: format)
            let block = 4096
            let store = UnsafeMutablePointer<Float>.allocate(capacity: block * channels)
            let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            defer { store.deallocate(); planes.deallocate() }
            for c in 0..<channels { planes[c] = store + c * block }
            var f = 0
            while f < frames {
                let n = min(block, frames - f)
                for c in 0..<channels { for i in 0..<n { planes[c][i] = Float(sample(f + i, c)) } }
                try w.write(planar: planes, frames: n)
                f += n
            }
            try w.finish()
            urls.append(url)
        }
        // Kick: a falling sine with a fast decay on every beat.
        try emit("kick.wav", channels: 1, .s16) { f, _ in
            let t = Double(f % beat) / rate
            let phase = 2 * Double.pi * (45 * t + 60 * (1 - exp(-t * 30)) / 30)
            return 0.8 * sin(phase) * exp(-t * 9)
        }
        // Hats: deterministic noise bursts on the off-beats.
        var seed: UInt32 = 0x1234_5678
        try emit("hats.wav", channels: 1, .s16) { f, _ in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let noise = Double(Int32(bitPattern: seed)) / Double(Int32.max)
            let half = beat / 2
            let t = Double((f + half) % beat) / rate
            return (f + half) % beat < half ? 0.25 * noise * exp(-t * 60) : 0
        }
        // Bass: one note a bar (A1, F1, C2, G1), plucked.
        let notes = [55.0, 43.65, 65.41, 49.0]
        try emit("bass.wav", channels: 1, .s24) { f, _ in
            let bar = f / (beat * 4)
            let t = Double(f % (beat * 2)) / rate
            let x = 2 * Double.pi * notes[bar % 4] * Double(f) / rate
            return 0.5 * (sin(x) + 0.3 * sin(2 * x)) * exp(-t * 1.5)
        }
        // Chords: a triad a bar, left and right a little apart.
        let chords: [[Double]] = [[220, 261.63, 329.63], [174.61, 220, 261.63], [261.63, 329.63, 392], [196, 246.94, 293.66]]
        try emit("chords.wav", channels: 2, .f32) { f, c in
            let bar = f / (beat * 4)
            let t = Double(f % (beat * 4)) / rate
            let detune = c == 0 ? 1.0 : 1.003
            let s = chords[bar % 4].reduce(0.0) { $0 + sin(2 * Double.pi * $1 * detune * Double(f) / rate) }
            return 0.12 * s * min(1, t * 20) * exp(-t * 0.6)
        }
        return urls
    }
}
