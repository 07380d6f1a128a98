import AQCore
import Foundation

/// Which implementation of libjack this process runs on: jackd2's own, or PipeWire's
/// (`pw-jack`, which puts PipeWire's `libjack.so.0` first on the library path).
///
/// The two differ where lost time is concerned (docs/pipewire.md, docs/timing.md): on
/// PipeWire an overrun really drops the late cycle (the sink plays silence and its counter
/// skips a period: only skipping keeps the tracks where the sink plays them); on jackd2 the
/// counter moves on after an xrun while every client still processed every cycle (only keeping
/// every frame keeps the tracks in step with the other clients).
///
/// Thread safety: a plain value.
public enum JackImplementation: Sendable, Equatable, CustomStringConvertible {
    /// jackd2's libjack (or another that is not PipeWire's).
    case jackd
    /// PipeWire's libjack.
    case pipewire

    /// The implementation of the libjack loaded in this process: PipeWire's when the
    /// `libjack` mapped into it (`/proc/self/maps`) lies in a `pipewire` directory (Debian:
    /// `/usr/lib/x86_64-linux-gnu/pipewire-0.3/jack/libjack.so.0`). Any thread.
    public static let current: JackImplementation = {
        // Read to the end: a /proc file reports size 0, and a size-based read stops short.
        guard let fh = FileHandle(forReadingAtPath: "/proc/self/maps") else { return .jackd }
        defer { try? fh.close() }
        let maps = String(decoding: fh.readDataToEndOfFile(), as: UTF8.self)
        let jacks = maps.split(separator: "\n").filter { $0.contains("/libjack.so") }
        return jacks.contains { $0.contains("pipewire") } ? .pipewire : .jackd
    }()

    /// What this implementation's lost time means for the device's sample time: keep every
    /// frame on jackd2, follow the wall clock on PipeWire (see the type's documentation).
    public var defaultLostTimePolicy: LostTimePolicy {
        switch self {
        case .jackd: .keepEveryFrame
        case .pipewire: .followWallClock
        }
    }

    /// Whether the server calling a client again with the previous call's counter and cycle
    /// time is a graph cycle of its own: jackd2 catching up on a late client calls it for the
    /// missed cycle and the current one back to back, both reading the current clock (their
    /// outputs are both taken downstream); pipewire-jack's second call is not a cycle (the sink
    /// plays one of the two). See ``DeviceTimekeeper/repeatedCallsAreCycles``.
    public var repeatedCallsAreCycles: Bool { self == .jackd }

    public var description: String {
        switch self {
        case .jackd: "jackd2's libjack"
        case .pipewire: "PipeWire's libjack"
        }
    }
}
