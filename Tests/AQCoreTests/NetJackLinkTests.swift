import AQCore
import Testing

/// The arithmetic of an exact start on a netjack2 slave, without a server (docs/netjack.md, "A
/// part on a slave"): D from the master's stamps, the slave's start frame from the start
/// stamp (mod 2^24), a start that comes too late refused, and L from the echo.
@Suite struct NetJackLinkTests {
    /// Calls `body` with these side inputs (copied) and zeroed outputs as the device hands them
    /// (`frames` long each: the first buffer's length), then reads the outputs back.
    func withSidePorts(
        inputs: [[Float]], outputs: inout [[Float]],
        _ body: (_ frames: Int, _ inputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ inputCount: Int,
                 _ outputs: UnsafePointer<UnsafeMutablePointer<Float>>?, _ outputCount: Int) -> Void
    ) {
        let frames = (inputs.first ?? outputs.first ?? []).count
        var ins = inputs.map { b -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: b.count)
            p.initialize(from: b, count: b.count)
            return p
        }
        var outs = outputs.map { b -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: b.count)
            p.initialize(repeating: 0, count: b.count)
            return p
        }
        defer { for p in ins + outs { p.deallocate() } }
        ins.withUnsafeMutableBufferPointer { i in
            outs.withUnsafeMutableBufferPointer { o in
                body(frames, UnsafePointer(i.baseAddress), i.count, UnsafePointer(o.baseAddress), o.count)
            }
        }
        outputs = outs.enumerated().map { Array(UnsafeBufferPointer(start: $0.element, count: outputs[$0.offset].count)) }
    }

    /// Runs one cycle of `link` with these side inputs and outputs (`frames` long each).
    func cycle(_ link: NetJackLink, frame: Int64, counter: UInt32 = 0, inputs: inout [[Float]], outputs: inout [[Float]]) {
        withSidePorts(inputs: inputs, outputs: &outputs) { frames, i, ni, o, no in
            NetJackLinkState.cycle(link.state, frame: frame, counter: counter, frames: frames, inputs: i, inputCount: ni, outputs: o, outputCount: no)
        }
    }

    @Test func slaveStartFrameFromTheStamps() {
        // Master frame 1000 is read at slave frame 1000 + D; the slave must render at master
        // frame 20 000 (start 21 536 − L 1536): slave frame 20 000 + D.
        for d: Int64 in [-94464, -9984, 0, 41728, 5_000_000] {
            let f = NetJackStart.slaveFrame(renderFrame: 20_000, masterFrame: 1000, atSlaveFrame: 1000 + d)
            #expect(f == 20_000 + d)
        }
        // The master's frames wrapped past 2^24 between the stamp read and the start (the
        // render frame's stamp is small, the master's large), and the slave's counter is far
        // beyond 2^24: still the frame 14 400 frames ahead.
        let m = (1 << 24) - 4000, r = 10_400
        let here: Int64 = 3 * (1 << 24) + 777
        #expect(NetJackStart.slaveFrame(renderFrame: r, masterFrame: m, atSlaveFrame: here) == here + 14_400)
        // A start in the past (the stamp read late) gives a frame before `here`.
        #expect(NetJackStart.slaveFrame(renderFrame: 100, masterFrame: 5000, atSlaveFrame: 90_000) == 85_100)
    }

    @Test func renderStampIsTheStartMinusL() {
        #expect(FrameStamp.frame(in: NetJackStart.renderStamp(masterStart: 140_273, latency: 1536)) == 138_737)
        // A start less than L after the counter's 2^24 wrap: the stamp wraps back.
        #expect(FrameStamp.frame(in: NetJackStart.renderStamp(masterStart: (1 << 24) + 500, latency: 1536)) == (1 << 24) - 1036)
    }

    @Test func aStartTooLateIsRefused() {
        #expect(NetJackStart.refusal(frame: 10_000, earliest: 10_000, sampleRate: 48000) == nil)
        #expect(NetJackStart.refusal(frame: 20_000, earliest: 10_000, sampleRate: 48000) == nil)
        let why = NetJackStart.refusal(frame: 9_520, earliest: 10_000, sampleRate: 48000)
        #expect(why?.contains("too late") == true)
        #expect(why?.contains("480 frames (10.0 ms) before the earliest frame a start can still honour (10000)") == true, "\(why ?? "")")
    }

    @Test func slaveLearnsDAndTheStartAndEchoes() {
        let link = NetJackLink(role: .slave)
        let d: Int64 = -41728, n = 8
        // A cycle with stamps but no start stamp yet: D, no start.
        var ins = [(0..<n).map { FrameStamp.sample(for: UInt64(50_000 + $0)) }, [Float](repeating: 0, count: n)]
        var outs = [[Float](repeating: 0, count: n)]
        cycle(link, frame: 50_000 + d, inputs: &ins, outputs: &outs)
        #expect(link.watch.latest == Int(d) && link.watch.changes == 0 && link.watch.stamps == n)
        #expect(link.slaveStart == nil)
        #expect(outs[0] == ins[0], "the stamps are echoed unchanged")
        // The start stamp appears: render at master frame 64 000.
        ins = [(0..<n).map { FrameStamp.sample(for: UInt64(50_008 + $0)) }, [Float](repeating: FrameStamp.sample(for: 64_000), count: n)]
        cycle(link, frame: 50_008 + d, inputs: &ins, outputs: &outs)
        #expect(link.slaveStart?.frame == 64_000 + d)
        #expect(link.slaveStart?.others == 0)
        // A lost cycle on the slave: D moves by a period, seen and counted; the start frame
        // moves with it (the same master frame is now 256 slave frames later), counted once.
        ins = [(0..<n).map { FrameStamp.sample(for: UInt64(50_016 + $0)) }, [Float](repeating: FrameStamp.sample(for: 64_000), count: n)]
        cycle(link, frame: 50_016 + d + 256, inputs: &ins, outputs: &outs)
        #expect(link.watch.latest == Int(d) + 256 && link.watch.changes == 1 && link.watch.first == Int(d))
        #expect(link.slaveStart?.frame == 64_000 + d + 256)
        #expect(link.slaveStart?.others == 1)
    }

    @Test func masterStampsItsDeviceFramesAndMeasuresL() {
        let link = NetJackLink(role: .master)
        let n = 8
        var ins: [[Float]] = []
        var outs = [[Float](repeating: 0, count: n), [Float](repeating: 0, count: n)]
        // Device frame 10 000 is server counter 9 744 (the server skipped aqsync once).
        cycle(link, frame: 10_000, counter: 9_744, inputs: &ins, outputs: &outs)
        #expect(outs[0] == (0..<n).map { FrameStamp.sample(for: UInt64(10_000 + $0)) })
        #expect(outs[1].allSatisfy { $0 == 0 }, "no start decided: no start stamp")
        // The echo of device frame 10 000 arrives at server counter 11 024 = device 11 280: L 1280.
        let echo = (0..<n).map { FrameStamp.sample(for: UInt64(10_000 + $0)) }
        echo.withUnsafeBufferPointer { NetJackLinkState.recordEcho(link.state, $0.baseAddress!, count: n, counter: 11_024) }
        #expect(link.watch.latest == 1280 && link.watch.stamps == n)
        link.setRenderStamp(masterStart: 40_000, latency: 1280)
        cycle(link, frame: 10_008, counter: 9_752, inputs: &ins, outputs: &outs)
        #expect(outs[1].allSatisfy { FrameStamp.frame(in: $0) == 38_720 })
    }

    @Test func echoBeforeTheFirstCycleIsIgnored() {
        let link = NetJackLink(role: .master)
        let echo = [Float](repeating: FrameStamp.sample(for: 5), count: 4)
        echo.withUnsafeBufferPointer { NetJackLinkState.recordEcho(link.state, $0.baseAddress!, count: 4, counter: 100) }
        #expect(link.watch.stamps == 0)
    }

    /// Runs one cycle of every link of `group` with these side inputs and outputs.
    func cycle(_ group: NetJackLinks, frame: Int64, counter: UInt32 = 0, inputs: inout [[Float]], outputs: inout [[Float]]) {
        withSidePorts(inputs: inputs, outputs: &outputs) { frames, i, ni, o, no in
            group.cycle(frame: frame, counter: counter, frames: frames, inputs: i, inputCount: ni, outputs: o, outputCount: no)
        }
    }

    /// One master, two slaves (issue 26, "several slaves"): each link is handed its own two
    /// side outputs (the stamps of the device frames, and its own start stamp: the start minus
    /// its own L), measures its own L from its own echo, and is carried anew alone.
    @Test func severalMasterLinksEachWithItsOwnPortsAndL() {
        let one = NetJackLink(role: .master), two = NetJackLink(role: .master)
        let group = NetJackLinks([one, two])
        #expect(group.inputsPerLink == 0 && group.outputsPerLink == 2 && group.links.count == 2)
        let n = 8
        var ins: [[Float]] = []
        var outs = [[Float]](repeating: [Float](repeating: 0, count: n), count: 4)
        cycle(group, frame: 10_000, counter: 9_744, inputs: &ins, outputs: &outs)
        let stamps = (0..<n).map { FrameStamp.sample(for: UInt64(10_000 + $0)) }
        #expect(outs[0] == stamps && outs[2] == stamps, "each slave gets the device frames' stamps")
        #expect(outs[1].allSatisfy { $0 == 0 } && outs[3].allSatisfy { $0 == 0 }, "no start decided: no start stamp")
        // Slave 1 echoes with L 1536 (-l 5), slave 2 with L 768 (-l 2), each to its own reader.
        let echo = (0..<n).map { FrameStamp.sample(for: UInt64(10_000 + $0)) }
        echo.withUnsafeBufferPointer { NetJackLinkState.recordEcho(one.state, $0.baseAddress!, count: n, counter: 9_744 + 1536) }
        echo.withUnsafeBufferPointer { NetJackLinkState.recordEcho(two.state, $0.baseAddress!, count: n, counter: 9_744 + 768) }
        #expect(one.watch.latest == 1536 && two.watch.latest == 768)
        one.setRenderStamp(masterStart: 40_000, latency: 1536)
        two.setRenderStamp(masterStart: 40_000, latency: 768)
        cycle(group, frame: 10_008, counter: 9_752, inputs: &ins, outputs: &outs)
        #expect(outs[1].allSatisfy { FrameStamp.frame(in: $0) == 40_000 - 1536 }, "\(outs[1])")
        #expect(outs[3].allSatisfy { FrameStamp.frame(in: $0) == 40_000 - 768 }, "\(outs[3])")
        // Slave 2 rejoins with another L: only its start stamp is carried anew.
        two.setRenderStamp(masterStart: 40_000, latency: 1536)
        cycle(group, frame: 10_016, counter: 9_760, inputs: &ins, outputs: &outs)
        #expect(outs[1].allSatisfy { FrameStamp.frame(in: $0) == 40_000 - 1536 } && outs[3].allSatisfy { FrameStamp.frame(in: $0) == 40_000 - 1536 })
        // Fewer side outputs than links need (a port missing): the links without theirs are
        // skipped, the others still written.
        var three = [[Float]](repeating: [Float](repeating: 0, count: n), count: 3)
        cycle(group, frame: 10_024, counter: 9_768, inputs: &ins, outputs: &three)
        #expect(three[0] == (0..<n).map { FrameStamp.sample(for: UInt64(10_024 + $0)) } && three[2].allSatisfy { $0 == 0 })
    }

    /// A slave's group of one link: its two inputs and one output, as the link alone.
    @Test func aSlaveGroupIsItsLink() {
        let link = NetJackLink(role: .slave)
        let group = NetJackLinks([link])
        #expect(group.inputsPerLink == 2 && group.outputsPerLink == 1)
        let n = 8, d: Int64 = 5_120
        var ins = [(0..<n).map { FrameStamp.sample(for: UInt64(50_000 + $0)) }, [Float](repeating: FrameStamp.sample(for: 64_000), count: n)]
        var outs = [[Float](repeating: 0, count: n)]
        cycle(group, frame: 50_000 + d, inputs: &ins, outputs: &outs)
        #expect(link.watch.latest == Int(d) && link.slaveStart?.frame == 64_000 + d && outs[0] == ins[0])
    }
}
