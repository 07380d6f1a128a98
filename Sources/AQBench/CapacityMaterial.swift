import Foundation

/// The file formats `aqsync bench --capacity` measures: each a stereo file of pink noise
/// (−20 dBFS), made with ffmpeg.
///
/// Thread safety: a plain value.
public enum CapacityFormat: String, Sendable, CaseIterable, Codable {
    /// 16-bit PCM WAV at the device's rate.
    case wav
    /// FLAC (16-bit) at the device's rate.
    case flac
    /// MP3 (LAME, 192 kbit/s) at the device's rate.
    case mp3
    /// AAC LC (ffmpeg's encoder, 192 kbit/s) in M4A at the device's rate.
    case aac
    /// 16-bit PCM WAV at 44.1 kHz: converted to the device's rate (48 kHz) by the engine.
    case wav44 = "wav44k"

    var fileExtension: String {
        switch self {
        case .wav, .wav44: "wav"
        case .flac: "flac"
        case .mp3: "mp3"
        case .aac: "m4a"
        }
    }

    /// The file's rate on a device at `deviceRate`.
    func fileRate(deviceRate: Int) -> Int { self == .wav44 ? 44100 : deviceRate }

    var codecArguments: [String] {
        switch self {
        case .wav, .wav44: ["-c:a", "pcm_s16le"]
        case .flac: ["-c:a", "flac", "-sample_fmt", "s16"]
        case .mp3: ["-c:a", "libmp3lame", "-b:a", "192k"]
        case .aac: ["-c:a", "aac", "-b:a", "192k", "-movflags", "+faststart"]
        }
    }

    /// Parses "wav,flac,…". Pure.
    public static func list(_ text: String) -> [CapacityFormat]? {
        let f = text.split(separator: ",").map { CapacityFormat(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
        return f.contains(where: { $0 == nil }) || f.isEmpty ? nil : f.compactMap { $0 }
    }
}

/// Writes `format`'s file of `seconds` into `dir` (once: an existing file is reused) with
/// ffmpeg. Control thread; blocks while ffmpeg runs.
func capacityFile(_ format: CapacityFormat, seconds: Double, deviceRate: Int, in dir: URL) throws -> URL {
    let rate = format.fileRate(deviceRate: deviceRate)
    let url = dir.appendingPathComponent("noise-\(rate)-\(Int(seconds * 1000))ms.\(format.rawValue).\(format.fileExtension)")
    if FileManager.default.fileExists(atPath: url.path) { return url }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=d=\(seconds):c=pink:r=\(rate):a=0.1",
                   "-ac", "2"] + format.codecArguments + [url.path]
    p.standardOutput = FileHandle.nullDevice
    let err = Pipe()
    p.standardError = err
    try p.run()
    let message = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw BenchError("ffmpeg could not write \(url.lastPathComponent): \(String(decoding: message, as: UTF8.self))")
    }
    return url
}

/// A session of `tracks` tracks, every one the file `file` on outputs 1 and 2, track t starting
/// `t × spacing` frames after the session start (0: all at the start); `clientName` for JACK.
/// Returns the session file. Control thread.
func writeCapacitySession(in dir: URL, file: URL, tracks: Int, clientName: String, spacing: Int = 0) throws -> URL {
    var toml = "[output]\nclient_name = \"\(clientName)\"\nchannels = 2\n"
    for t in 0..<tracks {
        toml += "[[track]]\nname = \"t\(t)\"\nfile = \"\(file.path)\"\noutputs = [1, 2]\n"
        if spacing > 0 { toml += "start = \(t * spacing)\n" }
    }
    let url = dir.appendingPathComponent("capacity-\(file.deletingPathExtension().lastPathComponent)-\(tracks)\(spacing > 0 ? "-s\(spacing)" : "").toml")
    try toml.write(to: url, atomically: true, encoding: .utf8)
    return url
}
