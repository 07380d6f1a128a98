import AQCore
import Foundation

/// What `aqsync bench` measures on a JACK server.
public struct LiveBenchOptions: Sendable {
    public var queues: Int
    /// Frames per period asked of a server aqsync starts; nil: 256. An existing server's
    /// period is used as it is.
    public var frames: Int?
    public var seconds: Double
    public var server: String?
    public var sampleRate: Int

    public init(queues: Int = 64, frames: Int? = nil, seconds: Double = 10, server: String? = nil, sampleRate: Int = 48000) {
        self.queues = queues
        self.frames = frames
        self.seconds = seconds
        self.server = server
        self.sampleRate = sampleRate
    }
}

public struct LiveBenchResultFigures: Sendable, Codable {
    public var mode = "live"
    public var queues: Int
    public var frames: Int
    public var seconds: Double
    public var sampleRate: Double
    public var periodUs: Double
    public var callbackUs: Percentiles
    public var wakeupUs: Percentiles
    public var translateErrorUs: Percentiles
    public var xruns: UInt64
    public var discontinuities: UInt64
    public var dspLoad: Double
    public var renderAllocations: Int
    public var cycles: Int

    enum CodingKeys: String, CodingKey {
        case mode, queues, frames, seconds, xruns, discontinuities, cycles
        case sampleRate = "sample_rate"
        case periodUs = "period_us"
        case callbackUs = "callback_us"
        case wakeupUs = "wakeup_us"
        case translateErrorUs = "translate_error_us"
        case dspLoad = "dsp_load"
        case renderAllocations = "render_allocations"
    }

    public var json: String { encodeJSON(self) }
}

public struct LiveBenchResult: Sendable {
    public var result: LiveBenchResultFigures
    public var callbackUs: [Double]
}

public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

public func runLiveBench(_ o: LiveBenchOptions, log: (String) -> Void) throws -> LiveBenchResult {
    throw BenchError("not yet")
}

public func describe(_ r: LiveBenchResultFigures, samples: [Double]) -> String { "" }
