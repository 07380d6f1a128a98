import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// `peakSinceLastRead()`: what a display redrawn every 100 ms reads, against a synthetic burst,
/// next to the per-cycle `currentLevelMeter()` it must not change.
@Suite struct MeterTests {
    static let floatMono48k = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 32, isFloat: true)

    /// A float mono buffer of `frames` frames of silence with a 1 kHz sine burst of peak
    /// `amplitude` and `burstFrames` frames at `at` (48 kHz: the sine's crest falls on a sample).
    func burst(_ q: AudioQueue, frames: Int, at: Int, burstFrames: Int, amplitude: Float) throws -> AudioQueueBuffer {
        let b = try q.allocateBuffer(capacity: frames * 4)
        let p = b.audioData.bindMemory(to: Float.self, capacity: frames)
        p.initialize(repeating: 0, count: frames)
        for i in 0..<burstFrames { p[at + i] = amplitude * Float(sin(2 * Double.pi * 1000 * Double(i) / 48000)) }
        b.audioDataByteSize = frames * 4
        return b
    }

    func dB(_ v: Float) -> Float { v > 0 ? 20 * log10(v) : -.infinity }

    /// A 2 ms −3 dBFS burst reads −3 dBFS in the 100 ms read span that holds it, and nothing in
    /// the others; the per-cycle meter, read at the same moments, misses it (it holds the
    /// latest 256-frame cycle only, as the reference's property does) but shows it during the
    /// cycle that played it.
    @Test func twoMillisecondBurstReadsItsPeak() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: Self.floatMono48k) { _, _ in }
        try q.setLevelMeteringEnabled(true)
        let amplitude = Float(pow(10, -3.0 / 20))
        // The burst at 250 ms: frames 12000…12095 (cycle 46 of 256 frames starts at 11776).
        try q.enqueue(try burst(q, frames: 48000, at: 12000, burstFrames: 96, amplitude: amplitude))
        try q.start()
        var spans: [Float] = []
        var perCycleAtReads: [Float] = []
        var perCycleMax: Float = 0
        for _ in 0..<5 {  // five reads, 100 ms (4800 frames, 18.75 cycles) apart
            var rendered = 0
            while rendered < 4800 {
                let n = min(256, 4800 - rendered)
                _ = device.render(frames: n, cycle: n)
                perCycleMax = max(perCycleMax, try q.currentLevelMeter()[0].peakPower)
                rendered += n
            }
            perCycleAtReads.append(try q.currentLevelMeter()[0].peakPower)
            spans.append(try q.peakSinceLastRead()[0])
        }
        #expect(abs(dB(spans[2]) - -3) < 0.01, "the span with the burst read \(dB(spans[2])) dBFS")
        #expect(spans[0] == 0 && spans[1] == 0 && spans[3] == 0 && spans[4] == 0, "\(spans)")
        #expect(perCycleAtReads.allSatisfy { $0 == 0 }, "the per-cycle meter changed meaning: \(perCycleAtReads)")
        #expect(abs(dB(perCycleMax) - -3) < 0.01, "the per-cycle meter never showed the burst")
        // A read starts a new span.
        #expect(try q.peakSinceLastRead()[0] == 0)
    }

    /// The span's peak is after the queue's volume, is not cut at full scale (+5 dBFS reads
    /// +5), survives the queue's stop until it is read, and a new queue in the slot starts at 0.
    @Test func spanPeakIsAfterVolumeUnclippedAndKeptOverAStop() throws {
        let (engine, device) = try manualEngine(
            channels: 1, capacities: RenderCapacities(queues: 1, buffersPerQueue: 8, commands: 64, outputChannels: 2))
        defer { engine.close() }
        let q = try engine.newOutput(format: Self.floatMono48k) { _, _ in }
        #expect(throws: AudioQueueError.self) { try q.peakSinceLastRead() }
        try q.setLevelMeteringEnabled(true)
        let loud = Float(pow(10, 5.0 / 20))
        try q.enqueue(try burst(q, frames: 1024, at: 100, burstFrames: 96, amplitude: loud))
        try q.setParameter(.volume, 0.5)
        try q.start()
        _ = device.render(frames: 1024, cycle: 256)
        try q.stop(immediately: true)
        engine.deliverPendingEvents()
        #expect(try q.currentLevelMeter()[0].peakPower == 0, "a stopped queue reads 0 per cycle")
        #expect(abs(dB(try q.peakSinceLastRead()[0]) - (5 + dB(0.5))) < 0.01)
        try q.setParameter(.volume, 1)
        try q.enqueue(try burst(q, frames: 1024, at: 100, burstFrames: 96, amplitude: loud))
        try q.start()
        _ = device.render(frames: 1024, cycle: 256)
        #expect(abs(dB(try q.peakSinceLastRead()[0]) - 5) < 0.01, "+5 dBFS is not cut at full scale")
        // Played but not read, then disposed: the next queue in the slot starts at 0.
        try q.enqueue(try burst(q, frames: 1024, at: 100, burstFrames: 96, amplitude: loud))
        _ = device.render(frames: 1024, cycle: 256)
        try q.dispose(immediately: true)
        engine.deliverPendingEvents()
        let next = try engine.newOutput(format: Self.floatMono48k) { _, _ in }
        try next.setLevelMeteringEnabled(true)
        #expect(try next.peakSinceLastRead()[0] == 0, "the new queue shows the old queue's peak")
        #expect(throws: AudioQueueError.self) { try q.peakSinceLastRead() }
    }
}
