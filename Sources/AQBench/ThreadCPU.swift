import Foundation

/// One thread's line of `/proc/PID/task/TID/stat`: its name, CPU time and scheduling policy
/// (the CPU time from `schedstat`, in ns, when the kernel has it: stat's clock ticks are 10 ms).
///
/// Thread safety: a plain value.
public struct ThreadCPU: Sendable, Equatable {
    public var tid: Int32
    public var name: String
    /// Time on a CPU, ns: utime + stime (× 10 ms) from stat, or schedstat's first field.
    public var cpuNs: Int64
    /// SCHED_OTHER 0, SCHED_FIFO 1, SCHED_RR 2, …
    public var policy: Int

    /// A realtime thread (SCHED_FIFO or SCHED_RR): in `aqsync play`, JACK's process thread.
    public var isRealtime: Bool { policy == 1 || policy == 2 }

    /// Parses a stat line (the name is between the first "(" and the last ")"; the fields after
    /// it are numbered from 3, state). Pure; nil when it is not one.
    public init?(statLine: String) {
        guard let open = statLine.firstIndex(of: "("), let close = statLine.lastIndex(of: ")"), open < close,
              let tid = Int32(statLine[..<open].trimmingCharacters(in: .whitespaces)) else { return nil }
        let rest = statLine[statLine.index(after: close)...].split(separator: " ")
        // rest[0] is field 3 (state): field k is rest[k - 3]. utime 14, stime 15, policy 41.
        guard rest.count >= 39, let u = Int(rest[11]), let s = Int(rest[12]), let p = Int(rest[38]) else { return nil }
        self.tid = tid
        name = String(statLine[statLine.index(after: open)..<close])
        cpuNs = Int64(u + s) * 10_000_000
        policy = p
    }

    public init(tid: Int32, name: String, cpuNs: Int64, policy: Int) {
        self.tid = tid
        self.name = name
        self.cpuNs = cpuNs
        self.policy = policy
    }

    /// Every thread of process `pid` now (empty when it is gone). Control thread.
    public static func threads(of pid: Int32) -> [ThreadCPU] {
        let dir = "/proc/\(pid)/task"
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        return tids.compactMap { tid in
            guard var t = (try? String(contentsOfFile: "\(dir)/\(tid)/stat", encoding: .utf8)).flatMap({ ThreadCPU(statLine: $0) }) else { return nil }
            if let ss = try? String(contentsOfFile: "\(dir)/\(tid)/schedstat", encoding: .utf8),
               let ns = ss.split(separator: " ").first.flatMap({ Int64($0) }) {
                t.cpuNs = ns
            }
            return t
        }
    }
}

/// The render side and the control side of a process's CPU time, from samples of its threads:
/// each thread's largest count seen (threads that ended keep their last sample). Pure.
///
/// Thread safety: a plain value.
public struct ThreadCPUSplit: Sendable, Equatable {
    private var last: [Int32: ThreadCPU] = [:]

    public init() {}

    public mutating func add(_ sample: [ThreadCPU]) {
        for t in sample {
            if let seen = last[t.tid], seen.cpuNs > t.cpuNs { continue }
            // A thread's policy is kept once realtime (JACK sets it after the thread starts).
            var t = t
            if let seen = last[t.tid], seen.isRealtime { t.policy = seen.policy }
            last[t.tid] = t
        }
    }

    /// CPU ns of the render side (realtime threads: JACK's process thread, "aqsync-render" in
    /// aqsync) and of all the others. aqsync's other threads ("aqsync-…": the events thread and
    /// the feeders, realtime below the render thread on a realtime server) are the control side
    /// whatever their policy; another program's realtime threads (ecasound's disk thread) count
    /// as its render side, as before.
    public var renderNs: Int64 { last.values.filter(Self.isRenderSide).reduce(0) { $0 + $1.cpuNs } }
    public var controlNs: Int64 { last.values.filter { !Self.isRenderSide($0) }.reduce(0) { $0 + $1.cpuNs } }

    static func isRenderSide(_ t: ThreadCPU) -> Bool {
        t.isRealtime && (t.name == "aqsync-render" || !t.name.hasPrefix("aqsync-"))
    }

    /// The control side's share of the CPU time seen (0 when none was seen).
    public var controlShare: Double {
        let total = renderNs + controlNs
        return total > 0 ? Double(controlNs) / Double(total) : 0
    }
}
