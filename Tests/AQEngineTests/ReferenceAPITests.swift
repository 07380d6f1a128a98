import AQCore
import AQEngine
import AQTypes
import Foundation
import Testing

/// The functions of the reference the issue found missing.
@Suite struct ReferenceAPITests {
    func code(_ body: () throws -> Void) -> AudioQueueError.Code? {
        do { try body(); return nil } catch let e as AudioQueueError { return e.code } catch { return nil }
    }

    /// `AudioQueueSetOfflineRenderFormat` + `AudioQueueOfflineRender`: a loop of "render,
    /// refill in the callback" on one thread; every frame rendered is the frame enqueued.
    @Test func offlineRenderOfOneQueueWithSynchronousCallbacks() throws {
        let (engine, _) = try manualEngine(channels: 2)
        defer { engine.close() }
        let next = Counter()  // the next source frame the callback writes
        let refills = Counter()
        @Sendable func fill(_ b: AudioQueueBuffer) {
            let p = b.audioData.bindMemory(to: Int16.self, capacity: 100)
            for i in 0..<100 { p[i] = Int16((next.value + i) % 1000) }
            next.add(100)
            b.audioDataByteSize = 200
        }
        let q = try engine.newOutput(format: int16Mono48k) { q, b in
            refills.add()
            fill(b)
            _ = try? q.enqueue(b)
        }
        let other = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let loud = try other.allocateBuffer(capacity: 20000)
        fillMono16(loud, frames: 10000, impulses: Array(0..<10000))
        try other.enqueue(loud)
        try other.start()
        for _ in 0..<3 {
            let b = try q.allocateBuffer(capacity: 200)
            fill(b)
            try q.enqueue(b)
        }
        let float1 = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 1, bits: 32, isFloat: true)
        #expect(code { try q.offlineRender(at: AudioTimeStamp(sampleTime: 0), into: try q.allocateBuffer(capacity: 1024), frames: 256) } == .invalidOfflineMode)
        try q.setOfflineRenderFormat(float1)
        let out = try q.allocateBuffer(capacity: 256 * 4)
        var rendered: [Float] = []
        for i in 0..<50 {
            try q.offlineRender(at: AudioTimeStamp(sampleTime: Double(i * 100)), into: out, frames: 100)
            #expect(out.audioDataByteSize == 400)
            let p = out.audioData.bindMemory(to: Float.self, capacity: 100)
            rendered += (0..<100).map { p[$0] }
            // The callback of the buffer that finished ran (and refilled it) before it returned.
            #expect(refills.value == i + 1)
        }
        let expected = (0..<5000).map { Float($0 % 1000) / 32768 }
        let wrong = zip(rendered, expected).filter { $0 != $1 }.count
        #expect(rendered.count == 5000 && wrong == 0, "\(wrong) frames differ: the queue alone, frame for frame (the other queue is not mixed in)")
        #expect(code { try q.offlineRender(at: AudioTimeStamp(sampleTime: 0), into: out, frames: 100) } == .invalidParameter)
        #expect(code { try q.offlineRender(at: AudioTimeStamp(sampleTime: 5000), into: out, frames: 257) } == .invalidPropertySize)
        #expect(code { try q.setOfflineRenderFormat(.linearPCM(sampleRate: 44100, channels: 1, bits: 16)) } == .unsupportedDataFormat)
    }

    /// The engine's mix, offline, as 16-bit stereo at a device time.
    @Test func offlineRenderOfTheMix() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        let b = try q.allocateBuffer(capacity: 2000)
        fillMono16(b, frames: 1000, impulses: [10, 600])
        try q.enqueue(b)
        try q.start(at: AudioTimeStamp(sampleTime: 0))
        let data = UnsafeMutableRawPointer.allocate(byteCount: 4 * 512, alignment: 4)
        defer { data.deallocate() }
        let s16 = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 2, bits: 16)
        let n = try engine.offlineRender(at: AudioTimeStamp(sampleTime: 500), frames: 512, format: s16, into: data, capacity: 4 * 512)
        #expect(n == 2048)
        let p = data.bindMemory(to: Int16.self, capacity: 1024)
        let nonZeroFrames = (0..<512).filter { p[2 * $0] != 0 }
        #expect(nonZeroFrames == [100])
        #expect(p[200] == 16384 && p[201] == 16384)
        #expect(device.currentFrame == 1012)
    }

    /// `AudioQueuePrime` with a frame count: the frames decoded and waiting.
    @Test func primeReportsFramesPrepared() throws {
        let (engine, device) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        for frames in [100, 250] {
            let b = try q.allocateBuffer(capacity: 1000)
            fillMono16(b, frames: frames, impulses: [])
            try q.enqueue(b, trimFramesAtStart: 10)
        }
        #expect(try q.prime(framesToPrepare: 0) == 330)
        #expect(try q.prime(framesToPrepare: 100) == 330)
        #expect(code { _ = try q.prime(framesToPrepare: -1) } == .invalidParameter)
        try q.start()
        _ = device.render(frames: 128, cycle: 128)
        engine.deliverPendingEvents()
        #expect(try q.prime(framesToPrepare: 0) == 240)
    }

    /// `AudioQueueGetPropertySize`, `AudioQueueGetProperty`, `AudioQueueSetProperty` by ID,
    /// with the reference's sizes.
    @Test func propertiesByID() throws {
        let (engine, device) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let id = AudioQueuePropertyID.self
        #expect(try q.propertySize(id.isRunning.rawValue) == 4)
        #expect(try q.propertySize(id.deviceSampleRate.rawValue) == 8)
        #expect(try q.propertySize(id.deviceNumberChannels.rawValue) == 4)
        #expect(try q.propertySize(id.enableLevelMetering.rawValue) == 4)
        #expect(try q.propertySize(id.channelLayout.rawValue) == 12)
        #expect(try q.propertySize(id.currentDevice.rawValue) == "manual".utf8.count)
        #expect(try q.propertySize(id.magicCookie.rawValue) == 0)
        #expect(code { _ = try q.propertySize(0x1234) } == .invalidProperty)
        #expect(code { _ = try q.property(id.currentLevelMeter.rawValue) } == .invalidProperty)
        let rate = try q.property(id.deviceSampleRate.rawValue)
        #expect(rate.withUnsafeBytes { Double(bitPattern: UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) } == 48000)
        #expect(try q.property(id.deviceNumberChannels.rawValue) == [2, 0, 0, 0])
        try q.setProperty(id.enableLevelMetering.rawValue, [1, 0, 0, 0])
        #expect(q.isLevelMeteringEnabled)
        #expect(try q.propertySize(id.currentLevelMeter.rawValue) == 16)
        #expect(try q.propertySize(id.currentLevelMeterDB.rawValue) == 16)
        #expect(code { try q.setProperty(id.enableLevelMetering.rawValue, [1]) } == .invalidPropertySize)
        #expect(code { try q.setProperty(id.isRunning.rawValue, [1, 0, 0, 0]) } == .invalidProperty)
        #expect(code { try q.setProperty(id.deviceSampleRate.rawValue, [UInt8](repeating: 0, count: 8)) } == .invalidProperty)
        // A layout by bytes: two descriptions, right then left.
        var layout: [UInt8] = []
        for v: UInt32 in [0, 0, 2, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0] { withUnsafeBytes(of: v.littleEndian) { layout += $0 } }
        try q.setProperty(id.channelLayout.rawValue, layout)
        #expect(try q.property(id.channelLayout.rawValue) == layout)
        #expect(code { try q.setProperty(id.channelLayout.rawValue, Array(layout.dropLast())) } == .invalidPropertySize)
        let b = try q.allocateBuffer(capacity: 400)
        let p = b.audioData.bindMemory(to: Int16.self, capacity: 200)
        p.initialize(repeating: 0, count: 200)
        p[0] = 16384  // left channel, frame 0: plays on the right output
        b.audioDataByteSize = 400
        try q.enqueue(b)
        try q.start()
        let out = device.render(frames: 128, cycle: 128)
        #expect(nonZero(out[0]).isEmpty && nonZero(out[1]) == [0], "the layout's channel order applies")
        // The started event reaches the queue on the events thread: once isRunning reads true,
        // the property (the same flag, read after it) reads 1 too.
        let running = q.isRunning
        let property = try q.property(id.isRunning.rawValue)
        #expect(!running || property == [1, 0, 0, 0])
    }

    /// The channel layout is applied to the channel order: MPEG 5.1 C (L C R Ls Rs LFE) on a
    /// six-output device puts each channel on its speaker's output (WAVE order L R C LFE Ls Rs).
    @Test func channelLayoutOrdersChannels() throws {
        let (engine, device) = try manualEngine(channels: 6)
        defer { engine.close() }
        let six = AudioStreamBasicDescription.linearPCM(sampleRate: 48000, channels: 6, bits: 16)
        let q = try engine.newOutput(format: six) { _, _ in }
        try q.setChannelLayout(.mpeg51C)
        #expect(q.channelLayout == .mpeg51C)
        let b = try q.allocateBuffer(capacity: 12 * 10)
        let p = b.audioData.bindMemory(to: Int16.self, capacity: 60)
        p.initialize(repeating: 0, count: 60)
        for c in 0..<6 { p[c * 6 + c] = 16384 }  // channel c sounds at frame c
        b.audioDataByteSize = 120
        try q.enqueue(b)
        try q.start()
        let out = device.render(frames: 16, cycle: 16)
        // Channel → output: L→0, C→2, R→1, Ls→4, Rs→5, LFE→3.
        #expect(out.map { nonZero($0) } == [[0], [2], [1], [5], [3], [4]])
        #expect(code { try q.setChannelLayout(.stereo) } == .invalidPropertySize)
    }

    /// Listeners of every property set through the API run on the setting thread after the
    /// change; `CurrentDevice` accepts the engine's own device only.
    @Test func listenersForEverySettableProperty() throws {
        let (engine, _) = try manualEngine(channels: 2)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Stereo48k) { _, _ in }
        let heard = Recorder<AudioQueuePropertyID>()
        let me = pthread_self()
        let sameThread = Counter()
        for id in [AudioQueuePropertyID.channelLayout, .enableLevelMetering, .currentDevice, .magicCookie] {
            q.addPropertyListener(id) { _, id in
                heard.append(id)
                if pthread_equal(pthread_self(), me) != 0 { sameThread.add() }
            }
        }
        try q.setChannelLayout(.stereo)
        try q.setLevelMeteringEnabled(true)
        try q.setCurrentDevice("manual")
        #expect(code { try q.setCurrentDevice("jack:default:other") } == .invalidDevice)
        #expect(heard.values == [.channelLayout, .enableLevelMetering, .currentDevice])
        #expect(sameThread.value == 3)
    }

    /// Volume outside 0…1 is refused, set or in a parameter event.
    @Test func volumeRange() throws {
        let (engine, _) = try manualEngine(channels: 1)
        defer { engine.close() }
        let q = try engine.newOutput(format: int16Mono48k) { _, _ in }
        #expect(code { try q.setParameter(.volume, 1.5) } == .invalidParameter)
        #expect(code { try q.setParameter(.volume, -0.1) } == .invalidParameter)
        #expect(code { try q.setParameter(.volume, .nan) } == .invalidParameter)
        try q.setParameter(.volume, 1)
        try q.setParameter(.volume, 0)
        let b = try q.allocateBuffer(capacity: 200)
        fillMono16(b, frames: 100, impulses: [1])
        #expect(code { try q.enqueue(b, parameterEvents: [AudioQueueParameterEvent(.volume, 2)]) } == .invalidParameter)
        #expect(q.parameter(.volume) == 0)
    }
}
