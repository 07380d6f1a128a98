import AQConvert
import AQCore
import AQTypes
import Foundation

/// Parameters, properties, listeners and time.
extension AudioQueue {
    // MARK: - Parameters

    /// A parameter's current value (`AudioQueueGetParameter`): the value in force, whether it
    /// was set with ``setParameter(_:_:)`` or by a buffer's parameter event; a value just set
    /// is returned at once. A stale handle reads 0. Any thread but the render thread; does not
    /// block.
    public func parameter(_ id: AudioQueueParameterID) -> Float {
        lock.lock()
        defer { lock.unlock() }
        if disposed { return 0 }
        switch id {
        case .volume: break
        case .volumeRampTime: return volumeRampTime
        case .pan: return panValue
        case .playRate: return timePitch.playRate
        case .pitch: return timePitch.pitchCents
        }
        if !volumeChanged { return volumeValue }
        let rendered = hub.core.pointee.volume(slot: Int(slot))
        return rendered.commandsApplied >= volumeCommandsSent ? rendered.value : volumeValue
    }

    /// Sets a parameter now (`AudioQueueSetParameter`); values outside a parameter's range are
    /// refused with `.invalidParameter`.
    /// - `.volume`: a linear gain from 0 to 1 (to ``setMaximumVolume(_:)``'s value when a Swift
    ///   caller raised it). On a running queue it ramps linearly over
    ///   `.volumeRampTime` seconds when that is set (> 0), else over the engine's
    ///   ``AudioQueueEngine/volumeRampSeconds`` (never a step): round(seconds × device rate)
    ///   frames R, from the first frame of the render cycle that applies it (which still plays
    ///   the old gain) to exactly the new gain R frames later; on a stopped or paused queue it
    ///   applies at once, so the first frame played has it.
    /// - `.volumeRampTime`: 0 to 3600 seconds; applies to the volume changes after it.
    /// - `.pan`: −1 to 1, from the first frame of the next render cycle (``PanLaw``).
    /// - `.playRate` (0.5 to 2) and `.pitch` (−2400 to 2400 cents): applied on the enqueuing
    ///   side, from the next buffer enqueued (audio already enqueued keeps the values it was
    ///   processed with; SoundTouch's few thousand held frames come out at the new ones), except
    ///   before the start, when the buffers enqueued are processed again at the new value
    ///   (``setTimePitchEnabled(_:)``; the call then blocks while that runs). They
    ///   act with time/pitch enabled and not bypassed (the pitch with the Spectral algorithm
    ///   only); otherwise the value is kept, read back, and used once time/pitch is enabled.
    /// Any thread but the render thread; does not block.
    public func setParameter(_ id: AudioQueueParameterID, _ value: Float) throws(AudioQueueError) {
        switch id {
        case .volume: break
        case .playRate, .pitch:
            try checkTimePitchValue(id, value)
            var refused: [AudioQueueBuffer] = []
            do {
                lock.lock()
                defer { lock.unlock() }
                try checkLive()
                let old = id == .playRate ? timePitch.playRate : timePitch.pitchCents
                if id == .playRate { timePitch.playRate = value } else { timePitch.pitchCents = value }
                // Before the start, what is enqueued is processed again at the new value.
                if old != value && timePitch.enabled && canReplayPrestart { refused = try replayPrestart() }
            }
            handBackRefused(refused)
            return
        case .volumeRampTime:
            guard value.isFinite, value >= 0, value <= 3600 else {
                throw AudioQueueError(.invalidParameter, "volume ramp time \(value) s is outside 0…3600 (kAudioQueueParam_VolumeRampTime)")
            }
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            volumeRampTime = value
            return
        case .pan:
            guard value.isFinite, value >= -1, value <= 1 else {
                throw AudioQueueError(.invalidParameter, "pan \(value) is outside −1…1 (kAudioQueueParam_Pan)")
            }
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            let f = PanLaw.factors(pan: value, channels: Int(format.channelsPerFrame))
            try hub.send(.setPan(slot: slot, left: f.left, right: f.right))
            panValue = value
            return
        }
        lock.lock()
        defer { lock.unlock() }
        guard value.isFinite, value >= 0, value <= maximumVolume else {
            throw AudioQueueError(.invalidParameter, "volume \(value) is outside 0…\(maximumVolume) (kAudioQueueParam_Volume)")
        }
        try checkLive()
        let seconds = volumeRampTime > 0 ? Double(volumeRampTime) : hub.volumeRampSeconds
        let ramp = Int32(clamping: Int64((seconds * hub.device.sampleRate).rounded()))
        try hub.send(.setVolume(slot: slot, volume: value, rampFrames: ramp))
        volumeValue = value
        volumeCommandsSent += 1
        volumeChanged = true
    }

    /// Sets a parameter by raw ID; unknown IDs are refused with `.invalidParameter`.
    /// Any thread but the render thread; does not block.
    public func setParameter(rawID: UInt32, _ value: Float) throws(AudioQueueError) {
        guard let id = AudioQueueParameterID(rawValue: rawID) else {
            throw AudioQueueError(.invalidParameter, "unknown parameter ID \(rawID)")
        }
        try setParameter(id, value)
    }

    // MARK: - Properties

    /// `kAudioQueueProperty_IsRunning`: true from the cycle its first frame plays until it
    /// stops. False for a stale handle. Any thread; does not block.
    public var isRunning: Bool { isRunningValue }

    /// Why the queue stopped by itself (its device went away), or nil. Any thread.
    public var error: AudioQueueError? { lastError }

    /// `kAudioQueueDeviceProperty_SampleRate`
    public var deviceSampleRate: Double { hub.device.sampleRate }
    /// `kAudioQueueDeviceProperty_NumberChannels`
    public var deviceChannelCount: Int { hub.device.outputChannelCount }
    /// `kAudioQueueProperty_CurrentDevice`: the device's unique identifier.
    public var currentDevice: String { hub.device.uid }

    /// `kAudioQueueProperty_ChannelLayout` (see ``setChannelLayout(_:)``).
    public var channelLayout: AudioChannelLayout { locked { layout } }

    /// Sets the channel layout (`kAudioQueueProperty_ChannelLayout`): the order of the
    /// queue's channels. It is applied: each channel plays on the device output of its
    /// speaker (see ``AudioChannelLayout/channelMap(outputs:)``; outputs in WAVE order: L, R,
    /// C, LFE, Ls, Rs, Lc, Rc), replacing an earlier ``setOutputChannels(_:)``. Its channel count
    /// must match the format's (`.invalidPropertySize` otherwise), and the queue must be
    /// stopped (`.invalidRunState` otherwise). Listeners of `.channelLayout` run on the calling
    /// thread afterwards. Any thread but the render thread; does not block.
    public func setChannelLayout(_ l: AudioChannelLayout) throws(AudioQueueError) {
        guard l.channelCount == channels else {
            throw AudioQueueError(.invalidPropertySize, "a layout of \(l.channelCount) channels for a \(channels)-channel queue")
        }
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            if isRunningValue { throw AudioQueueError(.invalidRunState, "the channel layout can only change while the queue is stopped") }
            let map = l.channelMap(outputs: hub.device.outputChannelCount)
            try hub.send(.setChannelMap(slot: slot, map: map))
            layout = l
            routedOutputs = (0..<channels).map { $0 < 8 ? map.output(for: $0) : -1 }
            outputsAssigned = false
        }
        notify(.channelLayout)
    }

    /// `kAudioQueueProperty_ChannelAssignments`: the device output each channel of the queue
    /// plays on, on this queue's device, `channelNumber` counting from 1 (0: not played, which
    /// only a channel layout naming a speaker the device lacks leaves). Default: channel i on
    /// output i + 1 (a mono queue plays on every output until assigned: it reads 1). Any thread
    /// but the render thread; does not block.
    public var channelAssignments: [AudioQueueChannelAssignment] {
        let uid = hub.device.uid
        return locked { routedOutputs }.map { AudioQueueChannelAssignment(deviceUID: uid, channelNumber: $0 + 1) }
    }

    /// Sets `kAudioQueueProperty_ChannelAssignments`: channel i of the queue plays on device
    /// output `assignments[i].channelNumber` (counting from 1) and nowhere else, from the next
    /// render cycle (the queue may be running); two channels may share an output (they mix).
    /// Replaces the routing of an earlier channel layout, and a later layout replaces it.
    /// Listeners of `.channelAssignments` run on the calling thread afterwards. Any thread but
    /// the render thread; does not block.
    /// - Throws: `.invalidPropertySize` unless there is exactly one per channel;
    ///   `.invalidDevice` for a `deviceUID` other than ``currentDevice``; `.invalidPropertyValue`
    ///   for a channel outside 1…``deviceChannelCount``, or on a queue of more than 8 channels
    ///   (the renderer routes a queue's first 8 channels: its channels past 8 are not played);
    ///   `.invalidQueue`, `.disposalPending`.
    public func setChannelAssignments(_ assignments: [AudioQueueChannelAssignment]) throws(AudioQueueError) {
        let outputs = try AudioQueueChannelAssignment.deviceChannels(
            assignments, channels: channels, uid: hub.device.uid, deviceChannels: hub.device.outputChannelCount)
        try setRoutedOutputs(outputs)
        notify(.channelAssignments)
    }

    /// Sends `outputs` (0-based, one per channel, each a device output) as the queue's channel
    /// map and keeps it. Any control thread.
    func setRoutedOutputs(_ outputs: [Int]) throws(AudioQueueError) {
        if outputs.count > 8 {
            throw AudioQueueError(.invalidPropertyValue, "the renderer routes a queue's first 8 channels only (a \(outputs.count)-channel queue)")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.send(.setChannelMap(slot: slot, map: ChannelMap(outputs)))
        routedOutputs = outputs.enumerated().map { $0.offset < 8 ? $0.element : -1 }
        outputsAssigned = true
    }

    /// Routes queue channel `i` to device output `outputs[i]` (0-based; -1: not played).
    /// The default: a mono queue on every output, an n-channel queue on the first n.
    public func setOutputChannels(_ outputs: [Int]) throws(AudioQueueError) {
        guard outputs.count == channels else {
            throw AudioQueueError(.invalidPropertySize, "\(outputs.count) outputs for a \(channels)-channel queue")
        }
        guard outputs.allSatisfy({ $0 >= -1 && $0 < hub.device.outputChannelCount }) else {
            throw AudioQueueError(.invalidParameter, "outputs \(outputs) exceed the device's \(hub.device.outputChannelCount) channels")
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        try hub.send(.setChannelMap(slot: slot, map: ChannelMap(outputs)))
        routedOutputs = outputs.enumerated().map { $0.offset < 8 ? $0.element : -1 }
        outputsAssigned = true
    }

    /// The outputs an earlier ``setChannelAssignments(_:)`` or ``setOutputChannels(_:)`` set
    /// (0-based), nil when the routing is the default's or a channel layout's. For carrying the
    /// routing to a queue on another engine. Any thread but the render thread.
    public var assignedOutputChannels: [Int]? { locked { outputsAssigned ? routedOutputs : nil } }

    /// `kAudioQueueProperty_EnableLevelMetering`.
    public var isLevelMeteringEnabled: Bool { locked { meteringEnabled } }

    /// Turns level metering on or off.
    public func setLevelMeteringEnabled(_ on: Bool) throws(AudioQueueError) {
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            try hub.send(.setMetering(slot: slot, enabled: on))
            meteringEnabled = on
        }
        notify(.enableLevelMetering)
    }

    /// `kAudioQueueProperty_CurrentLevelMeter`: per channel, RMS and peak of the latest
    /// render cycle, linear; 0 for a queue that is not playing. Refused with `.invalidProperty`
    /// while metering is off, `.invalidQueue` through a stale handle. Any thread but the
    /// render thread; does not block.
    public func currentLevelMeter() throws(AudioQueueError) -> [AudioQueueLevelMeterState] {
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        guard meteringEnabled else { throw AudioQueueError(.invalidProperty, "level metering is off") }
        return (0..<min(channels, 8)).map { c in
            let m = hub.core.pointee.meter(slot: Int(slot), channel: c)
            return AudioQueueLevelMeterState(averagePower: m.rms, peakPower: m.peak)
        }
    }

    /// `kAudioQueueProperty_CurrentLevelMeterDB`: the same in decibels (-inf dB as -120).
    public func currentLevelMeterDB() throws(AudioQueueError) -> [AudioQueueLevelMeterState] {
        try currentLevelMeter().map {
            AudioQueueLevelMeterState(averagePower: AudioQueue.decibels($0.averagePower), peakPower: AudioQueue.decibels($0.peakPower))
        }
    }

    /// Per channel (at most 8), the highest sample peak (linear, after the queue's volume) of
    /// every render cycle since the previous call, or since metering was turned on; each call
    /// starts a new span at 0. Unlike ``currentLevelMeter()``, which holds only the latest
    /// cycle, nothing played between two reads is missed: what meters on a display read. A
    /// queue has one such span: two readers would each see part of it. Not in the reference.
    ///
    /// Refused with `.invalidProperty` while metering is off, `.invalidQueue` through a stale
    /// handle. Any thread but the render thread; does not block (the queue's lock, briefly).
    public func peakSinceLastRead() throws(AudioQueueError) -> [Float] {
        lock.lock()
        defer { lock.unlock() }
        if disposed { throw AudioQueueError(.invalidQueue, "the queue was disposed of: the handle is stale") }
        guard meteringEnabled else { throw AudioQueueError(.invalidProperty, "level metering is off") }
        return (0..<min(channels, 8)).map { c in hub.core.pointee.takePeak(slot: Int(slot), channel: c) }
    }

    static func decibels(_ v: Float) -> Float { v > 1e-6 ? 20 * log10(v) : -120 }

    /// `kAudioQueueProperty_MagicCookie`, for compressed formats: the bytes last set with
    /// ``setMagicCookie(_:)`` (empty until then). Any thread but the render thread.
    public var magicCookie: [UInt8] { locked { codec.cookie } }

    /// Sets `kAudioQueueProperty_MagicCookie` (`AudioQueueSetProperty`): the format's magic
    /// cookie as the file stream parser gives it (AAC: AudioSpecificConfig or `esds`; ALAC:
    /// ALACSpecificConfig, bare or in `frma`/`alac` atoms; MP3 needs none but accepts any).
    /// AAC and ALAC queues refuse to enqueue until it is set (`.invalidProperty`). Setting it
    /// opens a new decoder: set it before the first buffer of a stream (the reference: "before
    /// enqueuing any buffers"); buffers already enqueued keep their decoded audio.
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidPropertySize` for an empty cookie, `.unsupportedDataFormat` when the
    ///   decoder cannot use it, `.invalidProperty` on a linear PCM queue, `.disposalPending`.
    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioQueueError) {
        guard isCompressed else {
            throw AudioQueueError(.invalidProperty, "a linear PCM queue has no magic cookie")
        }
        guard !cookie.isEmpty else { throw AudioQueueError(.invalidPropertySize, "the magic cookie is empty") }
        let d: PacketDecoder
        do throws(PacketDecoderError) {
            d = try PacketDecoder(format: format, magicCookie: cookie)
        } catch {
            throw AudioQueueError(.unsupportedDataFormat, "the magic cookie cannot be used: \(error)")
        }
        do {
            lock.lock()
            defer { lock.unlock() }
            try checkLive()
            codec.replace(with: d, cookie: cookie)
        }
        notify(.magicCookie)
    }

    /// Sets the current stream's gapless information: `primingFrames` decoded frames at its
    /// start are not played, and when `numberValidFrames` is more than 0 nothing after
    /// `primingFrames + numberValidFrames` decoded frames is played (that removes the
    /// remainder frames), so the first frame played is the source's first real frame and the
    /// length is the source's. Pass the parser's `packetTableInfo` (MP3 LAME tag, CAF `pakt`).
    /// Frames are counted from the first frame decoded after the call; call it before a
    /// stream's first buffer. ``flush()``, ``reset()`` and stopping end the stream and clear it.
    /// Trims given to ``enqueue(_:trimFramesAtStart:trimFramesAtEnd:parameterEvents:startTime:)``
    /// still apply on top. Nil clears it.
    ///
    /// Any thread but the render thread.
    /// - Throws: `.invalidParameter` for negative counts, `.invalidProperty` on a linear PCM
    ///   queue, `.disposalPending`.
    public func setGaplessInfo(_ info: AudioFilePacketTableInfo?) throws(AudioQueueError) {
        guard isCompressed else {
            throw AudioQueueError(.invalidProperty, "gapless information applies to compressed queues")
        }
        if let info {
            guard info.primingFrames >= 0, info.remainderFrames >= 0, info.numberValidFrames >= 0 else {
                throw AudioQueueError(.invalidParameter, "priming, remainder and valid frames must not be negative")
            }
        }
        lock.lock()
        defer { lock.unlock() }
        try checkLive()
        codec.setGapless(info)
    }

    /// The gapless information in force for the current stream (``setGaplessInfo(_:)``).
    /// Any thread but the render thread.
    public var gaplessInfo: AudioFilePacketTableInfo? { locked { codec.gapless } }

    /// Compressed packets that failed to decode since the queue was made. Each was replaced by
    /// silence of its length, so later audio kept its place; the queue went on playing.
    /// Any thread but the render thread.
    public var corruptPacketCount: Int { locked { codec.corruptPackets } }

    /// Adds a listener for a property (`AudioQueueAddPropertyListener`). `isRunning` listeners
    /// run on the events thread when the render thread reports a change (or on the thread of
    /// an immediate stop); listeners of properties set through the API (`magicCookie`,
    /// `channelLayout`, `enableLevelMetering`) run on the setting thread, after the change.
    /// Returns a token for ``removePropertyListener(_:)``.
    /// Any thread but the render thread; does not block.
    @discardableResult
    public func addPropertyListener(_ id: AudioQueuePropertyID, _ listener: @escaping PropertyListener) -> Int {
        flags.lock()
        defer { flags.unlock() }
        return listenerTable.add(id, listener)
    }

    /// Removes a listener (`AudioQueueRemovePropertyListener`) by its token; `.invalidParameter`
    /// when none has it. Any thread; does not block.
    public func removePropertyListener(_ token: Int) throws(AudioQueueError) {
        flags.lock()
        defer { flags.unlock() }
        try listenerTable.remove(token)
    }

    /// The listeners of `id` now. Any thread (takes the leaf lock).
    func listeners(for id: AudioQueuePropertyID) -> [PropertyListener] {
        flags.lock()
        defer { flags.unlock() }
        return listenerTable.listeners(for: id)
    }

    // MARK: - Time

    /// Makes a timeline object (`AudioQueueCreateTimeline`) for discontinuity reports.
    public func createTimeline() -> AudioQueueTimeline {
        AudioQueueTimeline(epoch: hub.discontinuity.epoch)
    }

    /// The queue's current time (`AudioQueueGetCurrentTime`): queue frames at the queue's rate
    /// since its start, not advancing while paused; 0 while stopped. `discontinuity` is true
    /// once for each new discontinuity since `timeline` last asked.
    public func currentTime(timeline: AudioQueueTimeline? = nil) -> (time: AudioTimeStamp, discontinuity: Bool) {
        if locked({ disposed }) { return (AudioTimeStamp(sampleTime: 0), false) }
        let now = hub.deviceCurrentTime()
        let p = hub.core.pointee.position(slot: Int(slot))
        var deviceFrames = 0.0
        if p.running { deviceFrames = max(0, now.sampleTime - Double(p.origin)) }
        else if p.paused { deviceFrames = max(0, Double(p.pauseFrame - p.origin)) }
        var discontinuity = false
        if let timeline {
            let e = hub.discontinuity.epoch
            if e != timeline.epoch {
                timeline.epoch = e
                discontinuity = true
            }
        }
        let queueFrames = locked { queueTime.map.queueFrame(atDevice: deviceFrames) }
        let ts = AudioTimeStamp(
            sampleTime: queueFrames, hostTime: now.hostTime, rateScalar: now.rateScalar,
            flags: now.flags.union(.sampleTimeValid))
        return (ts, discontinuity)
    }

    /// The device frame at which the queue's frame 0 played (known once it started).
    public var startDeviceFrame: Int64? { locked { startFrame } }

    /// Device frames after the queue's origin (the device frame of its queue frame 0) up to
    /// which audio has been handed to the render thread: the end of the last enqueued buffer
    /// (or rate-converter tail), at the device rate. Without rate conversion this is the queue
    /// frame up to which audio is enqueued; with it, it lags queue frames × device rate / queue
    /// rate by the frames the converter still holds, until ``flush()`` or a stop schedules them.
    /// 0 after a stop or reset. Read-only; any thread but the render thread. (Added for
    /// offline rendering, which makes sure every track has audio past each cycle's end.)
    public var enqueuedDeviceFrames: Int64 { locked { countsDeviceFrames ? queueTime.nextDeviceFrame : queueTime.nextQueueFrame } }

    /// Frames of this queue that were already past when the render thread first saw them
    /// (late buffers) — skipped so that the queue stays on its timeline.
    public var lateFrames: Int64 { locked { lateFramesTotal } }
}
