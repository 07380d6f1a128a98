import AQSession
import Foundation
import Synchronization

/// OSC replies and subscriptions (docs/control.md): `/aqsync/where` is answered, to the
/// sender's address and port, with one `/aqsync/position`; `/aqsync/subscribe [port]` sends
/// `/aqsync/position` every 100 ms to the sender's address (at `port` when given, else the
/// port it sent from) until `/aqsync/unsubscribe [port]` or the end of playback. The position
/// message is `/aqsync/position d seconds, h frame, s state`: the session position in seconds
/// and in frames at the device's rate, and `playing`, `paused`, `rolling`, `stopped` (the
/// transport, when following it) or `ended`. Where the mode that plays has meters, each
/// position message is followed by `/aqsync/meters` (``oscMeters(_:)``).
///
/// Thread safety: ``handle(_:from:)`` on the OSC server's reader thread; `start` and `stop`
/// from the main thread; the sender is a thread of its own.
final class OSCReplies: @unchecked Sendable {
    /// At most this many subscribers (more are refused, with a log line).
    static let maximumSubscribers = 16

    private let status: @Sendable () -> OSCMessage?
    private let meters: @Sendable () -> OSCMessage?
    private let note: @Sendable (String) -> Void
    private let subscribers = Mutex<[OSCPeer]>([])
    private let server = Mutex<OSCServer?>(nil)
    private let done = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// `status` gives the position message now (nil: nothing playing yet); `meters` the meters
    /// message now (nil: none in this mode, or nothing playing yet); `note` logs a line.
    init(status: @escaping @Sendable () -> OSCMessage?, meters: @escaping @Sendable () -> OSCMessage?, note: @escaping @Sendable (String) -> Void) {
        self.status = status
        self.meters = meters
        self.note = note
    }

    /// Handles `/aqsync/where`, `/aqsync/subscribe` and `/aqsync/unsubscribe`; false for any
    /// other message. The OSC server's reader thread.
    func handle(_ m: OSCMessage, from peer: OSCPeer) -> Bool {
        let port: Int? = m.arguments.first.flatMap { a in
            if case .int(let v) = a { return Int(v) }
            if case .int64(let v) = a { return Int(v) }
            return nil
        }
        switch m.address {
        case "/aqsync/where":
            let reply = status() ?? OSCMessage(address: "/aqsync/position", arguments: [.double(0), .int64(0), .string("starting")])
            let server = server.withLock { $0 }
            _ = server?.send(reply, to: peer)
            if let m = meters() { _ = server?.send(m, to: peer) }
            return true
        case "/aqsync/subscribe", "/aqsync/unsubscribe":
            if let port, !(1...65535).contains(port) {
                note("osc \(m.address): a port from 1 to 65535, not \(port)")
                return true
            }
            let target = port.map { peer.with(port: $0) } ?? peer
            if m.address == "/aqsync/subscribe" {
                let added = subscribers.withLock { list -> Bool? in
                    if list.contains(target) { return false }
                    if list.count >= Self.maximumSubscribers { return nil }
                    list.append(target)
                    return true
                }
                switch added {
                case true?: note("osc /aqsync/subscribe: \(target.description) gets /aqsync/position every 100 ms\(meters() != nil ? " (and /aqsync/meters)" : "")")
                case false?: note("osc /aqsync/subscribe: \(target.description) is already subscribed")
                case nil: note("osc /aqsync/subscribe: \(target.description) refused: \(Self.maximumSubscribers) subscribers already")
                }
            } else {
                let removed = subscribers.withLock { list -> Bool in
                    let n = list.count
                    list.removeAll { $0 == target }
                    return list.count < n
                }
                note("osc /aqsync/unsubscribe: \(target.description) \(removed ? "unsubscribed" : "was not subscribed")")
            }
            return true
        default:
            return false
        }
    }

    /// Starts sending to the subscribers through `server` (its socket, its port). Main thread.
    func start(sending server: OSCServer) {
        self.server.withLock { $0 = server }
        started = true
        let thread = Thread { [self] in
            while !done.load(ordering: .relaxed) {
                let list = subscribers.withLock { $0 }
                if !list.isEmpty, let m = status(), let server = self.server.withLock({ $0 }) {
                    let levels = meters()
                    for peer in list {
                        server.send(m, to: peer)
                        if let levels { server.send(levels, to: peer) }
                    }
                }
                usleep(100_000)  // the subscription's period, not a synchronisation
            }
            finished.signal()
        }
        thread.name = "aqsync-osc-replies"
        thread.start()
    }

    /// Sends the subscribers a last position (the state at the end) and stops the sender.
    /// Idempotent. Main thread.
    func stop() {
        guard started, !done.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
        if let m = status(), let server = server.withLock({ $0 }) {
            for peer in subscribers.withLock({ $0 }) { server.send(m, to: peer) }
        }
        server.withLock { $0 = nil }
    }
}

/// The position message of ``OSCReplies``.
func oscPosition(frame: Int64, rate: Double, state: String) -> OSCMessage {
    OSCMessage(address: "/aqsync/position", arguments: [.double(Double(frame) / rate), .int64(frame), .string(state)])
}

/// The meters message of ``OSCReplies``: `/aqsync/meters` with two floats per track, in the
/// session's order: the loudest channel's average power and peak in dBFS (−120 for silence or
/// a track with no meter), as `kAudioQueueProperty_CurrentLevelMeterDB` reports them.
func oscMeters(_ levels: [(averageDB: Float, peakDB: Float)?]) -> OSCMessage {
    OSCMessage(address: "/aqsync/meters", arguments: levels.flatMap { l -> [OSCArgument] in
        [.float(l?.averageDB ?? -120), .float(l?.peakDB ?? -120)]
    })
}
