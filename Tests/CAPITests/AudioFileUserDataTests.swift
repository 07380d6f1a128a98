import Foundation
import Testing

/// User data through Audio File Services (issue 23): `audiofile_userdata.c` writes WAVE, AIFF
/// and CAF files with chunks after their audio and reads them back, reads the `LIST` chunk of a
/// WAVE ffmpeg wrote; ffmpeg then decodes each written file to the samples written (the
/// header's sizes count the chunks). No server.
@Suite struct AudioFileUserDataTests {
    @Test func chunksWrittenAndReadBack() throws {
        let prefix = try CAPI.prefix()
        let dir = prefix.appendingPathComponent("userdata-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let tagged = dir.appendingPathComponent("tagged.wav")
        let ff = try CAPI.shell("ffmpeg -loglevel error -y -f lavfi -i sine=frequency=440:duration=0.1 -metadata title=aqsync-ud -c:a pcm_s16le '\(tagged.path)'")
        try #require(ff.status == 0, "\(ff.output)")
        let exe = try CAPI.build("Tests/CAPIPrograms/audiofile_userdata.c")
        let r = try CAPI.run(exe, [dir.path, tagged.path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
        // The audio written: byte i is i * 7 + 3 (mono 24-bit; big-endian in the AIFF).
        for (name, format) in [("userdata.wav", "s24le"), ("userdata.aif", "s24be"), ("userdata.caf", "s24le")] {
            let out = dir.appendingPathComponent(name + ".raw")
            let d = try CAPI.shell("ffmpeg -loglevel error -y -i '\(dir.appendingPathComponent(name).path)' -f \(format) -c:a pcm_\(format) '\(out.path)'")
            #expect(d.status == 0, "\(name): \(d.output)")
            let bytes = [UInt8]((try? Data(contentsOf: out)) ?? Data())
            #expect(bytes.count == 3003, "\(name): ffmpeg decoded \(bytes.count) bytes")
            let first = bytes.indices.first { bytes[$0] != UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            #expect(first == nil, "\(name): ffmpeg's decode differs from byte \(first ?? -1)")
        }
    }
}
