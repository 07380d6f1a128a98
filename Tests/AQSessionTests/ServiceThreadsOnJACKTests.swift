import AQCore
import AQEngine
import AQJack
import AQJackServer
import AQSession
import AQTesting
import Foundation
import Testing

/// Issue 25: the threads that serve the render thread (the engine's events thread, a session's
/// feeders) run SCHED_FIFO below it on a realtime server, and stay ordinary threads on a server
/// without realtime scheduling. Checked through the API and, independently, in
/// `/proc/self/task/*/stat` (each thread's policy and realtime priority, by its name).
@Suite("Service threads' priorities on JACK", .serialized)
struct ServiceThreadsOnJACKTests {
    /// (policy, realtime priority) of every thread of this process whose name starts with
    /// `prefix`.
    static func threads(named prefix: String) -> [(policy: Int, priority: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { tid in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8),
                  comm.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after the name start at field 3: rt_priority is field 40, policy 41.
            let f = stat[stat.index(after: close)...].split(separator: " ")
            guard f.count > 38, let prio = Int(f[37]), let policy = Int(f[38]) else { return nil }
            return (policy, prio)
        }
    }

    /// Waits (up to 5 s, polling) until the engine's events thread took a priority.
    static func eventsPriority(of engine: AudioQueueEngine) -> Int32? {
        let deadline = Date().addingTimeInterval(5)
        while engine.eventsThreadPriority == nil && Date() < deadline { usleep(2_000) }
        return engine.eventsThreadPriority
    }

    @Test(.timeLimit(.minutes(1)))
    func realtimeServerPutsEventsAndFeedersBelowTheRenderThread() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        let render = try #require(device.renderPriority, "a realtime jackd gives its clients a realtime priority")
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        #expect(Self.eventsPriority(of: engine) == render - 1)
        #expect(engine.feederPriority == render - 2)
        let events = Self.threads(named: "aqsync-events")
        #expect(events.count == 1 && events.allSatisfy { $0.policy == Int(SCHED_FIFO) && $0.priority == Int(render) - 1 }, "\(events)")
        let fx = try ImpulseSession.make()
        let player = try SessionPlayer(session: try SessionLoader.load(fx.url), engine: engine)
        defer { player.close() }
        let f = player.feeders
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(f.threads == max(1, min(cores, 5)) && f.priority == render - 2, "\(f)")
        // Each feeder applies the priority to itself as it starts.
        let deadline = Date().addingTimeInterval(5)
        while player.feeders.realtime < f.threads && Date() < deadline { usleep(2_000) }
        #expect(player.feeders.realtime == f.threads, "\(player.feeders)")
        let feeders = Self.threads(named: "aqsync-feeder")
        #expect(feeders.count == f.threads && feeders.allSatisfy { $0.policy == Int(SCHED_FIFO) && $0.priority == Int(render) - 2 }, "\(feeders)")
    }

    @Test(.timeLimit(.minutes(1)))
    func serverWithoutRealtimeLeavesThemOrdinary() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        #expect(device.renderPriority == nil)
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        #expect(engine.feederPriority == nil && engine.eventsThreadPriority == nil)
        let fx = try ImpulseSession.make()
        let player = try SessionPlayer(session: try SessionLoader.load(fx.url), engine: engine)
        defer { player.close() }
        #expect(player.feeders.priority == nil && player.feeders.realtime == 0)
        let ours = Self.threads(named: "aqsync-events") + Self.threads(named: "aqsync-feeder")
        #expect(!ours.isEmpty && ours.allSatisfy { $0.policy == 0 && $0.priority == 0 }, "\(ours)")
    }

    /// `realtimeServiceThreads: false`: ordinary threads even on a realtime server.
    @Test(.timeLimit(.minutes(1)))
    func optingOutLeavesThemOrdinary() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256, realtime: true)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsession-test", serverName: server.name, outputChannels: 5, outputConnections: .none))
        #expect(device.renderPriority != nil)
        let engine = try AudioQueueEngine(device: device, realtimeServiceThreads: false)
        defer { engine.close() }
        #expect(engine.feederPriority == nil && engine.eventsThreadPriority == nil)
    }
}
