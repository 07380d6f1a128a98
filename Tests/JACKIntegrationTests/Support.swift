import AQCore
import AQJack
import AQJackServer
import AQTesting
import Foundation
import Synchronization

/// A private server, a JackDevice on it, and a placeholder RenderCore in unsafe memory.
final class Rig {
    let server: PrivateJackServer
    let device: JackDevice
    let core: UnsafeMutablePointer<RenderCore>

    init(
        period: Int = 256, outputs: JackConnections = .physical, inputChannels: Int = 0, start: Bool = true
    ) throws {
        server = try PrivateJackServer(sampleRate: 48000, period: period)
        device = try JackDevice(
            options: JackDeviceOptions(
                clientName: "aqtest", serverName: server.name, outputChannels: 2, inputChannels: inputChannels,
                outputConnections: outputs))
        core = RenderCore.allocate(sampleRate: 48000, capacities: RenderCapacities(queues: 4))
        if start { try device.start(rendering: RenderTarget(core)) }
    }

    var clock: DeviceClockCore { core.pointee.clock }

    deinit {
        device.stop()
        RenderCore.deallocate(core)
        server.stop()
    }

    /// Waits until the renderer has seen `cycles` more cycles.
    func waitCycles(_ cycles: UInt64, timeout: Duration = .seconds(3)) -> Bool {
        let target = clock.cycleCount + cycles
        return waitUntil(timeout: timeout) { clock.cycleCount >= target }
    }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes.
func waitUntil(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return condition()
}
