import AQTesting
import Foundation
import Testing

/// Apple IMA4 through an output queue in C (issue 23, `offline_file.c nodesc`, no server): an
/// AIFC and a CAF made by ffmpeg, read with AudioFileReadPacketData without descriptions into
/// buffers from AudioQueueAllocateBuffer and enqueued with none (constant-size packets need
/// none), rendered offline: exactly ffmpeg's decode, then silence.
@Suite struct CAPIAppleIMA4QueueTests {
    @Test(arguments: ["ima4.aiff", "ima4.caf"])
    func playsWithoutPacketDescriptions(name: String) throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("ima4-queue")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent(name).path
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=1000:sample_rate=44100:duration=1.5 -ac 2 -c:a adpcm_ima_qt '\(file)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/offline_file.c", name: "offline_file-\(name)")
        let r = try CAPI.run(exe, [file, file + ".ours.f32", "nodesc"], environment: ["AQSYNC_DEVICE": "offline"], timeout: 60)
        #expect(r.status == 0 && r.output.contains(" 0 failed"), "\(r.output)")
        let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(file)' -f f32le '\(file).ffmpeg.f32'")
        try #require(d.status == 0, "\(d.output)")
        let ours = try Data(contentsOf: URL(fileURLWithPath: file + ".ours.f32"))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: file + ".ffmpeg.f32"))
        try #require(!theirs.isEmpty && ours.count >= theirs.count, "\(ours.count) bytes rendered, ffmpeg \(theirs.count)")
        #expect(ours.prefix(theirs.count) == theirs, "the render differs from ffmpeg's decode")
        #expect(ours.dropFirst(theirs.count).allSatisfy { $0 == 0 }, "not silence after the file's end")
    }
}
