import AQSession
import AQTesting
import Foundation

/// A session of five tracks in different containers and formats, with impulses at awkward
/// frames (primes, either side of 256-frame periods and of the player's 8192-frame buffers),
/// gains and trims; outputs 1–5. Session and device at 48 kHz; one file at 44.1 kHz.
struct ImpulseSession {
    let dir: TempDir
    let url: URL
    /// Per output channel: (absolute session frame, amplitude) of every impulse that plays,
    /// for the tracks at 48 kHz (outputs 1–4).
    let exact: [[(frame: Int, amplitude: Float)]]
    /// Output 5: the 44.1 kHz track's impulses, at their converted frames.
    let resampled: [Int]
    /// Frames the session lasts.
    let length: Int

    static func make() throws -> ImpulseSession {
        let dir = try TempDir()
        let g1 = Float(pow(10, -6.0 / 20)), g3 = Float(pow(10, -12.0 / 20))
        // T1: WAV int16 mono, start 12347, gain -6 dB, output 1.
        let t1 = try makeImpulseFile(dir, "t1.wav", rate: 48000, frames: 20000, impulses: [[0, 255, 256, 1009, 8191, 8192, 19999]],
                                     encoding: ["-e", "signed-integer", "-b", "16"])
        // T2: AIFF int24 stereo, start "0.5s" (24000), trim_start 7 (the impulse at 3 never plays), outputs 2, 3.
        let t2 = try makeImpulseFile(dir, "t2.aiff", rate: 48000, frames: 12000, impulses: [[3, 7, 4099], [10, 6007, 11999]],
                                     encoding: ["-e", "signed-integer", "-b", "24"])
        // T3: CAF float32 mono, start 1021, trim_end 10 (8990 and 8995 never play), gain -12 dB, output 1.
        let t3 = try makeImpulseFile(dir, "t3.caf", rate: 48000, frames: 9000, impulses: [[2, 1023, 1024, 8989, 8990, 8995]],
                                     encoding: ["-e", "floating-point", "-b", "32"])
        // T4: NeXT/Sun int16 mono, start 4099, output 4.
        let t4 = try makeImpulseFile(dir, "t4.au", rate: 48000, frames: 5000, impulses: [[0, 4999]],
                                     encoding: ["-e", "signed-integer", "-b", "16"])
        // T5: WAV float 44.1 kHz mono, start 30011, output 5: impulses at multiples of 147
        // frames land on whole frames at 48 kHz (q × 160 / 147).
        let t5 = try makeImpulseFile(dir, "t5.wav", rate: 44100, frames: 20000, impulses: [[1470, 7791, 14700]],
                                     encoding: ["-e", "floating-point", "-b", "32"])
        _ = (t1, t2, t3, t4, t5)
        let text = """
            [session]
            name = "impulses"
            sample_rate = 48000
            [output]
            client_name = "aqsession-test"
            channels = 5
            [[track]]
            name = "wav16"
            file = "t1.wav"
            start = 12347
            gain_db = -6.0
            outputs = [1]
            [[track]]
            name = "aiff24"
            file = "t2.aiff"
            start = "0.5s"
            trim_start = 7
            outputs = [2, 3]
            [[track]]
            name = "caf32"
            file = "t3.caf"
            start = 1021
            trim_end = 10
            gain_db = -12
            outputs = [1]
            [[track]]
            name = "next16"
            file = "t4.au"
            start = "00:00:00.085395833"
            outputs = [4]
            [[track]]
            name = "wav441"
            file = "t5.wav"
            start = 30011
            outputs = [5]
            """
        let url = try dir.write("session.toml", text)
        // 0.085395833 s × 48000 = 4098.99998 → 4099.
        var exact: [[(Int, Float)]] = Array(repeating: [], count: 4)
        exact[0] += [0, 255, 256, 1009, 8191, 8192, 19999].map { (12347 + $0, 0.5 * g1) }
        exact[0] += [2, 1023, 1024, 8989].map { (1021 + $0, 0.5 * g3) }
        exact[1] = [7, 4099].map { (24000 + $0 - 7, Float(0.5)) }
        exact[2] = [10, 6007, 11999].map { (24000 + $0 - 7, Float(0.5)) }
        exact[3] = [0, 4999].map { (4099 + $0, Float(0.5)) }
        exact[0].sort { $0.0 < $1.0 }
        let resampled = [1470, 7791, 14700].map { 30011 + $0 * 160 / 147 }
        // Ends: 12347+20000, 24000+11993, 1021+8990, 4099+5000, 30011+round(20000×48000/44100).
        let length = [32347, 35993, 10011, 9099, 30011 + Int((20000.0 * 48000 / 44100).rounded())].max()!
        return ImpulseSession(dir: dir, url: url, exact: exact.map { $0.map { (frame: $0.0, amplitude: $0.1) } }, resampled: resampled, length: length)
    }
}
