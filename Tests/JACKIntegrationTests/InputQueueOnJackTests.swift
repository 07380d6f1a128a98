import AQEngine
import AQJack
import AQJackServer
import AQTesting
import Foundation
import Synchronization
import Testing

/// An input queue on a private JACK server records the device's own outputs (its `in_1`
/// connected to its `out_1`): the impulses an output queue plays come back in the input
/// callback's buffers exactly as far apart as they were played, and the buffers' start times
/// follow one another frame for frame (issue 11).
@Suite("Input queues on a private JACK server", .serialized)
struct InputQueueOnJackTests {
    @Test(.timeLimit(.minutes(1)))
    func recordsItsOwnOutputAtExactFrames() throws {
        let server = try PrivateJackServer(sampleRate: 48000, period: 256)
        defer { server.stop() }
        let device = try JackDevice(options: JackDeviceOptions(
            clientName: "aqsync-rec", serverName: server.name, outputChannels: 1, inputChannels: 1,
            outputConnections: .none, inputConnections: .ports(["aqsync-rec:out_1"])))
        let engine = try AudioQueueEngine(device: device)
        defer { engine.close() }
        let mono = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 32, isFloat: true)
        let got = Mutex<[(start: Int64, samples: [Float])]>([])
        let input = try engine.newInput(format: mono) { q, b, t, descriptions in
            #expect(descriptions.isEmpty)
            #expect(t.flags.contains(.sampleTimeValid) && t.flags.contains(.hostTimeValid))
            let n = b.audioDataByteSize / 4
            let p = b.audioData.bindMemory(to: Float.self, capacity: max(n, 1))
            let samples = (0..<n).map { p[$0] }
            got.withLock { $0.append((Int64(t.sampleTime), samples)) }
            try? q.enqueue(b)
        }
        for _ in 0..<6 { try input.enqueue(try input.allocateBuffer(capacity: 1021 * 4)) }
        let output = try engine.newOutput(format: mono) { _, _ in }
        let b = try output.allocateBuffer(capacity: 6000 * 4)
        let p = b.audioData.bindMemory(to: Float.self, capacity: 6000)
        p.initialize(repeating: 0, count: 6000)
        for i in [0, 257, 1021, 4999] { p[i] = 0.5 }
        b.audioDataByteSize = 6000 * 4
        try output.enqueue(b)
        let recordFrom = try input.start()
        let origin = try engine.start([output], at: engine.nearestStartTime(AudioTimeStamp(sampleTime: Double(recordFrom) + 2400)))
        Thread.sleep(forTimeInterval: 0.6)  // recording time, not synchronisation
        try input.stop(immediately: true)
        let buffers = got.withLock { $0 }
        try #require(!buffers.isEmpty)
        // Consecutive: each buffer starts where the previous ended (no frame lost or repeated).
        #expect(buffers.first?.start == recordFrom)
        for (a, b) in zip(buffers, buffers.dropFirst()) { #expect(b.start == a.start + Int64(a.samples.count)) }
        #expect(input.lostFrames == 0)
        let found = buffers.flatMap { buf in buf.samples.indices.filter { buf.samples[$0] == 0.5 }.map { buf.start + Int64($0) } }
        try #require(found.count == 4, "\(found)")
        #expect(found.map { $0 - found[0] } == [0, 257, 1021, 4999])
        // The loop through the server takes whole periods at most: the first impulse is
        // recorded at the frame it played or whole periods later.
        let delay = found[0] - origin
        #expect(delay >= 0 && delay % 256 == 0 && delay <= 4 * 256, "delay \(delay)")
    }
}
