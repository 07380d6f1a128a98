import AQEngine
import Testing

/// Found by the C API's conformance program (issue 12): `AudioQueueGetParameter` right after
/// `AudioQueueNewOutput`, before the renderer ran a cycle, read the slot's unset volume (0).
@Suite struct VolumeBeforeFirstCycleTests {
    @Test func volumeIsOneBeforeAnyCycle() throws {
        let (engine, _) = try manualEngine()
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        #expect(q.parameter(.volume) == 1)
    }

    /// A reused slot does not report the previous queue's volume.
    @Test func reusedSlotDoesNotLeakTheOldVolume() throws {
        let (engine, device) = try manualEngine()
        defer { engine.close() }
        let old = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        try old.setParameter(.volume, 0.25)
        _ = device.render(frames: 256, cycle: 256)
        #expect(old.parameter(.volume) == 0.25)
        try old.dispose(immediately: true)
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        #expect(q.parameter(.volume) == 1)
    }
}
