import AQEngine
import AQJack
import AQJackServer
import AQTesting
import Foundation
import Synchronization
import Testing

/// A mono float32 buffer of `frames` frames with `value` at each of `impulses`.
private func impulseBuffer(_ q: AudioQueue, frames: Int, impulses: [Int], value: Float = 0.5) throws -> AudioQueueBuffer {
    let b = try q.allocateBuffer(capacity: frames * 4)
    let p = b.audioData.bindMemory(to: Float.self, capacity: frames)
    p.initialize(repeating: 0, count: frames)
    for i in impulses { p[i] = value }
    b.audioDataByteSize = frames * 4
    return b
}

private let monoFloat48k = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 32, isFloat: true)

/// The executables built next to the test bundle (`swift build --build-tests` builds them).
private func productURL(_ name: String) -> URL {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let beside = dir.appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/\(name)")
}

/// A private server (48 kHz, 256 frames), a JackDevice on it with unconnected outputs, and an
/// engine; released in that order's reverse (the engine's client closes before the server
/// stops).
final class EngineRig {
    let server: PrivateJackServer
    let device: JackDevice
    let engine: AudioQueueEngine

    init(reconnect: Bool = true) throws {
        server = try PrivateJackServer(sampleRate: 48000, period: 256)
        device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsync-test", serverName: server.name, outputConnections: .none, reconnect: reconnect))
        engine = try AudioQueueEngine(device: device)
    }

    deinit {
        engine.close()
        server.stop()
    }
}

@Suite("The engine on a private JACK server", .serialized)
struct EngineOnJackTests {
    /// Three queues started on one device frame, recorded by jack-record: every impulse lands
    /// exactly at its scheduled frame relative to the others, including across cycle
    /// boundaries (period 256) and at prime frames.
    @Test(.timeLimit(.minutes(2)))
    func queuesStartedTogetherKeepExactRelativeFrames() throws {
        // A witness is recorded beside the outputs: a run whose impulses are off where the
        // witness shows the recorder broke (or the witness itself slipped) is repeated through
        // liveRun (at most 3 runs, printed), never when the queues' own late frames moved.
        try liveRun("queuesStartedTogetherKeepExactRelativeFrames") { _, isLast in try startedTogetherRun(isLast: isLast) }
    }

    private func startedTogetherRun(isLast: Bool) throws -> LiveRunVerdict {
        let rig = try EngineRig()
        defer { withExtendedLifetime(rig) {} }  // its deinit closes the engine, then the server
        let (server, device, engine) = (rig.server, rig.device, rig.engine)
        let a = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let b = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let c = try engine.newOutput(format: AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 24, bigEndian: true)) { _, _ in }
        try a.setOutputChannels([0])
        try b.setOutputChannels([1])
        try c.setOutputChannels([1])
        try a.enqueue(impulseBuffer(a, frames: 10_000, impulses: [0, 255, 256, 1009, 7919]))
        try b.enqueue(impulseBuffer(b, frames: 2000, impulses: [13]), startTime: AudioTimeStamp(sampleTime: 4099))
        // c: 24-bit big-endian, an impulse at its frame 2 after trimming 3 frames, at queue time 6007.
        let cb = try c.allocateBuffer(capacity: 300)
        let bytes = cb.audioData.bindMemory(to: UInt8.self, capacity: 300)
        bytes.initialize(repeating: 0, count: 300)
        bytes[5 * 3] = 0x40  // 0x400000 = 0.5
        cb.audioDataByteSize = 300
        try c.enqueue(cb, trimFramesAtStart: 3, startTime: AudioTimeStamp(sampleTime: 6007))

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("aqtest-witness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let (rec, witness) = try FrameCountWitness.recording(device.outputPortNames, server: server.name, directory: dir, seconds: 1.5)
        defer { rec.removeFiles(); witness.stop() }
        let start = engine.nearestStartTime(AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 4800))
        let frame = try engine.start([a, b, c], at: start)
        try rec.wait()
        let wav = try rec.read()
        let found = ImpulseFinder.find(channels: Array(wav.channels.prefix(2)), threshold: 0.25)
        try #require(found.count == 2 && !found[0].isEmpty, "no impulses recorded: \(found)")
        let origin = found[0][0]
        let exact = found[0].map { $0 - origin } == [0, 255, 256, 1009, 7919] && found[1].map { $0 - origin } == [4099 + 13, 6007 + 2]
        let timeline = WitnessTimeline(channel: wav.channels[2])
        let span = origin...(origin + 7919)
        if !exact && !isLast && (timeline.breaks.contains { span.contains($0) } || timeline.slipped(in: span)) {
            return .witnessCouldNotTell(
                reason: "impulses at \(found[0].map { $0 - origin }) / \(found[1].map { $0 - origin }), and the recorder broke or the witness slipped inside them",
                aqsyncFigures: ["late frames": Int(a.lateFrames + b.lateFrames + c.lateFrames)])
        }
        #expect(found[0].map { $0 - origin } == [0, 255, 256, 1009, 7919])
        #expect(found[1].map { $0 - origin } == [4099 + 13, 6007 + 2])
        #expect(abs(wav.channels[0][origin] - 0.5) < 1e-6)
        #expect(a.startDeviceFrame == frame && b.startDeviceFrame == frame && c.startDeviceFrame == frame)
        #expect(a.lateFrames == 0 && b.lateFrames == 0 && c.lateFrames == 0)
        return .judged
    }

    /// The device's render thread (JACK's process thread) is named "aqsync-render" for the
    /// kernel, as `top -H`, `ps -L` and perf show it, and runs realtime on this realtime server;
    /// jackd2's other threads of the client (its message thread) are not named so.
    @Test(.timeLimit(.minutes(1)))
    func theRenderThreadIsNamed() throws {
        let rig = try EngineRig()
        defer { withExtendedLifetime(rig) {} }
        let q = try rig.engine.newOutput(format: monoFloat48k) { _, _ in }
        try q.enqueue(impulseBuffer(q, frames: 48_000, impulses: [0]))
        try q.start()
        defer { try? q.stop(immediately: true) }
        func renderThreads() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.filter { tid in
                let comm = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? ""
                return comm.trimmingCharacters(in: .whitespacesAndNewlines) == "aqsync-render"
            }
        }
        #expect(waitUntil(timeout: .seconds(5)) { !renderThreads().isEmpty })
        if rig.device.renderPriority != nil {
            // Field 41 of /proc/…/stat (after the name's closing parenthesis, field 3 on) is the policy.
            let policies = renderThreads().compactMap { tid -> Int? in
                guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return nil }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 38 ? Int(fields[38]) : nil
            }
            #expect(!policies.isEmpty && policies.allSatisfy { $0 == 1 || $0 == 2 }, "policies \(policies)")
        }
    }

    /// A period change while playing is one discontinuity for a timeline, and both queues stay
    /// on the device timeline: the offset between them stays exact.
    @Test(.timeLimit(.minutes(1)))
    func periodChangeWhilePlaying() throws {
        let rig = try EngineRig()
        defer { withExtendedLifetime(rig) {} }  // its deinit closes the engine, then the server
        let (server, device, engine) = (rig.server, rig.device, rig.engine)
        let a = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let b = try engine.newOutput(format: monoFloat48k) { _, _ in }
        try a.setOutputChannels([0])
        try b.setOutputChannels([1])
        let every = 4801
        let impulses = Array(stride(from: 0, to: 96_000, by: every))
        try a.enqueue(impulseBuffer(a, frames: 96_000, impulses: impulses))
        try b.enqueue(impulseBuffer(b, frames: 96_000, impulses: impulses.map { $0 + 100 }.filter { $0 < 96_000 }))
        let tl = a.createTimeline()
        let rec = try JackRecorder(server: server.name, ports: device.outputPortNames, seconds: 2.2)
        defer { rec.removeFiles() }
        let xruns0 = device.xrunCount
        _ = try engine.start([a, b], at: engine.nearestStartTime(AudioTimeStamp(sampleTime: engine.deviceCurrentTime().sampleTime + 2400)))
        Thread.sleep(forTimeInterval: 0.7)
        // Without realtime scheduling the dummy backend may xrun while clients join the graph:
        // take whatever happened so far, then change the period.
        _ = a.currentTime(timeline: tl)
        let xruns = device.xrunCount
        try JackTools.setBufferSize(512, server: server.name)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(a.currentTime(timeline: tl).discontinuity)
        #expect(!a.currentTime(timeline: tl).discontinuity, "one period change, one discontinuity")
        if device.xrunCount == xruns {
            #expect(engine.discontinuity.reason == .bufferSizeChange)
        }
        try rec.wait()
        let found = ImpulseFinder.find(channels: try rec.read().channels, threshold: 0.25)
        try #require(found[0].count > 10, "impulses: \(found[0])")
        // Between the queues: every impulse of b is 100 frames after one of a's. The frame
        // counter's jump at the period change skips the same frames of both queues, which may
        // drop an impulse of one and not the other (they are 100 frames apart): at most one.
        let setA = Set(found[0]), setB = Set(found[1])
        let unpaired = found[1].filter { !setA.contains($0 - 100) } + found[0].filter { !setB.contains($0 + 100) }
        #expect(unpaired.count <= 1 + Int(device.xrunCount - xruns0), "unpaired impulses \(unpaired)")
        #expect(found[1].count - unpaired.count > 10, "pairs exactly 100 frames apart")
        // Within a queue, spacing is exact but where the device's frame counter jumped.
        let gaps = zip(found[0].dropFirst(), found[0]).map { $0 - $1 }
        #expect(gaps.filter { $0 != every }.count <= 1 + Int(device.xrunCount - xruns0), "gaps \(gaps)")
    }

    /// The device's outputs connected back to its own inputs (`connectOutputsToInputs`), read
    /// by an input queue (what aqsync's `--capture` records): exactly what went out, the
    /// impulses at their relative frames with their amplitudes, nothing lost, the buffers
    /// consecutive.
    @Test(.timeLimit(.minutes(1)))
    func captureThroughOwnInputs() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsync-test", serverName: server.name, inputChannels: 2, outputConnections: .none, inputConnections: .none))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let a = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let b = try engine.newOutput(format: monoFloat48k) { _, _ in }
        try a.setOutputChannels([0])
        try b.setOutputChannels([1])
        try a.enqueue(impulseBuffer(a, frames: 5000, impulses: [0, 257, 4999], value: 0.25))
        try b.enqueue(impulseBuffer(b, frames: 100, impulses: [31], value: -0.75), startTime: AudioTimeStamp(sampleTime: 3001))
        try device.connectOutputsToInputs()
        let stereo = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 32, isFloat: true)
        let got = Mutex<(starts: [Int64], channels: [[Float]])>(([], [[], []]))
        let input = try engine.newInput(format: stereo) { q, buf, t, _ in
            let n = buf.audioDataByteSize / 8
            let p = buf.audioData.bindMemory(to: Float.self, capacity: max(2 * n, 1))
            got.withLock { g in
                g.starts.append(Int64(t.sampleTime) + Int64(buf.captureLatency))
                for c in 0..<2 { g.channels[c] += (0..<n).map { p[2 * $0 + c] } }
            }
            try? q.enqueue(buf)
        }
        for _ in 0..<6 { try input.enqueue(try input.allocateBuffer(capacity: 2048 * 8)) }
        let recordFrom = try input.start()
        _ = try engine.start([a, b], at: engine.nearestStartTime(AudioTimeStamp(sampleTime: Double(recordFrom) + 2400)))
        // Until the last impulse (2400 + 4999 frames after the start) is surely in: the input
        // callback's own count of frames, not a sleep.
        let deadline = ContinuousClock.now + .seconds(5)
        while got.withLock({ $0.channels[0].count }) < 24_000 && ContinuousClock.now < deadline { usleep(5000) }
        try input.stop(immediately: true)
        let (starts, channels) = got.withLock { ($0.starts, $0.channels) }
        #expect(channels[0].count >= 24_000)
        #expect(input.lostFrames == 0)
        #expect(starts.first == recordFrom)
        let found = ImpulseFinder.find(channels: channels, threshold: 0.1)
        try #require(found[0].count == 3, "\(found)")
        let origin = found[0][0]
        #expect(found[0].map { $0 - origin } == [0, 257, 4999])
        #expect(found[1].map { $0 - origin } == [3001 + 31])
        #expect(channels[0][origin] == 0.25 && channels[1][found[1][0]] == -0.75)
    }

    /// The server dies while a queue plays: the queue stops with an error saying so, and its
    /// IsRunning listener is told.
    @Test(.timeLimit(.minutes(1)))
    func serverGoneStopsQueuesWithAnError() throws {
        let rig = try EngineRig(reconnect: false)
        defer { withExtendedLifetime(rig) {} }  // its deinit closes the engine, then the server
        let (server, engine) = (rig.server, rig.engine)
        // The user's own shutdown handler is not the engine's to overwrite (issue 15, item 11).
        let userHandlerCalls = Atomic<Int>(0)
        rig.device.onShutdown = { _ in userHandlerCalls.add(1, ordering: .relaxed) }
        let q = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let running = Mutex<[Bool]>([])
        let threads = Mutex<[String]>([])
        q.addPropertyListener(.isRunning) { q, _ in
            running.withLock { $0.append(q.isRunning) }
            let name = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            threads.withLock { $0.append(name) }
        }
        try q.enqueue(impulseBuffer(q, frames: 480_000, impulses: [0]))
        try q.start()
        let deadline = Date().addingTimeInterval(5)
        while running.withLock({ $0 }) != [true] && Date() < deadline { usleep(5000) }
        #expect(running.withLock { $0 } == [true])
        server.kill()
        while running.withLock({ $0 }) != [true, false] && Date() < deadline.addingTimeInterval(5) { usleep(5000) }
        #expect(running.withLock { $0 } == [true, false])
        #expect(q.error?.code == .cannotStart)
        #expect(q.error?.message.contains("server") == true, "\(String(describing: q.error))")
        #expect(engine.discontinuity.reason == .serverShutdown)
        // Every listener call on the engine's events thread, server loss included (the
        // listener notes its thread just after its run state).
        #expect(waitUntil(timeout: .seconds(2)) { threads.withLock { $0.count } == 2 })
        #expect(threads.withLock { $0 } == ["aqsync-events", "aqsync-events"])
        #expect(waitUntil(timeout: .seconds(2)) { userHandlerCalls.load(ordering: .relaxed) == 1 })
    }

    /// A server killed and restarted under the same name: the device reconnects by itself; a
    /// queue that was playing keeps running (no IsRunning change), a queue made and started
    /// while the device was away starts once it is back; the engine's status handler is told
    /// both changes on the events thread, in order.
    @Test(.timeLimit(.minutes(1)))
    func serverThatComesBackResumesQueues() throws {
        let rig = try EngineRig()
        defer { withExtendedLifetime(rig) {} }
        let (server, engine, device) = (rig.server, rig.engine, rig.device)
        let statuses = Mutex<[String]>([])
        engine.onDeviceStatus = { s in
            // The kernel's name of the calling thread.
            let where_ = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            switch s {
            case .lost(_, let r): statuses.withLock { $0.append("lost reconnecting=\(r) on \(where_)") }
            case .restored: statuses.withLock { $0.append("restored on \(where_)") }
            case .failed(let why): statuses.withLock { $0.append("failed \(why)") }
            }
        }
        let q = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let running = Mutex<[Bool]>([])
        q.addPropertyListener(.isRunning) { q, _ in running.withLock { $0.append(q.isRunning) } }
        try q.enqueue(impulseBuffer(q, frames: 480_000, impulses: [0]))
        try q.start()
        #expect(waitUntil(timeout: .seconds(5)) { running.withLock { $0 } == [true] })
        server.kill()
        #expect(waitUntil(timeout: .seconds(5)) { device.connectionState == .reconnecting })
        #expect(waitUntil(timeout: .seconds(5)) { engine.deviceAwayReason != nil })
        // While away: a new queue can be made, filled and started; it waits for the device.
        let late = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let lateRunning = Mutex<[Bool]>([])
        late.addPropertyListener(.isRunning) { q, _ in lateRunning.withLock { $0.append(q.isRunning) } }
        try late.enqueue(impulseBuffer(late, frames: 4800, impulses: [0]))
        try late.start()
        let second = try JackServer(name: server.name, sampleRate: 48000, period: 256)
        defer { second.stop() }
        #expect(waitUntil(timeout: .seconds(10)) { device.connectionState == .running })
        #expect(waitUntil(timeout: .seconds(5)) { lateRunning.withLock { $0 } == [true] })
        #expect(waitUntil(timeout: .seconds(5)) { statuses.withLock { $0.count } == 2 })
        #expect(statuses.withLock { $0 } == ["lost reconnecting=true on aqsync-events", "restored on aqsync-events"])
        #expect(running.withLock { $0 } == [true], "the playing queue kept running")
        #expect(q.error == nil && engine.deviceAwayReason == nil)
        #expect(device.reconnectionCount == 1)
        #expect(device.lostFrames > 0, "the time away is counted")
        engine.close()  // before the server goes (the rig's deinit would stop the first one)
    }

    /// A server that comes back at another rate: the device does not resume (the queues'
    /// audio was converted for the old rate); every running queue stops with `cannotStart`
    /// naming both rates, and the status handler is told `.failed`.
    @Test(.timeLimit(.minutes(1)))
    func serverBackAtAnotherRateStopsQueuesClearly() throws {
        let rig = try EngineRig()
        defer { withExtendedLifetime(rig) {} }
        let (server, engine, device) = (rig.server, rig.engine, rig.device)
        let failed = Mutex<String?>(nil)
        engine.onDeviceStatus = { s in if case .failed(let why) = s { failed.withLock { $0 = why } } }
        let q = try engine.newOutput(format: monoFloat48k) { _, _ in }
        let running = Mutex<[Bool]>([])
        q.addPropertyListener(.isRunning) { q, _ in running.withLock { $0.append(q.isRunning) } }
        try q.enqueue(impulseBuffer(q, frames: 480_000, impulses: [0]))
        try q.start()
        #expect(waitUntil(timeout: .seconds(5)) { running.withLock { $0 } == [true] })
        server.kill()
        #expect(waitUntil(timeout: .seconds(5)) { device.connectionState == .reconnecting })
        let second = try JackServer(name: server.name, sampleRate: 44100, period: 256)
        defer { second.stop() }
        #expect(waitUntil(timeout: .seconds(10)) { running.withLock { $0 } == [true, false] })
        #expect(waitUntil(timeout: .seconds(5)) { failed.withLock { $0 } != nil })
        #expect(q.error?.code == .cannotStart)
        #expect(q.error?.message.contains("44100") == true && q.error?.message.contains("48000") == true, "\(String(describing: q.error))")
        #expect(device.connectionState == .stopped)
        engine.close()
    }

    /// A device whose server went away before the engine started it: `.invalidDevice`.
    @Test(.timeLimit(.minutes(1)))
    func engineOnAGoneServerIsInvalidDevice() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        let device = try JackDevice(options: JackDeviceOptions(clientName: "aqsync-test", serverName: server.name, outputConnections: .none))
        device.stop()  // closes the client
        server.stop()
        do {
            _ = try AudioQueueEngine(device: device)
            Issue.record("an engine started on a stopped server")
        } catch {
            #expect(error.code == .invalidDevice)
            #expect(error.code.rawValue == -66680)
            #expect(error.message.contains(server.name), "\(error.message)")
        }
    }

    /// `a440` and `stereo-sine` play their tones through a private server.
    @Test(.timeLimit(.minutes(1)), .serialized, arguments: [("a440", 440.0, 440.0), ("stereo-sine", 150.0, 250.0)])
    func tutorialProgramsPlayTheirTones(program: String, left: Double, right: Double) throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let p = Process()
        p.executableURL = productURL(program)
        p.arguments = ["--seconds", "3"]
        var env = ProcessInfo.processInfo.environment
        env["JACK_DEFAULT_SERVER"] = server.name
        p.environment = env
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer { p.terminateAndReap() }
        let ports = ["\(program):out_1", "\(program):out_2"]
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, !Set(try JackTools.ports(server: server.name)).isSuperset(of: ports) { usleep(20_000) }
        let rec = try JackRecorder(server: server.name, ports: ports, seconds: 1)
        defer { rec.removeFiles() }
        try rec.wait()
        let wav = try rec.read()
        let fl = risingZeroCrossingFrequency(wav.channels[0], rate: 48000), fr = risingZeroCrossingFrequency(wav.channels[1], rate: 48000)
        #expect(abs(fl - left) < 2, "\(program) left: \(fl) Hz")
        #expect(abs(fr - right) < 2, "\(program) right: \(fr) Hz")
        #expect(p.waitUntilExit(within: 30), "the program did not exit on its own")
        #expect(p.terminationStatus == 0)
    }
}
