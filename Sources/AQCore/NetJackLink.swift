import Synchronization

/// A function a device calls once per cycle after the engine has rendered it, with the device
/// frame of the cycle's first frame and the buffers of the device's side ports (ports of the
/// device's client that the engine does not mix into: ``NetJackLink``'s stamps). It must be
/// realtime-safe: no allocation, lock, wait, print or throw.
///
/// Thread safety: a plain value; the function runs on the device's render (process) thread.
/// The context must stay valid until the device no longer calls it (removed, device stopped).
public struct CycleHook: @unchecked Sendable {
    /// Called once per rendered cycle: `frame` is the device frame (the engine's sample time)
    /// of the cycle's first frame, `counter` the server's own frame counter of that cycle,
    /// `frames` the cycle's length; `inputs` (`inputCount`) and `outputs` (`outputCount`) are
    /// the side ports' buffers, `frames` long (an output not written holds what the buffer
    /// held before: the device zeroes them before the call).
    public typealias Process = @convention(c) (
        _ context: UnsafeMutableRawPointer?, _ frame: Int64, _ counter: UInt32, _ frames: UInt32,
        _ inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ inputCount: Int,
        _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ outputCount: Int
    ) -> Void

    /// What the function gets as `context`.
    public var context: UnsafeMutableRawPointer
    /// The per-cycle function.
    public var process: Process

    /// A hook with its context.
    public init(context: UnsafeMutableRawPointer, process: Process) {
        self.context = context
        self.process = process
    }
}

/// The arithmetic of a part started exactly on a netjack2 slave (docs/netjack.md, "A part on a
/// slave"): pure functions on ``FrameStamp`` values, any thread (the render thread included).
///
/// - **D** = slave device frame − master device frame, read where the slave receives the
///   master's frame stamps (the master→slave latency is 0).
/// - **L** = master device frame at which the slave's echo of a stamp arrives − the stamped
///   frame: the slave→master latency.
/// - The master's start frame `F_master` is carried as the stamp of `F_master − L`, the master
///   frame at which the slave must render; the slave renders at `F_slave = (F_master − L) + D`.
public enum NetJackStart {
    /// The slave device frame at which to start, from a start stamp (`renderFrame`, the master
    /// frame mod 2^24 at which the slave must render) read beside a master frame stamp
    /// (`masterFrame`, mod 2^24) at slave device frame `slaveFrame`: `slaveFrame` plus how far
    /// the render frame lies after the master frame there, on the 24-bit circle as the signed
    /// value nearest zero. Exact when the start is within ±2^23 frames (±175 s at 48 kHz) of
    /// where it was read: the full frame is never carried, D never needs to be known in full.
    @_noLocks
    @inlinable
    public static func slaveFrame(renderFrame: Int, masterFrame: Int, atSlaveFrame slaveFrame: Int64) -> Int64 {
        // renderFrame − masterFrame on the circle: the offset of renderFrame "to" masterFrame,
        // negated.
        let ahead = -FrameStamp.offset(from: renderFrame, to: UInt64(truncatingIfNeeded: masterFrame))
        return slaveFrame &+ Int64(ahead)
    }

    /// The stamp the master writes on its second channel for a session that starts on master
    /// frame `masterStart` when the slave→master latency is `latency`: the stamp of the master
    /// frame `masterStart − latency`, at which the slave must render.
    @_noLocks
    @inlinable
    public static func renderStamp(masterStart: Int64, latency: Int) -> Float {
        FrameStamp.sample(for: UInt64(bitPattern: masterStart &- Int64(latency)))
    }

    /// Why a start the stamps give cannot be honoured, or nil when it can: `frame` (the slave
    /// frame the start stamp gives) earlier than `earliest` (the earliest frame the slave's
    /// engine can still start a part on, `nearestStartTime`). A start is never moved later:
    /// the part would be out of step on the master by as much.
    public static func refusal(frame: Int64, earliest: Int64, sampleRate: Double) -> String? {
        guard frame < earliest else { return nil }
        let ms = Double(earliest - frame) / sampleRate * 1000
        let ahead = (ms * 1000).rounded() / 1000
        return "the master's start stamp came too late: the part must render at slave device frame \(frame), \(earliest - frame) frames (\(ahead) ms) before the earliest frame a start can still honour (\(earliest)); nothing started (start the slave's aqsync before the master decides its start, and give the master's --start-at more time)"
    }
}

/// One side of an exact start across a netjack2 connection (docs/netjack.md): the render-thread
/// state and the control side's view of it, in memory allocated once (no Swift object is
/// touched on the render thread).
///
/// - **Master** (``Role/master``): each cycle writes the stamps of its device frames on side
///   output 0 (to the slave's `to_slave_N`) and the start stamp on side output 1 (0 until
///   ``setRenderStamp(masterStart:latency:)``). L comes from the slave's echo read by a
///   second client (``NetJackLinkState/recordEcho(_:_:count:counter:)``), not by the device: one client both
///   feeding and reading the slave's ports on the master closes a loop JACK breaks with a period
///   of delay.
/// - **Slave** (``Role/slave``): each cycle reads the master's frame stamps on side input 0
///   (D), the start stamp on side input 1 (the start frame, ``slaveStart``, the latest D's), and echoes side
///   input 0 on side output 0 (back to the master, for L).
///
/// Thread safety: ``hook`` runs on one render thread at a time; ``NetJackLinkState/recordEcho(_:_:count:counter:)``
/// on one (other) client's process thread; everything else from any thread, none blocks.
public final class NetJackLink: @unchecked Sendable {
    /// Which side of the connection.
    public enum Role: Sendable { case master, slave }

    /// An offset watched over time (D on the slave, L on the master). A plain value.
    public struct Watch: Sendable, Equatable, CustomStringConvertible {
        /// Stamps read.
        public var stamps: Int
        /// The first and latest value read (nil: none yet).
        public var first: Int?, latest: Int?
        /// The smallest and largest values read (nil: none).
        public var range: ClosedRange<Int>?
        /// Times the value differed from the previous stamp's.
        public var changes: Int

        public var description: String {
            guard let latest, let range, let first else { return "no stamps" }
            if changes == 0 { return "\(latest) throughout (\(stamps) stamps)" }
            return "\(first) at first, \(latest) now (\(range.lowerBound)…\(range.upperBound), \(changes) changes, \(stamps) stamps)"
        }
    }

    /// The plain memory the render thread and the echo reader use.
    public typealias State = NetJackLinkState

    /// The side of the connection.
    public let role: Role
    /// The state the hook and the echo reader are given (plain memory, freed with the link:
    /// keep the link until the device no longer calls the hook).
    public let state: UnsafeMutablePointer<State>

    /// A link for `role`. Any thread.
    public init(role: Role) {
        self.role = role
        state = .allocate(capacity: 1)
        state.initialize(to: State(master: role == .master))
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The device's per-cycle hook for this link (side ports: master 2 outputs; slave 2 inputs
    /// and 1 output).
    public var hook: CycleHook { CycleHook(context: UnsafeMutableRawPointer(state), process: netJackLinkCycle) }

    /// Master: from the next cycle on, side output 1 carries the stamp of master frame
    /// `masterStart − latency` (``NetJackStart/renderStamp(masterStart:latency:)``). Any thread.
    public func setRenderStamp(masterStart: Int64, latency: Int) {
        state.pointee.renderStamp.store(NetJackStart.renderStamp(masterStart: masterStart, latency: latency).bitPattern, ordering: .releasing)
    }

    /// Slave: the device frame the latest start stamp gave (nil: none read yet), and how many
    /// times it changed (D moved by a lost cycle, or the master decided another start). Any
    /// thread.
    public var slaveStart: (frame: Int64, others: Int)? {
        let f = state.pointee.slaveStart.load(ordering: .acquiring)
        return f == .min ? nil : (f, state.pointee.otherStarts.load(ordering: .relaxed))
    }

    /// The watched offset: D on the slave (slave device frame − master device frame), L on the
    /// master (the echo's arrival − its stamp, master device frames). Any thread; read while
    /// the render thread records, values of two cycles may mix (each is whole).
    public var watch: Watch {
        let n = state.pointee.stamps.load(ordering: .acquiring)
        guard n > 0 else { return Watch(stamps: 0, first: nil, latest: nil, range: nil, changes: 0) }
        let lo = state.pointee.low.load(ordering: .relaxed), hi = state.pointee.high.load(ordering: .relaxed)
        return Watch(
            stamps: n, first: state.pointee.first.load(ordering: .relaxed), latest: state.pointee.latest.load(ordering: .relaxed),
            range: lo <= hi ? lo...hi : nil, changes: state.pointee.changes.load(ordering: .relaxed))
    }
}

/// ``NetJackLink/hook``'s C function. Render thread.
@_noLocks
private func netJackLinkCycle(
    _ context: UnsafeMutableRawPointer?, _ frame: Int64, _ counter: UInt32, _ frames: UInt32,
    _ inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ inputCount: Int,
    _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ outputCount: Int
) {
    guard let context else { return }
    NetJackLinkState.cycle(
        context.assumingMemoryBound(to: NetJackLinkState.self), frame: frame, counter: counter, frames: Int(frames),
        inputs: inputs, inputCount: inputCount, outputs: outputs, outputCount: outputCount)
}

/// The plain memory of a ``NetJackLink`` that its render-thread hook and the master's echo
/// reader use (no Swift object is touched there).
///
/// Thread safety: atomics; ``cycle(_:frame:counter:frames:inputs:inputCount:outputs:outputCount:)``
/// from one render thread at a time, ``recordEcho(_:_:count:counter:)`` from one echo reader.
public struct NetJackLinkState: ~Copyable {
    let master: Bool
    /// Master: the start stamp's sample (as bits; 0: no start decided).
    let renderStamp = Atomic<UInt32>(0)
    /// Master: device frame − server counter, mod 2^24, of the latest cycle (for the echo
    /// reader, which sees the server's counter only); −1 before the first cycle.
    let deviceMinusCounter = Atomic<Int>(-1)
    /// Slave: the start frame the latest start stamp gave (slave device frame; `Int64.min`:
    /// none yet), and how many times it changed (D moved: a lost cycle; or another start).
    let slaveStart = Atomic<Int64>(.min)
    let otherStarts = Atomic<Int>(0)
    /// The watched offset (D on the slave, L on the master): stamps, first, latest, range,
    /// changes.
    let stamps = Atomic<Int>(0), first = Atomic<Int>(0), latest = Atomic<Int>(0)
    let low = Atomic<Int>(.max), high = Atomic<Int>(.min), changes = Atomic<Int>(0)

    init(master: Bool) { self.master = master }

    /// Records one offset (one writer at a time).
    @_noLocks
    func watch(_ d: Int) {
        let n = stamps.load(ordering: .relaxed)
        if n == 0 {
            first.store(d, ordering: .relaxed)
        } else if latest.load(ordering: .relaxed) != d {
            changes.wrappingAdd(1, ordering: .relaxed)
        }
        latest.store(d, ordering: .relaxed)
        if d < low.load(ordering: .relaxed) { low.store(d, ordering: .relaxed) }
        if d > high.load(ordering: .relaxed) { high.store(d, ordering: .relaxed) }
        stamps.store(n + 1, ordering: .releasing)
    }

    /// Master, on the echo reader's process thread: reads the slave's echo of the master's
    /// frame stamps in `count` samples of `buffer`, whose first sample is the reader's server
    /// counter `counter`; L = (the master device frame of that sample) − the echoed stamp.
    /// Nothing before the hook has run a cycle (the device frame is not known yet).
    @_noLocks
    public static func recordEcho(_ state: UnsafeMutablePointer<NetJackLinkState>, _ buffer: UnsafePointer<Float>, count: Int, counter: UInt32) {
        let shift = state.pointee.deviceMinusCounter.load(ordering: .acquiring)
        guard shift >= 0 else { return }
        for i in 0..<count {
            guard let stamped = FrameStamp.frame(in: buffer[i]) else { continue }
            let device = (Int(counter) &+ i &+ shift) & 0xFF_FFFF
            state.pointee.watch(FrameStamp.offset(from: stamped, to: UInt64(device)))
        }
    }

    /// One cycle of the link (``hook``'s function), exposed for tests without a server. Render
    /// thread.
    @_noLocks
    public static func cycle(
        _ state: UnsafeMutablePointer<NetJackLinkState>, frame: Int64, counter: UInt32, frames: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, inputCount: Int,
        outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, outputCount: Int
    ) {
        if state.pointee.master {
            state.pointee.deviceMinusCounter.store(Int((frame &- Int64(counter)) & 0xFF_FFFF), ordering: .releasing)
            guard let outputs, outputCount >= 2 else { return }
            FrameStamp.write(outputs[0], count: frames, firstFrame: UInt64(bitPattern: frame))
            let start = Float(bitPattern: state.pointee.renderStamp.load(ordering: .acquiring))
            outputs[1].update(repeating: start, count: frames)
            return
        }
        guard let inputs, inputCount >= 2 else { return }
        let stamps = inputs[0], starts = inputs[1]
        for i in 0..<frames {
            guard let m = FrameStamp.frame(in: stamps[i]) else { continue }
            let here = frame &+ Int64(i)
            state.pointee.watch(FrameStamp.offset(from: m, to: UInt64(bitPattern: here)))
            guard let r = FrameStamp.frame(in: starts[i]) else { continue }
            let f = NetJackStart.slaveFrame(renderFrame: r, masterFrame: m, atSlaveFrame: here)
            // The latest: a cycle the slave loses moves D, and the frame with it, by a period.
            let known = state.pointee.slaveStart.load(ordering: .relaxed)
            if known != f {
                if known != .min { state.pointee.otherStarts.wrappingAdd(1, ordering: .relaxed) }
                state.pointee.slaveStart.store(f, ordering: .releasing)
            }
        }
        if let outputs, outputCount >= 1 {
            let echo = outputs[0]
            for i in 0..<frames { echo[i] = stamps[i] }
        }
    }
}

/// Several ``NetJackLink``s driven by one device's hook: a master aqsync serving several
/// netjack2 slaves (one link per slave: its own frame stamps, start stamp and echo), or one
/// link alone. Link `k` is handed the side ports `k × inputsPerLink ..< (k + 1) × inputsPerLink`
/// and `k × outputsPerLink ..< (k + 1) × outputsPerLink` (master: 0 inputs and 2 outputs per
/// link; slave: 2 inputs and 1 output).
///
/// The links are fixed when the group is made, before the device calls its hook: the render
/// thread reads a table allocated once (the links' state pointers), never an array, and takes
/// no lock. Thread safety: ``hook`` runs on one render thread at a time; the rest is
/// read-only, any thread.
public final class NetJackLinks: @unchecked Sendable {
    /// The links, in side-port order.
    public let links: [NetJackLink]
    /// Side ports each link is handed.
    public let inputsPerLink: Int, outputsPerLink: Int
    private let table: UnsafeMutablePointer<NetJackLinksTable>
    private let states: UnsafeMutablePointer<UnsafeMutablePointer<NetJackLinkState>>

    /// A group of `links` (all of one role), each handed `inputsPerLink` side inputs and
    /// `outputsPerLink` side outputs; by default what the role needs (master: 0 and 2, slave:
    /// 2 and 1). Any thread.
    public init(_ links: [NetJackLink], inputsPerLink: Int? = nil, outputsPerLink: Int? = nil) {
        self.links = links
        let master = links.first?.role != .slave
        self.inputsPerLink = inputsPerLink ?? (master ? 0 : 2)
        self.outputsPerLink = outputsPerLink ?? (master ? 2 : 1)
        states = .allocate(capacity: max(1, links.count))
        for (k, l) in links.enumerated() { (states + k).initialize(to: l.state) }
        table = .allocate(capacity: 1)
        table.initialize(to: NetJackLinksTable(
            count: links.count, inputsPerLink: self.inputsPerLink, outputsPerLink: self.outputsPerLink, states: states))
    }

    deinit {
        table.deinitialize(count: 1)
        table.deallocate()
        states.deinitialize(count: links.count)
        states.deallocate()
    }

    /// The device's per-cycle hook for every link: keep the group (and so its links) until the
    /// device no longer calls it.
    public var hook: CycleHook { CycleHook(context: UnsafeMutableRawPointer(table), process: netJackLinksCycle) }

    /// One cycle of every link (the hook's function), for tests without a server. Render
    /// thread.
    @_noLocks
    public func cycle(
        frame: Int64, counter: UInt32, frames: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, inputCount: Int,
        outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, outputCount: Int
    ) {
        NetJackLinksTable.cycle(table, frame: frame, counter: counter, frames: frames, inputs: inputs, inputCount: inputCount, outputs: outputs, outputCount: outputCount)
    }
}

/// What the render thread reads of a ``NetJackLinks``: plain memory, fixed before the hook runs.
struct NetJackLinksTable {
    let count: Int, inputsPerLink: Int, outputsPerLink: Int
    let states: UnsafeMutablePointer<UnsafeMutablePointer<NetJackLinkState>>

    /// Each link's cycle with its own side ports; a link whose ports are not all there is
    /// skipped. Render thread: no lock, no allocation.
    @_noLocks
    static func cycle(
        _ table: UnsafeMutablePointer<NetJackLinksTable>, frame: Int64, counter: UInt32, frames: Int,
        inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, inputCount: Int,
        outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, outputCount: Int
    ) {
        let t = table.pointee
        for k in 0..<t.count {
            let i0 = k * t.inputsPerLink, o0 = k * t.outputsPerLink
            guard i0 + t.inputsPerLink <= inputCount, o0 + t.outputsPerLink <= outputCount else { return }
            var ins: UnsafePointer<UnsafeMutablePointer<Float>>?
            var outs: UnsafePointer<UnsafeMutablePointer<Float>>?
            if let inputs, t.inputsPerLink > 0 { ins = inputs + i0 }
            if let outputs, t.outputsPerLink > 0 { outs = outputs + o0 }
            NetJackLinkState.cycle(
                t.states[k], frame: frame, counter: counter, frames: frames,
                inputs: ins, inputCount: t.inputsPerLink, outputs: outs, outputCount: t.outputsPerLink)
        }
    }
}

/// ``NetJackLinks/hook``'s C function. Render thread.
@_noLocks
private func netJackLinksCycle(
    _ context: UnsafeMutableRawPointer?, _ frame: Int64, _ counter: UInt32, _ frames: UInt32,
    _ inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ inputCount: Int,
    _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ outputCount: Int
) {
    guard let context else { return }
    NetJackLinksTable.cycle(
        context.assumingMemoryBound(to: NetJackLinksTable.self), frame: frame, counter: counter, frames: Int(frames),
        inputs: inputs, inputCount: inputCount, outputs: outputs, outputCount: outputCount)
}
