import AQEngine
import Foundation

/// The tracks' meters: for the terminal's display (``levels()``) and for OSC's
/// `/aqsync/meters` (``currentLevelsDB()``).
extension SessionPlayer {
    /// Per track, per channel: the highest sample peak in dBFS (-120 for silence) of every
    /// render cycle since the previous call (`AudioQueue.peakSinceLastRead()`: a burst
    /// shorter than the time between two calls is not missed), or nil for a track whose
    /// metering is off. One reader: each call starts the next span. Any control thread.
    package func levels() -> [[Float]?] {
        tracks.map { t in (try? t.queue.peakSinceLastRead())?.map { $0 > 1e-6 ? 20 * log10($0) : -120 } }
    }

    /// Per track, the loudest channel's level now, in dBFS (−120 for silence), as
    /// `kAudioQueueProperty_CurrentLevelMeterDB` reports it (the queue's meter: average
    /// power and peak), or nil for a track whose metering is off (``Options/metering``). Not a
    /// reader of ``levels()``'s spans: both can be used at once (the terminal's meters and
    /// OSC's). Any control thread; does not block.
    package func currentLevelsDB() -> [(averageDB: Float, peakDB: Float)?] {
        tracks.map { t in
            guard let m = try? t.queue.currentLevelMeterDB(), !m.isEmpty else { return nil }
            return (m.map(\.averagePower).max()!, m.map(\.peakPower).max()!)
        }
    }
}
