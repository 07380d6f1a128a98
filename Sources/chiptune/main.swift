// chiptune: the talk "Audio Queue Services"' chiptune player — Game_Music_Emu fills each buffer
// in the output callback; when the track ends the callback stops the queue asynchronously (the
// buffers already queued still play) and the IsRunning listener ends the program. The volume
// and the level meters are shown while it plays.
// Usage: chiptune FILE [--track N] [--seconds N] [--volume V]
// (FILE: any format Game_Music_Emu reads: NSF, SPC, VGM, GBS, ...; N counts from 1.)
import AQEngine
import AQJack
import CGME
import Foundation

func option(_ name: String) -> Double? {
    CommandLine.arguments.firstIndex(of: name).flatMap { i in
        CommandLine.arguments.indices.contains(i + 1) ? Double(CommandLine.arguments[i + 1]) : nil }
}
func say(_ text: String, end: String = "\n") { FileHandle.standardOutput.write(Data((text + end).utf8)) }
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("chiptune: \(message)\n".utf8))
    exit(1)
}
guard CommandLine.arguments.count >= 2, !CommandLine.arguments[1].hasPrefix("-") else {
    fail("usage: chiptune FILE [--track N] [--seconds N] [--volume V]")
}
let path = CommandLine.arguments[1]
let track = Int(option("--track") ?? 1) - 1
let seconds = option("--seconds")
let volume = Float(option("--volume") ?? 0.5)

/// The emulator and the callback's state: touched on the events thread (and here before the
/// start), as the talk's MusicPlayerAudioQueueOutput is on its run loop.
final class MusicPlayer: @unchecked Sendable {
    let format = AudioStreamBasicDescription.linearPCM(sampleRate: 44100, channels: 2, bits: 16)
    let emu: OpaquePointer
    var framesLeft: Int
    var shouldBufferDataInCallback = true
    var stoppedDueToTrackEnding = false

    init(emu: OpaquePointer, seconds: Double?) {
        self.emu = emu
        framesLeft = seconds.map { Int($0 * 44100) } ?? .max / 2  // (× 2 below)
    }

    func handleOutputBuffer(_ queue: AudioQueue, _ buffer: AudioQueueBuffer) {
        if !shouldBufferDataInCallback { return }
        // Samples, not frames: two per frame, as gme_play counts them.
        let count = min(buffer.audioDataBytesCapacity / 2, framesLeft * 2)
        if let error = gme_play(emu, Int32(count), buffer.audioData.assumingMemoryBound(to: Int16.self)) {
            say("chiptune: gme_play: \(String(cString: error))")
            return
        }
        buffer.audioDataByteSize = count * 2
        do { try queue.enqueue(buffer) } catch { say("chiptune: enqueue: \(error)") }
        framesLeft -= count / 2
        // Asynchronous stop: every buffer queued still plays.
        if gme_track_ended(emu) != 0 || framesLeft == 0 {
            shouldBufferDataInCallback = false
            stoppedDueToTrackEnding = gme_track_ended(emu) != 0
            try? queue.stop(immediately: false)
        }
    }
}

var emu: OpaquePointer?
if let error = gme_open_file(path, &emu, 44100) { fail("\(path): \(String(cString: error))") }
guard let emu else { fail("\(path): no emulator") }
guard track >= 0 && track < Int(gme_track_count(emu)) else { fail("\(path) has \(gme_track_count(emu)) track(s)") }
if let error = gme_start_track(emu, Int32(track)) { fail("track \(track + 1): \(String(cString: error))") }
var info: UnsafeMutablePointer<gme_info_t>?
if gme_track_info(emu, &info, Int32(track)) == nil, let i = info?.pointee {
    let name = [i.game, i.song].compactMap { $0.map { String(cString: $0) } }.filter { !$0.isEmpty }.joined(separator: " - ")
    say("chiptune: \(name.isEmpty ? path : name), track \(track + 1) of \(gme_track_count(emu))"
        + (i.length > 0 ? String(format: ", %.1f s", Double(i.length) / 1000) : ""))
    gme_free_info(info)
}

do {
    let engine = try AudioQueueEngine(device: JackDevice(options: JackDeviceOptions(clientName: "chiptune")))
    let player = MusicPlayer(emu: emu, seconds: seconds)
    let queue = try engine.newOutput(format: player.format) { q, b in player.handleOutputBuffer(q, b) }
    let done = DispatchSemaphore(value: 0)
    queue.addPropertyListener(.isRunning) { q, _ in if !q.isRunning { done.signal() } }
    try queue.setParameter(.volume, volume)
    try queue.setLevelMeteringEnabled(true)
    let buffers = try (0..<3).map { _ in try queue.allocateBuffer(capacity: 8192 * 4) }
    for b in buffers { player.handleOutputBuffer(queue, b) }  // prime by calling the callback
    try queue.start()
    // The meters: the peak of each channel since the last line, in dBFS.
    let tty = isatty(STDOUT_FILENO) != 0
    while done.wait(timeout: .now() + (tty ? 0.1 : 0.5)) == .timedOut {
        let peaks = (try? queue.peakSinceLastRead()) ?? []
        let meters = peaks.map { p -> String in
            let db = p > 1e-6 ? 20 * log10(p) : -120
            let cells = max(0, min(20, Int((db + 60) / 3)))
            return "[" + String(repeating: "#", count: cells) + String(repeating: "-", count: 20 - cells) + "]"
                + (db <= -60 ? "  -inf" : String(format: " %5.1f", db))
        }
        let time = queue.currentTime().time.sampleTime / player.format.sampleRate
        let line = String(format: "%6.1f s  volume %.2f  ", time, queue.parameter(.volume)) + meters.joined(separator: " ") + " dBFS"
        say(tty ? "\r" + line + "\u{1B}[K" : line, end: tty ? "" : "\n")
    }
    say(tty ? "\n" : "", end: "")
    say(player.stoppedDueToTrackEnding ? "chiptune: the track ended" : "chiptune: stopped after \(seconds ?? 0) s")
    if let error = queue.error { say("chiptune: stopped: \(error.message)") }
    try queue.dispose(immediately: true)
    engine.close()
    gme_delete(emu)
} catch {
    fail("\(error)")
}
