import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// A device that says its own clock drives it; the test renders its cycles, with the host
/// times it chooses (a cycle that began long ago: the next one is late).
final class LateCycleDevice: AudioDevice, @unchecked Sendable {
    let uid = "late-cycle"
    let sampleRate = 48000.0
    let outputChannelCount = 2
    let framesPerCycle = 256
    let schedulingLead: Int64 = 256
    var isRunning: Bool { true }
    private var core: UnsafeMutablePointer<RenderCore>?
    private let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    private let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
    func start(rendering target: RenderTarget) throws(DeviceError) { self.core = target.core }
    func stop() { core = nil }

    /// Renders the cycle starting at device frame `frame`, which began at `hostTimeNs`.
    func renderCycle(frame: Int64, hostTimeNs: UInt64) {
        guard let core else { return }
        let outputs = [left, right]
        outputs.withUnsafeBufferPointer { o in
            core.pointee.render(
                CycleInfo(frame: frame, frames: 256, hostTimeNs: hostTimeNs, nextHostTimeNs: hostTimeNs + 256 * 1_000_000_000 / 48000),
                outputs: o.baseAddress!, channelCount: 2)
        }
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }
}

/// `nearestStartTime` against `deviceCurrentTime` (`AudioQueueDeviceGetNearestStartTime` and
/// `AudioQueueDeviceGetCurrentTime`): a program that asks for the nearest start of a time it
/// has just seen pass never gets an earlier one.
@Suite struct NearestStartTimeTests {
    /// On time: the next cycle plus the scheduling lead.
    @Test func onTimeTheNearestStartIsTheNextCyclePlusTheLead() throws {
        let device = LateCycleDevice()
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        device.renderCycle(frame: 48000, hostTimeNs: HostClock.now())
        let nearest = engine.nearestStartTime(AudioTimeStamp(sampleTime: 47000))
        #expect(nearest.sampleTime == 48000 + 256 + 256)
        #expect(engine.nearestStartTime(AudioTimeStamp(sampleTime: 60000)).sampleTime == 60000)
    }

    /// The cycle after the last one rendered is 50 ms late (a loaded machine): the current time
    /// runs on with the host clock, and no nearest start is earlier than it (conformance_jack.c
    /// under load saw "nearest for the past: 2304 (now 2596.9)").
    @Test func whileACycleIsLateTheNearestStartIsNotBeforeTheCurrentTime() throws {
        let device = LateCycleDevice()
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        device.renderCycle(frame: 48000, hostTimeNs: HostClock.now() - 50_000_000)
        let now = engine.deviceCurrentTime()
        #expect(now.sampleTime >= 48000 + 2400)
        let past = engine.nearestStartTime(AudioTimeStamp(sampleTime: now.sampleTime.rounded(.down) - 1000))
        #expect(past.sampleTime >= now.sampleTime, "nearest \(past.sampleTime), now \(now.sampleTime)")
        #expect(engine.nearestStartTime().sampleTime >= now.sampleTime)
    }
}
