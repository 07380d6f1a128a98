import AQCore
@testable import AQJack
import AQTesting
import Dispatch
import Foundation
import Synchronization
import Testing

/// Closing a client never freezes the device (issue 21): libjack's close runs on a thread of
/// its own, outside the device's lock, and no client of the process opens before it is over.
/// A libjack close that does not return is stood for by ``JackLifecycle/beforeClose``, which
/// these tests make block until they release it (for their own client only: other suites run
/// beside them).
@Suite("Closing JACK clients", .serialized)
struct JackCloseTests {
    /// The gate alone (a private one, no server): an open waits for a close announced before
    /// it, gives up after its limit saying which, and goes on once the close is over.
    @Test(.timeLimit(.minutes(1)))
    func opensWaitForAnnouncedCloses() {
        let gate = JackLifecycle()
        let ticket = gate.announceClose("closing JACK client “x” on server “y”")
        // Announced, not yet running: opens already wait (and give up).
        #expect(gate.open(limit: .milliseconds(50)) { 1 } == nil)
        #expect(!gate.waitForCloses(limit: .milliseconds(10)))
        #expect(gate.pendingDescription?.contains("closing JACK client “x” on server “y” has not finished after") == true)

        let order = Mutex<[String]>([])
        let closing = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        Thread {
            gate.close(ticket) {
                order.withLock { $0.append("close begins") }
                closing.signal()
                release.wait()  // libjack's close, blocked
                order.withLock { $0.append("close ends") }
            }
            closed.signal()
        }.start()
        closing.wait()
        #expect(gate.open(limit: .milliseconds(50)) { 1 } == nil)
        let opened = DispatchSemaphore(value: 0)
        Thread {
            _ = gate.open(limit: .seconds(30)) { order.withLock { $0.append("open") } }
            opened.signal()
        }.start()
        release.signal()
        closed.wait()
        opened.wait()
        #expect(order.withLock { $0 } == ["close begins", "close ends", "open"])
        #expect(gate.pendingDescription == nil)
        #expect(gate.waitForCloses(limit: .zero))
    }

    /// A device whose close is stuck in libjack: `stop()` returns after its limit saying so,
    /// every query answers meanwhile, a start waits for the close and gives up naming it; once
    /// the close returns, the device starts again on a new client.
    @Test(.timeLimit(.minutes(1)))
    func aStuckCloseFreezesNeitherTheDeviceNorStopAndBlocksOpens() throws {
        let server = try PrivateJackServer()
        let device = try JackDevice(
            options: JackDeviceOptions(clientName: "aqtest-close", serverName: server.name, outputConnections: .none))
        device.closeWaitLimit = .milliseconds(300)
        let core = RenderCore.allocate(sampleRate: 48000, capacities: RenderCapacities(queues: 4))
        defer { RenderCore.deallocate(core) }
        try device.start(rendering: RenderTarget(core))
        // Another device of the process, open and not started: it needs no new client.
        let other = try JackDevice(
            options: JackDeviceOptions(clientName: "aqtest-close-other", serverName: server.name, outputConnections: .none))
        other.closeWaitLimit = .milliseconds(300)
        let otherCore = RenderCore.allocate(sampleRate: 48000, capacities: RenderCapacities(queues: 4))
        defer { RenderCore.deallocate(otherCore) }
        let hook = CloseHook(client: device.clientName, server: server.name)
        defer { hook.remove() }

        let stopped = DispatchSemaphore(value: 0)
        Thread {
            device.stop()
            stopped.signal()
        }.start()
        hook.entered.wait()  // libjack's close of the client has begun and does not return
        // The device answers (under the old design these waited for the close).
        #expect(!device.isRunning)
        #expect(device.connectionState == .stopped)
        #expect(device.framesPerCycle == 256)
        #expect(device.dspLoad == 0)
        #expect(device.connections(ofOutput: 0).isEmpty)
        // stop() gives up on the close after its limit: the renderer is no longer reached.
        stopped.wait()
        let c = core.pointee.clock.cycleCount
        #expect(device.unfinishedClose?.contains("closing JACK client “\(device.clientName)” on server “\(server.name)” has not finished") == true)
        // No new client while the old one is still open in libjack: the start waits, gives up.
        do {
            try device.start(rendering: RenderTarget(core))
            Issue.record("started while the previous client was still closing")
        } catch {
            #expect(error.message.contains("still closing"), "\(error.message)")
        }
        #expect(!device.isRunning)
        #expect(core.pointee.clock.cycleCount == c, "rendered after stop() returned")
        // A device whose client is open starts: only opens wait for closes.
        try other.start(rendering: RenderTarget(otherCore))
        #expect(other.isRunning)

        hook.release()
        #expect(JackLifecycle.shared.waitForCloses(limit: .seconds(30)))
        #expect(device.unfinishedClose == nil)
        try device.start(rendering: RenderTarget(core))
        #expect(device.isRunning)
        device.stop()
        other.stop()
        #expect(device.unfinishedClose == nil && other.unfinishedClose == nil)
    }

    /// The defect of issue 21: the server goes away and libjack's close of the dead client does
    /// not return. The shutdown is still reported and the device answers; the dead client was
    /// let go of (whether the device reconnects or not), and the reconnection waits for its
    /// close.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func serverShutdownWithAStuckCloseStillReportsAndAnswers(reconnect: Bool) throws {
        let server = try PrivateJackServer()
        let device = try JackDevice(
            options: JackDeviceOptions(
                clientName: "aqtest-close", serverName: server.name, outputConnections: .none, reconnect: reconnect))
        device.closeWaitLimit = .milliseconds(300)
        let core = RenderCore.allocate(sampleRate: 48000, capacities: RenderCapacities(queues: 4))
        defer { RenderCore.deallocate(core) }
        try device.start(rendering: RenderTarget(core))
        let hook = CloseHook(client: device.clientName, server: server.name)
        defer { hook.remove() }
        let reported = DispatchSemaphore(value: 0)
        let statuses = Mutex<[String]>([])
        device.setStatusHandler { s in
            if case .lost(_, let r) = s { statuses.withLock { $0.append("lost reconnecting=\(r)") } }
        }
        device.onShutdown = { _ in reported.signal() }

        server.kill()
        hook.entered.wait()  // the event thread let go of the dead client; its close is stuck
        #expect(reported.wait(timeout: .now() + 10) == .success, "the shutdown was not reported while the close was stuck")
        #expect(!device.isRunning)
        #expect(device.connectionState == (reconnect ? .reconnecting : .stopped))
        #expect(statuses.withLock { $0 } == ["lost reconnecting=\(reconnect)"])
        #expect(device.unfinishedClose != nil)

        hook.release()
        #expect(JackLifecycle.shared.waitForCloses(limit: .seconds(30)))
        device.stop()
        #expect(device.connectionState == .stopped)
        #expect(device.unfinishedClose == nil)
    }
}

/// Makes libjack's close of one client (by name and server) block until released.
private final class CloseHook: Sendable {
    let entered = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let released = Atomic<Bool>(false)

    init(client: String, server: String) {
        let key = "“\(client)” on server “\(server)”"
        JackLifecycle.beforeClose = { [self] what in
            guard what.contains(key), !released.load(ordering: .acquiring) else { return }
            entered.signal()
            gate.wait()
        }
    }

    /// Lets the stuck close (and any later one) go on.
    func release() {
        guard !released.exchange(true, ordering: .acquiring) else { return }
        gate.signal()
    }

    /// Releases and removes the hook.
    func remove() {
        release()
        JackLifecycle.beforeClose = nil
    }
}
