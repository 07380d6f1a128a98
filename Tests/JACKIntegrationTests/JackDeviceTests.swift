import AQCore
import AQJack
import AQTesting
import Foundation
import Synchronization
import Testing

@Suite("JACK device on a private server", .serialized)
struct JackDeviceTests {
    @Test(.timeLimit(.minutes(1)))
    func cyclesAdvanceWithContiguousAnchorsOnMonotonicTime() throws {
        let rig = try Rig()
        #expect(rig.device.isRunning)
        #expect(rig.device.sampleRate == 48000)
        #expect(rig.device.framesPerCycle == 256)
        #expect(rig.device.schedulingLead == 256)
        #expect(rig.device.uid == "jack:\(rig.server.name):\(rig.device.clientName)")
        #expect(rig.device.outputPortNames == ["\(rig.device.clientName):out_1", "\(rig.device.clientName):out_2"])
        // The start is the first discontinuity; an xrun or lost time in the first cycles (a
        // loaded machine: the server's own report, read after the reason) may follow it.
        let firstReason = rig.clock.epoch.lastReason
        #expect(firstReason == .deviceStarted || rig.device.xrunCount > 0 || rig.device.lostFrames > 0, "\(firstReason)")
        #expect(rig.waitCycles(10))

        // Host time of the latest anchor is CLOCK_MONOTONIC now, minus at most about a period.
        var lags: [Int64] = []
        for _ in 0..<20 {
            let now = Int64(HostClock.now())
            guard let a = rig.clock.anchor() else { Issue.record("no anchor"); return }
            lags.append(now - Int64(a.hostTimeNs))
            Thread.sleep(forTimeInterval: 0.013)
        }
        let periodNs: Int64 = 256 * 1_000_000_000 / 48000
        let minLag = lags.min()!, maxLag = lags.max()!
        #expect(minLag > -1_000_000, "anchor host time ahead of CLOCK_MONOTONIC by \(-minLag) ns (\(rig.device.clockSource))")
        // Bound loose enough for a loaded 2-core machine without realtime scheduling; it still
        // tells CLOCK_MONOTONIC from CLOCK_MONOTONIC_RAW, which differ by ~250 ms here.
        #expect(maxLag < periodNs + 30_000_000, "anchor host time behind CLOCK_MONOTONIC by \(maxLag) ns (\(rig.device.clockSource))")

        // Anchors: frames move in whole cycles, host times follow at the nominal rate.
        let epoch0 = rig.clock.epoch.count
        let xruns0 = rig.device.xrunCount
        let lost0 = rig.device.lostFrames
        let lostDiscontinuities0 = rig.device.discontinuityCount(.framesLost)
        let a0 = try #require(rig.clock.anchor())
        Thread.sleep(forTimeInterval: 1.2)
        let a1 = try #require(rig.clock.anchor())
        #expect(a0.frames == 256 && a1.frames == 256)
        #expect(a1.frame > a0.frame && (a1.frame - a0.frame) % 256 == 0)
        #expect(a1.frame >= 0)  // a 64-bit count, not JACK's 32-bit one reinterpreted
        #expect(a0.nextHostTimeNs > a0.hostTimeNs)
        let cycleNs = Double(a0.nextHostTimeNs - a0.hostTimeNs)
        #expect(abs(cycleNs / Double(periodNs) - 1) < 0.1, "next - current = \(cycleNs) ns")
        // Sample time counts rendered frames; time the server lost (a loaded machine) is
        // counted apart and belongs to the wall clock.
        let lost = rig.device.lostFrames - lost0
        let rate = Double(a1.frame - a0.frame + lost) / (Double(a1.hostTimeNs - a0.hostTimeNs) / 1e9) / 48000
        // The dummy backend sleeps between cycles; on a loaded 2-core machine one wake-up can
        // be late by tens of ms, so this is a sanity bound, not a measurement (that is the
        // benchmark's job).
        #expect(abs(rate - 1) < 0.05, "rate scalar \(rate) (lost frames \(lost))")
        if rig.device.xrunCount == xruns0 {
            // No xrun in the window: no lost frames or other discontinuity in it either (the
            // first cycles, before it, may have lost some on a loaded machine).
            #expect(rig.clock.epoch.count == epoch0, "unexpected discontinuity \(rig.clock.epoch.lastReason)")
            #expect(rig.device.discontinuityCount(.framesLost) == lostDiscontinuities0 && rig.device.lostFrames == lost0)
        }
        #expect(rig.device.dspLoad >= 0)

        rig.device.stop()
        #expect(!rig.device.isRunning)
        let c = rig.clock.cycleCount
        Thread.sleep(forTimeInterval: 0.05)
        #expect(rig.clock.cycleCount == c, "render called after stop()")

        // Start again: a new client, a new time line.
        let e = rig.clock.epoch.count
        try rig.device.start(rendering: RenderTarget(rig.core))
        #expect(rig.clock.epoch.count > e)
        #expect(rig.waitCycles(5))
    }

    /// A period change is one discontinuity, and the device's sample time neither skips nor
    /// repeats a frame through it: every cycle, recorded by the cycle probe, starts where the
    /// previous one ended, although jackd2's own counter jumps by the new period.
    @Test(.timeLimit(.minutes(1)))
    func bufferSizeChangeIsADiscontinuity() throws {
        let rig = try Rig()
        #expect(rig.waitCycles(5))
        let probe = rig.device.installCycleProbe(capacity: 4096)
        #expect(rig.waitCycles(3))
        let e0 = rig.clock.epoch.count
        let x0 = rig.device.discontinuityCount(.xrun)
        let l0 = rig.device.discontinuityCount(.framesLost)
        let lostFrames0 = rig.device.lostFrames
        try JackTools.setBufferSize(512, server: rig.server.name)
        #expect(waitUntil(timeout: .seconds(3)) { rig.device.framesPerCycle == 512 })
        #expect(waitUntil(timeout: .seconds(3)) { rig.clock.anchor()?.frames == 512 })
        #expect(rig.waitCycles(10))
        var cycles: [JackCycleMeasurement] = []
        _ = probe.drain(into: &cycles)
        try #require(cycles.count > 10 && probe.droppedCount == 0)
        let breaks = zip(cycles, cycles.dropFirst()).filter { $1.cycle.frame != $0.cycle.frame + Int64($0.cycle.frames) }
        #expect(breaks.isEmpty, "cycles that do not start where the previous ended: \(breaks.map { ($0.cycle.frame, $0.cycle.frames, $1.cycle.frame) })")
        #expect(cycles.contains { $0.cycle.frames == 256 } && cycles.contains { $0.cycle.frames == 512 })
        // jackd2's counter moved by the new period: the device saw the jump and ignored it.
        #expect(rig.device.lastCounterJumpFrames != 0)
        // One event, one discontinuity (plus one per xrun or lost time a loaded machine adds,
        // which is not the period change's doing).
        let xruns = rig.device.discontinuityCount(.xrun) - x0
        let lost = rig.device.discontinuityCount(.framesLost) - l0
        #expect(rig.clock.epoch.count == e0 + 1 + xruns + lost, "epochs: \(rig.clock.epoch.count - e0), xruns \(xruns), lost \(lost), last \(rig.clock.epoch.lastReason)")
        if xruns == 0 && lost == 0 { #expect(rig.clock.epoch.lastReason == .bufferSizeChange) }
        #expect(rig.device.discontinuityCount(.bufferSizeChange) == 1)
        // Lost time only with xruns (a loaded machine); the period change itself loses none
        // (frames lost in the first cycles, before it, are not its doing).
        if xruns == 0 { #expect(lost == 0 && rig.device.lostFrames == lostFrames0) }
        #expect(rig.device.schedulingLead == 512)
        #expect(try JackTools.bufferSize(server: rig.server.name) == 512)
    }

    @Test(.timeLimit(.minutes(1)))
    func serverKillCallsOnShutdownOffTheRenderThread() throws {
        let rig = try Rig()
        #expect(rig.waitCycles(5))
        let called = Mutex<(count: Int, reason: String)>((0, ""))
        rig.device.onShutdown = { reason in called.withLock { $0 = ($0.count + 1, reason) } }
        let e0 = rig.clock.epoch.count
        rig.server.kill()
        #expect(waitUntil(timeout: .seconds(5)) { called.withLock { $0.count } == 1 })
        #expect(rig.clock.epoch.count > e0)
        #expect(rig.clock.epoch.lastReason == .serverShutdown)
        #expect(rig.device.discontinuityCount(.serverShutdown) == 1)
        #expect(rig.device.serverHasShutDown)
        #expect(!rig.device.isRunning)
        #expect(rig.device.lastShutdownReason != nil)
        rig.device.stop()  // closes the dead client without hanging
        // Starting again fails clearly: the server is gone.
        #expect(throws: DeviceError.self) { try rig.device.start(rendering: RenderTarget(rig.core)) }
    }

    @Test(.timeLimit(.minutes(1)))
    func orderlyServerStopAlsoReportsShutdownAndTheHandlerMayStop() throws {
        let rig = try Rig()
        #expect(rig.waitCycles(5))
        let called = Atomic<Int>(0)
        let device = rig.device
        rig.device.onShutdown = { _ in
            device.stop()  // from the event thread itself
            called.add(1, ordering: .relaxed)
        }
        rig.server.stop()
        #expect(waitUntil(timeout: .seconds(5)) { called.load(ordering: .relaxed) == 1 })
        #expect(rig.clock.epoch.lastReason == .serverShutdown)
        #expect(!rig.device.isRunning)
        rig.device.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func outputsConnectToPhysicalPortsByDefault() throws {
        let rig = try Rig()
        #expect(rig.device.connections(ofOutput: 0) == ["system:playback_1"])
        #expect(rig.device.connections(ofOutput: 1) == ["system:playback_2"])
    }

    @Test(.timeLimit(.minutes(1)))
    func outputsConnectToExplicitPorts() throws {
        let rig = try Rig(outputs: .ports(["system:playback_2", "system:playback_1"]), inputChannels: 1)
        #expect(rig.device.connections(ofOutput: 0) == ["system:playback_2"])
        #expect(rig.device.connections(ofOutput: 1) == ["system:playback_1"])
        #expect(rig.device.inputPortNames == ["\(rig.device.clientName):in_1"])
        #expect(rig.device.connections(ofInput: 0) == ["system:capture_1"])
        // Cross-check with an independent tool.
        let lsp = try JackTools.run("jack_lsp", ["-c", "\(rig.device.clientName):out_1"], server: rig.server.name)
        #expect(lsp.output.contains("system:playback_2"))
    }

    @Test(.timeLimit(.minutes(1)))
    func unconnectedOutputs() throws {
        let rig = try Rig(outputs: .none)
        #expect(rig.device.connections(ofOutput: 0).isEmpty)
        #expect(rig.device.connections(ofOutput: 1).isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func connectingToAMissingPortNamesIt() throws {
        let rig = try Rig(outputs: .ports(["system:playback_1", "nosuch:port_9"]), start: false)
        do {
            try rig.device.start(rendering: RenderTarget(rig.core))
            Issue.record("start succeeded")
        } catch {
            #expect(error.message.contains("nosuch:port_9"), "\(error.message)")
        }
        #expect(!rig.device.isRunning)
    }

    @Test(.timeLimit(.minutes(1)))
    func unreachableServerGivesAClearError() throws {
        let name = "aqtest-nobody-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        #expect(!JackDevice.isServerReachable(name))
        do {
            _ = try JackDevice(options: JackDeviceOptions(clientName: "aqtest", serverName: name))
            Issue.record("opened a client on a server that does not exist")
        } catch {
            #expect(error.message.contains(name), "\(error.message)")
            #expect(error.message.contains("not reachable"), "\(error.message)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func recorderRecordsTheSilentOutputsAtTheServerRate() throws {
        let rig = try Rig(outputs: .none)
        let rec = try JackRecorder(server: rig.server.name, pattern: "\(rig.device.clientName):out_%d", channels: 2, seconds: 1)
        defer { rec.removeFiles() }
        #expect(waitUntil(timeout: .seconds(2)) { rig.device.connections(ofOutput: 1).count == 1 })
        try rec.wait(timeout: .seconds(5))
        let wav = try rec.read()
        #expect(wav.sampleRate == 48000)
        #expect(wav.channels.count == 2)
        #expect(abs(wav.frameCount - 48000) <= 1024, "\(wav.frameCount) frames")
        #expect(wav.channels.allSatisfy { $0.allSatisfy { $0 == 0 } })
    }
}
