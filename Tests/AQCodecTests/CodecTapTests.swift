import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// Processing taps on compressed queues (issue 22): the tap sees the decoded audio (after the
/// gapless trim, the decoder's tail included) at the queue's rate, before the rate converter.
@Suite struct CodecTapTests {
    /// 2.5 s of stereo ALAC at 44.1 kHz on a 48 kHz device: a PreEffects tap halving both
    /// channels is heard exactly halved (the rate converter is linear: halving before it
    /// halves after it), and it is handed every decoded frame once.
    @Test func halvingTapOnALACThroughTheRateConverter() throws {
        let fx = try CodecFixtures()
        let f = try CodecPlaybackTests.encode(fx, "tap.caf", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let parsed = try parseFile(cafWithPacketTableFirst([UInt8](try Data(contentsOf: URL(fileURLWithPath: f)))))
        let reference = try renderOffline(parsed, deviceRate: 48000)
        var tapped = 0
        let halved = try renderOffline(parsed, deviceRate: 48000) { q in
            _ = try q.newProcessingTap(flags: .preEffects) { tap, frames, _, _, data in
                for c in 0..<data.count { data[c] = nil }
                let got = try! tap.getSourceAudio(frames: frames, into: data)
                for c in 0..<data.count { for i in 0..<got.frames { data[c]![i] *= 0.5 } }
                tapped += got.frames
                return got.frames
            }
        }
        #expect(tapped == 110_250, "the tap was handed \(tapped) frames (2.5 s at 44.1 kHz)")
        #expect(reference.output[0].contains { abs($0) > 0.1 })  // ffmpeg's sine is at 1/8, plus noise
        for c in 0..<2 { #expect(halved.output[c] == reference.output[c].map { $0 * 0.5 }, "channel \(c)") }
    }
}
