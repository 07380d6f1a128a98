import AQCore
import CJACK
import Synchronization

/// Everything JACK's callbacks touch, in memory allocated once by ``JackDevice`` (control
/// thread) and reached through the callbacks' `arg` pointer. Nothing here is a Swift object:
/// the callbacks never retain, release, allocate or lock.
///
/// Ownership of the plain fields: written by control threads only while the client is
/// inactive (before `jack_activate`, after `jack_deactivate`/`jack_client_close`); the
/// `render*` fields belong to the render thread while active. Atomics: any thread.
struct JackCallbackState: ~Copyable {
    /// The client, while open.
    var client: OpaquePointer?
    /// Output ports `out_1…N` (N = `outputCount`).
    let outPorts: UnsafeMutablePointer<OpaquePointer?>
    /// Preallocated array of output buffer pointers handed to the renderer each cycle.
    let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Where an output goes when JACK gives its port no buffer (`jack_port_get_buffer` returned
    /// nil) and what every `outputs` slot points at before the first cycle: room for
    /// ``fallbackFrames`` floats, the largest period a JACK server runs, so a full period
    /// written into it stays inside it. What is mixed into it is heard nowhere. Allocated and
    /// zeroed here, on the control side (its pages mapped before the first cycle).
    let dummy: UnsafeMutablePointer<Float>
    /// Frames of ``dummy``: JACK's largest buffer size (jackd2's `BUFFER_SIZE_MAX`, 8192). A
    /// cycle longer than this with a port missing its buffer is not rendered.
    static let fallbackFrames = 8192
    let outputCount: Int
    /// Input ports `in_1…M` (M = `inputCount`); nil before the client registers them.
    let inPorts: UnsafeMutablePointer<OpaquePointer?>
    /// Preallocated array of input buffer pointers handed to the renderer each cycle.
    let inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let inputCount: Int
    /// Side ports (``JackSidePorts``): outputs, inputs, and the buffer arrays handed to the hook.
    let sideOutPorts: UnsafeMutablePointer<OpaquePointer?>
    let sideInPorts: UnsafeMutablePointer<OpaquePointer?>
    let sideOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let sideInputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let sideOutputCount: Int, sideInputCount: Int
    /// The per-cycle hook (``JackDevice/setCycleHook(_:)``), if any.
    let hook = Atomic<UnsafeMutablePointer<CycleHook>?>(nil)
    /// The clock `jack_get_time` reads (see ``JackClockSource``).
    var clockSource: JackClockSource = .monotonicRaw
    /// The renderer, while started; the notification callbacks reach its clock through it.
    /// Loaded with sequentially consistent ordering, inside ``callbacksInside``.
    let core = Atomic<UnsafeMutablePointer<RenderCore>?>(nil)
    /// Callbacks (and ``note(_:)`` calls) that may be using ``core`` right now: each counts
    /// itself in (sequentially consistent) before it loads ``core``, and out when done with it.
    /// A control thread that has stored nil in ``core`` (sequentially consistent) and then sees
    /// this at 0 knows that no callback uses the renderer any more and none will, whether or
    /// not libjack's close of the client has returned (``JackDevice/stop()``).
    let callbacksInside = Atomic<Int>(0)
    /// The benchmark probe's ring, once one is installed (see ``JackCycleProbe``).
    let probe = Atomic<UnsafeMutablePointer<JackProbeStorage>?>(nil)
    /// The transport follower, once one is installed (``JackDevice/setTransportFollower(_:)``).
    let transport = Atomic<UnsafeMutablePointer<TransportCallbacks>?>(nil)
    /// The tempo published as timebase master, once set (``JackDevice/setTimebaseMaster(_:)``).
    let timebase = Atomic<UnsafeMutablePointer<JackTimebase>?>(nil)
    /// Event thread's signal block, while the client is open.
    var events: UnsafeMutablePointer<JackEventSignal>?

    // Render thread (set by control threads only while the client is inactive).
    /// The device's sample time, counted from what was rendered (see ``DeviceTimekeeper``).
    var keeper = DeviceTimekeeper(sampleRate: 48000)

    // Any thread.
    let xruns = Atomic<UInt64>(0)
    let sampleRate = Atomic<UInt32>(0)
    let bufferSize = Atomic<UInt32>(0)
    let shutDown = Atomic<Bool>(false)
    let freewheeling = Atomic<Bool>(false)
    /// Discontinuities noted by this device, per `DiscontinuityReason.rawValue`.
    let counts: UnsafeMutablePointer<Atomic<UInt64>>
    static let reasonCount = 16
    /// The latest jump of the server's counter beyond the previous cycle's frames (0 before
    /// any), whatever it meant.
    let lastJump = Atomic<Int64>(0)
    /// Jumps of the server's counter that were followed without losing a frame (a client moved
    /// to another driver).
    let counterJumps = Atomic<UInt64>(0)
    /// Cycles the server called again with the previous cycle's position (not rendered).
    let repeatedCycles = Atomic<UInt64>(0)
    /// Calls repeating the previous call's position that were rendered as the cycle after it
    /// (jackd2 catching up on a late client: ``CycleContinuity/lateCycle``).
    let lateCycles = Atomic<UInt64>(0)
    /// Frames the server lost / the device skipped, mirrored from the keeper for control threads.
    let lostFrames = Atomic<Int64>(0)
    let skippedFrames = Atomic<Int64>(0)
    /// Frames lost at the latest resumption after a server came back (−1: none yet).
    let resumedLostFrames = Atomic<Int64>(-1)
    /// Set by a buffer-size change: the next cycle's counter jump is the server's bookkeeping
    /// of that change, not lost time.
    let periodChanged = Atomic<Bool>(false)
    /// The ports' latencies as JACK last reported them in the latency callback (frames): the
    /// largest capture latency of the input ports, the largest playback latency of the outputs
    /// (the summary, `JackDevice.latency`).
    let captureLatency = Atomic<UInt32>(0)
    let playbackLatency = Atomic<UInt32>(0)
    /// Per port, as JACK last reported them: the capture latency (range maximum) of each input
    /// port `in_i` (`inputCount` atomics), the playback latency of each output `out_i`
    /// (`outputCount` atomics). Allocated with the state; the latency callback only stores.
    let inputLatencies: UnsafeMutablePointer<Atomic<UInt32>>
    let outputLatencies: UnsafeMutablePointer<Atomic<UInt32>>

    init(outputCount: Int, inputCount: Int = 0, sideOutputCount: Int = 0, sideInputCount: Int = 0) {
        self.outputCount = outputCount
        self.inputCount = inputCount
        self.sideOutputCount = sideOutputCount
        self.sideInputCount = sideInputCount
        sideOutPorts = .allocate(capacity: max(sideOutputCount, 1))
        sideOutPorts.initialize(repeating: nil, count: max(sideOutputCount, 1))
        sideInPorts = .allocate(capacity: max(sideInputCount, 1))
        sideInPorts.initialize(repeating: nil, count: max(sideInputCount, 1))
        inPorts = .allocate(capacity: max(inputCount, 1))
        inPorts.initialize(repeating: nil, count: max(inputCount, 1))
        outPorts = .allocate(capacity: max(outputCount, 1))
        outPorts.initialize(repeating: nil, count: max(outputCount, 1))
        dummy = .allocate(capacity: Self.fallbackFrames)
        dummy.initialize(repeating: 0, count: Self.fallbackFrames)
        outputs = .allocate(capacity: max(outputCount, 1))
        outputs.initialize(repeating: dummy, count: max(outputCount, 1))
        inputs = .allocate(capacity: max(inputCount, 1))
        inputs.initialize(repeating: dummy, count: max(inputCount, 1))
        sideOutputs = .allocate(capacity: max(sideOutputCount, 1))
        sideOutputs.initialize(repeating: dummy, count: max(sideOutputCount, 1))
        sideInputs = .allocate(capacity: max(sideInputCount, 1))
        sideInputs.initialize(repeating: dummy, count: max(sideInputCount, 1))
        counts = .allocate(capacity: Self.reasonCount)
        for i in 0..<Self.reasonCount { (counts + i).initialize(to: Atomic(0)) }
        inputLatencies = .allocate(capacity: max(inputCount, 1))
        for i in 0..<max(inputCount, 1) { (inputLatencies + i).initialize(to: Atomic(0)) }
        outputLatencies = .allocate(capacity: max(outputCount, 1))
        for i in 0..<max(outputCount, 1) { (outputLatencies + i).initialize(to: Atomic(0)) }
    }

    deinit {
        sideOutPorts.deallocate()
        sideInPorts.deallocate()
        sideOutputs.deallocate()
        sideInputs.deallocate()
        if let h = hook.load(ordering: .acquiring) { h.deallocate() }
        outPorts.deallocate()
        outputs.deallocate()
        inPorts.deallocate()
        inputs.deallocate()
        dummy.deallocate()
        counts.deinitialize(count: Self.reasonCount)
        counts.deallocate()
        inputLatencies.deinitialize(count: max(inputCount, 1))
        inputLatencies.deallocate()
        outputLatencies.deinitialize(count: max(outputCount, 1))
        outputLatencies.deallocate()
    }

    /// Reads the `mode` latency of every port of the side it applies to (capture: the inputs,
    /// playback: the outputs) into the per-port atomics, and their largest into the summary.
    /// Any thread but the process thread (the latency callback, or a control thread with the
    /// client open); no allocation, no lock.
    @_noLocks
    func readLatencies(_ mode: jack_latency_callback_mode_t) {
        if mode == JackCaptureLatency {
            captureLatency.store(jackReadLatencies(inPorts, inputCount, mode, into: inputLatencies), ordering: .relaxed)
        } else {
            playbackLatency.store(jackReadLatencies(outPorts, outputCount, mode, into: outputLatencies), ordering: .relaxed)
        }
    }

    /// Sets every latency, per port and summary, to 0 (a new client: connected to nothing yet).
    func clearLatencies() {
        captureLatency.store(0, ordering: .relaxed)
        playbackLatency.store(0, ordering: .relaxed)
        for i in 0..<inputCount { inputLatencies[i].store(0, ordering: .relaxed) }
        for i in 0..<outputCount { outputLatencies[i].store(0, ordering: .relaxed) }
    }

    /// Counts `reason` and notes it on the started renderer's clock, if any. Any thread.
    @_noLocks
    func note(_ reason: DiscontinuityReason) {
        let i = Int(unsafeBitCast(reason, to: UInt8.self))  // rawValue is not inlinable
        if i < Self.reasonCount { counts[i].wrappingAdd(1, ordering: .relaxed) }
        callbacksInside.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { callbacksInside.wrappingSubtract(1, ordering: .releasing) }
        if let core = core.load(ordering: .sequentiallyConsistent) {
            core.pointee.clock.noteDiscontinuity(reason)
        }
    }
}

/// JACK's process callback. Runs on JACK's process (render) thread once per cycle.
///
/// Gets the port buffers into the preallocated pointer array, reads the cycle times, converts
/// JACK's microseconds to CLOCK_MONOTONIC nanoseconds, advances the device's own sample time
/// by the frames rendered (``DeviceTimekeeper``: lost frames noted as `.framesLost`, the
/// server's counter jumps followed), and calls `RenderCore.render` (which publishes the anchor).
@_noLocks
func jackProcess(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    // A benchmark probe, when installed: the entry time is read first thing.
    let probe = st.pointee.probe.load(ordering: .acquiring)
    let entryNs = probe == nil ? 0 : HostClock.now()
    guard let client = st.pointee.client else { return 0 }
    let n = st.pointee.outputCount
    let outs = st.pointee.outputs
    let ports = st.pointee.outPorts
    // Counted in before the renderer is loaded (see ``JackCallbackState/callbacksInside``).
    st.pointee.callbacksInside.wrappingAdd(1, ordering: .sequentiallyConsistent)
    defer { st.pointee.callbacksInside.wrappingSubtract(1, ordering: .releasing) }
    guard let core = st.pointee.core.load(ordering: .sequentiallyConsistent) else {
        // No renderer (the device let go of this client, whose close has not returned yet):
        // silence, rather than whatever the port buffers held.
        _unsafePerformance {
            for c in 0..<n {
                if let buf = jack_port_get_buffer(ports[c], nframes) {
                    buf.assumingMemoryBound(to: Float.self).update(repeating: 0, count: Int(nframes))
                }
            }
        }
        jackSilenceSideOutputs(st, nframes: nframes)
        return 0
    }
    // Input buffers: every registered input port's (the capture ports' contents this cycle).
    var inputCount = 0
    let ins = st.pointee.inputs
    let inPorts = st.pointee.inPorts
    var frame: jack_nframes_t = 0
    var usecs: jack_time_t = 0
    var nextUsecs: jack_time_t = 0
    var periodUsecs: Float = 0
    var ok: Int32 = 0
    // An output port without a buffer this cycle is written into the fallback (``dummy``,
    // the largest period JACK runs), never into a buffer of an earlier cycle or a shorter one.
    var missing = false
    // jack_port_get_buffer and jack_get_cycle_times read the client's shared memory: they are
    // documented for use in the process callback (realtime-safe: no lock, no allocation).
    _unsafePerformance {
        for c in 0..<n {
            if let buf = jack_port_get_buffer(ports[c], nframes) {
                outs[c] = buf.assumingMemoryBound(to: Float.self)
            } else {
                outs[c] = st.pointee.dummy
                missing = true
            }
        }
        while inputCount < st.pointee.inputCount, let port = inPorts[inputCount],
            let buf = jack_port_get_buffer(port, nframes)
        {
            ins[inputCount] = buf.assumingMemoryBound(to: Float.self)
            inputCount += 1
        }
        ok = jack_get_cycle_times(client, &frame, &usecs, &nextUsecs, &periodUsecs)
        if ok != 0 {
            frame = jack_last_frame_time(client)
            usecs = jack_get_time()
            nextUsecs = 0
        }
    }
    // The transport follower's reading, taken with the cycle's times, before any of the
    // cycle's work: jack_transport_query reads the server's position as it is when called
    // (jack2 `JackTransportEngine::Query`; pipewire-jack reads the driver's live position), so
    // read after the engine's mix it can already be the next cycle's. Measured on PipeWire: a
    // call for the cycle at transport frame 515 that read 515 here read 771 after the mix, and
    // played 771's frames in 515's buffer (docs/transport.md, "Known defects" 4).
    let follower = st.pointee.transport.load(ordering: .acquiring)
    var transportRolling: Int32 = 0
    var transportFrame: Int64 = 0
    if follower != nil {
        // jack_transport_query is realtime-safe (jack/transport.h): it reads shared memory.
        _unsafePerformance {
            var pos = jack_position_t()
            transportRolling = jack_transport_query(client, &pos) == JackTransportRolling ? 1 : 0
            transportFrame = Int64(pos.frame)
        }
    }
    // A period longer than the fallback cannot happen with JACK (8192 frames at most); should
    // it, the cycle is not rendered rather than overrun the fallback (the next cycle counts
    // its frames as lost).
    if missing && Int(nframes) > JackCallbackState.fallbackFrames { return 0 }
    let offset = st.pointee.clockSource.offsetToMonotonicNs()
    let host = UInt64(bitPattern: Int64(bitPattern: usecs &* 1000) &+ offset)
    let next = nextUsecs == 0 ? 0 : UInt64(bitPattern: Int64(bitPattern: nextUsecs &* 1000) &+ offset)
    // Sample time counts what was rendered; the server's counter and the host time only tell
    // lost frames from bookkeeping (docs/timing.md).
    let changed = st.pointee.periodChanged.exchange(false, ordering: .relaxed)
    let step = st.pointee.keeper.advance(
        counter: frame, cycleTime: usecs, frames: Int32(truncatingIfNeeded: nframes), hostNs: host, periodChanged: changed)
    if step.continuity == .repeated {
        // The cycle just rendered, called again: no graph cycle stands behind it, so nothing
        // of the engine's time moves, and its output is silence (docs/pipewire.md (d)).
        st.pointee.repeatedCycles.wrappingAdd(1, ordering: .relaxed)
        for c in 0..<n { outs[c].update(repeating: 0, count: Int(nframes)) }
        jackSilenceSideOutputs(st, nframes: nframes)
        return 0
    }
    if step.counterJump != 0 { st.pointee.lastJump.store(step.counterJump, ordering: .relaxed) }
    switch step.continuity {
    case .framesLost, .resumed:
        if step.lostFrames > 0 {
            st.pointee.lostFrames.store(st.pointee.keeper.lostFrames, ordering: .relaxed)
            st.pointee.skippedFrames.store(st.pointee.keeper.skippedFrames, ordering: .relaxed)
            st.pointee.note(.framesLost)
        }
        if step.continuity == .resumed {
            st.pointee.resumedLostFrames.store(step.lostFrames, ordering: .releasing)
        }
    case .counterJump:
        st.pointee.counterJumps.wrappingAdd(1, ordering: .relaxed)
    case .lateCycle:
        // The previous call's "lost" period was the cycle this call renders (jackd2's catch-up).
        st.pointee.lostFrames.store(st.pointee.keeper.lostFrames, ordering: .relaxed)
        st.pointee.lateCycles.wrappingAdd(1, ordering: .relaxed)
    case .first, .contiguous, .periodChangeArtefact, .repeated:
        break
    }
    // CycleInfo.init is a memberwise init of a BitwiseCopyable struct in AQCore, only opaque
    // to the checker because AQCore does not mark it @inlinable.
    let cycle = _unsafePerformance {
        CycleInfo(
            frame: step.frame, frames: Int32(truncatingIfNeeded: nframes), hostTimeNs: host, nextHostTimeNs: next)
    }
    core.pointee.render(
        cycle, outputs: UnsafePointer(outs), channelCount: n, inputs: UnsafePointer(ins), inputCount: inputCount)
    if st.pointee.sideOutputCount > 0 || st.pointee.sideInputCount > 0 {
        jackSidePorts(st, nframes: nframes, frame: step.frame, counter: frame)
    }
    if let follower {
        // The follower (TransportCallbacks: realtime-safe by contract) adds to the outputs,
        // after the engine's mix, what the transport said at the cycle's start.
        _unsafePerformance {
            follower.pointee.process(follower.pointee.context, transportRolling, transportFrame, nframes, UnsafePointer(outs), n)
        }
    }
    if let probe {
        probe.pointee.record(
            entryNs: entryNs, exitNs: HostClock.now(), cycle: cycle, xruns: st.pointee.xruns.load(ordering: .relaxed))
    }
    return 0
}

/// The side ports' cycle: their buffers (an output or input without one: the cycle is skipped
/// for the hook), the outputs zeroed, then the hook, if any, with the device frame. Process
/// thread.
@_noLocks
private func jackSidePorts(_ st: UnsafeMutablePointer<JackCallbackState>, nframes: jack_nframes_t, frame: Int64, counter: jack_nframes_t) {
    let outs = st.pointee.sideOutputs, ins = st.pointee.sideInputs
    let no = st.pointee.sideOutputCount, ni = st.pointee.sideInputCount
    var complete = true
    // jack_port_get_buffer: realtime-safe (shared memory), as in jackProcess.
    _unsafePerformance {
        for c in 0..<no {
            if let port = st.pointee.sideOutPorts[c], let buf = jack_port_get_buffer(port, nframes) {
                outs[c] = buf.assumingMemoryBound(to: Float.self)
                outs[c].update(repeating: 0, count: Int(nframes))
            } else {
                complete = false
            }
        }
        for c in 0..<ni {
            if let port = st.pointee.sideInPorts[c], let buf = jack_port_get_buffer(port, nframes) {
                ins[c] = buf.assumingMemoryBound(to: Float.self)
            } else {
                complete = false
            }
        }
    }
    guard complete, let hook = st.pointee.hook.load(ordering: .acquiring) else { return }
    _unsafePerformance {
        hook.pointee.process(hook.pointee.context, frame, counter, nframes, UnsafePointer(ins), ni, UnsafePointer(outs), no)
    }
}

/// Silence in the side outputs, for a cycle the hook is not called in (no renderer, a
/// repeated call): a port buffer left unwritten would send an earlier cycle's stamps again.
/// Process thread.
@_noLocks
private func jackSilenceSideOutputs(_ st: UnsafeMutablePointer<JackCallbackState>, nframes: jack_nframes_t) {
    _unsafePerformance {
        for c in 0..<st.pointee.sideOutputCount {
            if let port = st.pointee.sideOutPorts[c], let buf = jack_port_get_buffer(port, nframes) {
                buf.assumingMemoryBound(to: Float.self).update(repeating: 0, count: Int(nframes))
            }
        }
    }
}

/// Counts `reason` and notes it on the started renderer's clock, if any. Any thread.
@_noLocks
private func noteDiscontinuity(_ st: UnsafeMutablePointer<JackCallbackState>, _ reason: DiscontinuityReason) {
    st.pointee.note(reason)
}

/// JACK's xrun callback (a JACK thread): counts and notes `.xrun`.
@_noLocks
func jackXrun(_ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    st.pointee.xruns.wrappingAdd(1, ordering: .relaxed)
    noteDiscontinuity(st, .xrun)
    return 0
}

/// JACK's sample-rate callback (a JACK thread; jackd2 also calls it once when it is set).
/// A real change updates the clock's nominal rate and notes `.sampleRateChange`.
@_noLocks
func jackSampleRate(_ rate: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    let old = st.pointee.sampleRate.exchange(rate, ordering: .relaxed)
    if old != rate, old != 0 {
        st.pointee.callbacksInside.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { st.pointee.callbacksInside.wrappingSubtract(1, ordering: .releasing) }
        if let core = st.pointee.core.load(ordering: .sequentiallyConsistent) {
            // setNominalSampleRate is one relaxed atomic store (opaque to the checker: not
            // annotated in AQCore).
            _unsafePerformance { core.pointee.clock.setNominalSampleRate(Double(rate)) }
        }
        st.pointee.note(.sampleRateChange)
    }
    return 0
}

/// JACK's buffer-size callback (a JACK thread, possibly the process thread). A real change
/// notes `.bufferSizeChange`.
@_noLocks
func jackBufferSize(_ frames: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let arg else { return 0 }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    let old = st.pointee.bufferSize.exchange(frames, ordering: .relaxed)
    if old != frames, old != 0 {
        st.pointee.periodChanged.store(true, ordering: .relaxed)
        noteDiscontinuity(st, .bufferSizeChange)
    }
    return 0
}

/// JACK's freewheel callback (a JACK thread): notes `.freewheel` on entering and leaving.
@_noLocks
func jackFreewheel(_ starting: Int32, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    st.pointee.freewheeling.store(starting != 0, ordering: .relaxed)
    noteDiscontinuity(st, .freewheel)
}

/// JACK's shutdown callback (any JACK thread, treated as a signal handler): notes
/// `.serverShutdown` and wakes the event thread, which calls ``JackDevice/onShutdown``.
@_noLocks
func jackShutdown(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    st.pointee.shutDown.store(true, ordering: .releasing)
    noteDiscontinuity(st, .serverShutdown)
    if let ev = st.pointee.events {
        signalShutdown(ev, code: code.rawValue, reason: reason)
    }
}

/// JACK's latency callback (libjack's notification thread, not the process thread; jackd2
/// calls it twice whenever latencies are recomputed, after connections change or a client asks
/// for it: once per mode). Before calling it, libjack has set the ports' latencies from their
/// connections: the input ports' capture latency (`JackCaptureLatency`), the output ports'
/// playback latency (`JackPlaybackLatency`).
///
/// - `JackCaptureLatency`: stores each input port's capture latency and their largest, and reports
///   the output ports' capture latency as {0, 0}: what the engine plays is made by the engine
///   (queues, files), not its inputs passed through, so its outputs are where that signal
///   enters the graph. Without this callback JACK would give the outputs the inputs' capture
///   latency (its default treats every client as a pass-through).
/// - `JackPlaybackLatency`: stores each output port's playback latency and their largest, and
///   reports the input ports' playback latency as {0, 0}: what reaches the inputs is recorded,
///   it goes out of no port of ours (docs/jack-device.md, "Latency").
@_noLocks
func jackLatency(_ mode: jack_latency_callback_mode_t, _ arg: UnsafeMutableRawPointer?) {
    guard let arg else { return }
    let st = arg.assumingMemoryBound(to: JackCallbackState.self)
    var zero = jack_latency_range_t(min: 0, max: 0)
    // jack_port_get/set_latency_range read and write the port's shared memory (no lock, no
    // allocation); the checker cannot see into libjack.
    _unsafePerformance {
        st.pointee.readLatencies(mode)
        if mode == JackCaptureLatency {
            for c in 0..<st.pointee.outputCount {
                if let port = st.pointee.outPorts[c] { jack_port_set_latency_range(port, mode, &zero) }
            }
        } else {
            for c in 0..<st.pointee.inputCount {
                if let port = st.pointee.inPorts[c] { jack_port_set_latency_range(port, mode, &zero) }
            }
        }
    }
}

/// Stores the `max` of the `mode` latency range of each of the first `count` of `ports` in
/// `values` (0 for a nil port) and returns the largest; 0 for none. Any thread but the process
/// thread (reads the ports' shared memory); no allocation, no lock.
@_noLocks
func jackReadLatencies(
    _ ports: UnsafeMutablePointer<OpaquePointer?>, _ count: Int, _ mode: jack_latency_callback_mode_t,
    into values: UnsafeMutablePointer<Atomic<UInt32>>
) -> UInt32 {
    var largest: UInt32 = 0
    for c in 0..<count {
        var range = jack_latency_range_t(min: 0, max: 0)
        if let port = ports[c] {
            _unsafePerformance { jack_port_get_latency_range(port, mode, &range) }
        }
        values[c].store(range.max, ordering: .relaxed)
        largest = max(largest, range.max)
    }
    return largest
}
