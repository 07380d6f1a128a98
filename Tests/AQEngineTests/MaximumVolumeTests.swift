import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `AudioQueue.setMaximumVolume`: a Swift caller's volumes above unity (a session's track
/// gains), while a queue left alone keeps Apple's 0…1.
@Suite struct MaximumVolumeTests {
    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
    }

    @Test func raisedRangeTakesVolumesAboveUnityAndMixesThem() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        #expect(code { try q.setParameter(.volume, 2) } == .invalidParameter)
        #expect(code { try q.setMaximumVolume(0.5) } == .invalidParameter)
        #expect(code { try q.setMaximumVolume(AudioQueue.loudestVolume * 1.01) } == .invalidParameter)
        #expect(code { try q.setMaximumVolume(.nan) } == .invalidParameter)
        try q.setMaximumVolume(4)
        #expect(code { try q.setParameter(.volume, 4.5) } == .invalidParameter)
        try q.setParameter(.volume, 3)
        let b = try q.allocateBuffer(capacity: 200)
        fillMono16(b, frames: 100, impulses: [7])
        try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.volume, 2)])
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let out = device.render(frames: 256, cycle: 256)[0]
        // fillMono16's impulse is 16384 (0.5); at the buffer's volume 2 it plays as 1.
        #expect(nonZero(out) == [7])
        #expect(out[7] == 1, "\(out[7])")
        #expect(q.parameter(.volume) == 2)
    }
}
