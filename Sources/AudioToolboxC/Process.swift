// libAudioToolbox.so (issue 12): the C entry points of Audio Queue Services and Audio File
// Stream Services, exported from Swift with `@c` and calling AQEngine and AQFileStream. No
// logic of the engine or the parser lives here: only marshalling between the C structures of
// the headers (Sources/CAudioToolbox/include) and the Swift types, handle bookkeeping, and the
// run-loop sources on Core Foundation's CFRunLoop (the toolchain's). docs/c-api.md says how programs use it.
import AQEngine
import AQJack
import AQJackServer
import CAudioToolbox
import Foundation

// The C structures and the engine's Swift types share names; these say which is which. They are
// public only because the exported functions' signatures use them (plain values: any thread).
/// The C `AudioTimeStamp` of the headers.
public typealias CTimeStamp = CAudioToolbox.AudioTimeStamp
/// The engine's time stamp.
public typealias STimeStamp = AQCore.AudioTimeStamp
/// The C `AudioStreamBasicDescription`.
public typealias CFormat = CAudioToolbox.AudioStreamBasicDescription
/// The engine's stream format.
public typealias SFormat = AQTypes.AudioStreamBasicDescription
/// The C `AudioQueueBuffer`.
public typealias CBuffer = CAudioToolbox.AudioQueueBuffer
/// The engine's buffer.
public typealias SBuffer = AQEngine.AudioQueueBuffer
/// The C `AudioStreamPacketDescription`.
public typealias CPacketDescription = CAudioToolbox.AudioStreamPacketDescription
/// The engine's packet description.
public typealias SPacketDescription = AQTypes.AudioStreamPacketDescription

let paramError: OSStatus = -50  // kAudio_ParamError

/// The process's one engine, on a JACK device (or, with `AQSYNC_DEVICE=offline`, on a
/// hand-driven device for offline rendering only), made when the first queue is made and
/// closed at exit. Thread safety: every member under `lock`.
final class ProcessEngine: @unchecked Sendable {
    static let shared = ProcessEngine()
    let lock = NSLock()
    private var engine: AudioQueueEngine?

    /// The engine, made on first use with at least `channels` outputs and `inputs` inputs
    /// (`AQSYNC_INPUTS`, default 2, or more when the first queue is a recording queue that asks
    /// for more). Any control thread; opening the JACK client blocks for as long as libjack
    /// takes.
    func get(channels: Int, inputs: Int = 0) throws(AudioQueueError) -> AudioQueueEngine {
        lock.lock()
        defer { lock.unlock() }
        if let engine { return engine }
        let env = ProcessInfo.processInfo.environment
        let device: any AudioDevice
        // Every process's device has input ports (in_1…in_N), so that a recording queue made
        // after a playback queue has them: N = AQSYNC_INPUTS (0 for none), default 2.
        let inputCount = max(env["AQSYNC_INPUTS"].flatMap(Int.init).map { max($0, 0) } ?? 2, inputs)
        if env["AQSYNC_DEVICE"] == "offline" {
            let rate = env["AQSYNC_SAMPLE_RATE"].flatMap(Double.init) ?? 48000
            device = ManualDevice(sampleRate: rate, channels: max(2, channels), inputChannels: inputCount, framesPerCycle: 1024, uid: "offline")
        } else {
            var connections = JackConnections.physical
            if let connect = env["AQSYNC_CONNECT"] {
                let ports = connect.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                connections = ports.isEmpty ? .none : .ports(ports)
            }
            var inputConnections = JackConnections.physical
            if let connect = env["AQSYNC_INPUT_CONNECT"] {
                let ports = connect.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                inputConnections = ports.isEmpty ? .none : .ports(ports)
            }
            var outputs = max(2, channels)
            if case .ports(let p) = connections { outputs = max(outputs, p.count) }
            if let n = env["AQSYNC_OUTPUTS"].flatMap(Int.init), n > 0 { outputs = n }
            let name = env["AQSYNC_CLIENT_NAME"].flatMap { $0.isEmpty ? nil : $0 } ?? ProcessEngine.programName()
            // AQSYNC_RECONNECT=0: a server that goes away is gone for good (queues stop, starts
            // answer kAudioQueueErr_CannotStart); otherwise the device waits for it to return.
            let reconnect = env["AQSYNC_RECONNECT"] != "0"
            // No server reachable: start one, as libjack's own default does (issue 22).
            try startServerIfNeeded(env)
            do {
                device = try JackDevice(options: JackDeviceOptions(
                    clientName: name, serverName: nil, outputChannels: outputs, inputChannels: inputCount,
                    outputConnections: connections, inputConnections: inputConnections, reconnect: reconnect))
            } catch {
                stopStartedServer()
                throw AudioQueueError(.invalidDevice, "no JACK server reachable: \(error.message)")
            }
        }
        // Capacities for C programs (issue 22): up to 1024 buffers enqueued on a queue (the
        // engine's default of 64, less the one slot a converter tail needs, was too few for
        // players that enqueue many small buffers), for up to 64 queues at once. The schedule
        // and event rings are allocated here, on the control side, so the render thread still
        // allocates nothing; they take about 6 MB.
        let made = try AudioQueueEngine(device: device, capacities: RenderCapacities(queues: 64, buffersPerQueue: 1025))
        engine = made
        atexit { ProcessEngine.shared.close() }
        return made
    }

    /// Closes the engine (at exit): the JACK client leaves the graph cleanly; then stops the
    /// server this process started, if it did.
    func close() {
        lock.lock()
        let e = engine
        engine = nil
        lock.unlock()
        e?.close()
        lock.lock()
        stopStartedServer()
        lock.unlock()
    }

    /// The server this process started because none was reachable; stopped at exit. Under `lock`.
    private var startedServer: JackServer?
    /// True once a start was tried: at most one per process. Under `lock`.
    private var startTried = false

    /// When no JACK server `JACK_DEFAULT_SERVER` (or `default`) is reachable, starts one of that
    /// name the way `aqsync play` does (`JackServer.startPrivate`: ALSA on the first card when
    /// there is one, the dummy backend otherwise, 48 kHz, 256 frames), once per process; it is
    /// stopped when the process exits (`close`, at exit). Not when `JACK_NO_START_SERVER` is set
    /// (libjack's variable), nor on PipeWire's libjack (its clients connect to PipeWire; a jackd
    /// would not serve them): then the client's open fails and the caller answers InvalidDevice.
    /// Called under `lock`.
    private func startServerIfNeeded(_ env: [String: String]) throws(AudioQueueError) {
        if JackDevice.isServerReachable(nil) { return }
        let serverName = JackDevice.resolveServerName(nil)
        if env["JACK_NO_START_SERVER"] != nil {
            throw AudioQueueError(.invalidDevice, "no JACK server '\(serverName)' is reachable and JACK_NO_START_SERVER is set")
        }
        if JackImplementation.current == .pipewire {
            throw AudioQueueError(.invalidDevice, "no JACK server '\(serverName)' is reachable through PipeWire's libjack (is PipeWire running?); no jackd is started for it")
        }
        guard !startTried else {
            throw AudioQueueError(.invalidDevice, "no JACK server '\(serverName)' is reachable (this process started one already, or failed to)")
        }
        startTried = true
        do {
            let server = try JackServer.startPrivate(name: serverName)
            startedServer = server
            // Stopped at exit even when no engine is made (the engine's own handler closes it first).
            atexit { ProcessEngine.shared.close() }
            if env["AQSYNC_DEBUG"] != nil {
                FileHandle.standardError.write(Data("AudioToolbox: no JACK server '\(serverName)' was reachable: started a \(server.summary) (pid \(server.processIdentifier)); it stops when this process exits\n".utf8))
            }
        } catch {
            throw AudioQueueError(.invalidDevice, "no JACK server '\(serverName)' is reachable and none could be started: \(error.message)")
        }
    }

    /// Stops the server this process started, if any. Under `lock`.
    private func stopStartedServer() {
        startedServer?.stop()
        startedServer = nil
    }

    /// The program's name: the last path component of argv[0], else /proc/self/comm.
    static func programName() -> String {
        if let first = CommandLine.arguments.first, !first.isEmpty {
            let name = (first as NSString).lastPathComponent
            if !name.isEmpty { return String(name.prefix(48)) }
        }
        if let comm = try? String(contentsOfFile: "/proc/self/comm", encoding: .utf8) {
            return comm.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return "AudioToolbox"
    }
}

/// Runs `body` and turns a thrown `AudioQueueError` into its result code.
@inline(__always)
func status(_ body: () throws(AudioQueueError) -> Void) -> OSStatus {
    do {
        try body()
        return 0
    } catch {
        if ProcessInfo.processInfo.environment["AQSYNC_DEBUG"] != nil {
            FileHandle.standardError.write(Data("AudioToolbox: \(error)\n".utf8))
        }
        return error.status
    }
}

// MARK: - Time stamps

extension STimeStamp {
    /// The C time stamp's sample time, host time and rate scalar with their flags.
    init(c: CTimeStamp) {
        self.init(
            sampleTime: c.mSampleTime, hostTime: c.mHostTime, rateScalar: c.mRateScalar,
            flags: Flags(rawValue: c.mFlags & 0b111))
    }
    /// The C time stamp (word clock and SMPTE time not valid).
    var c: CTimeStamp {
        var t = CTimeStamp()
        t.mSampleTime = sampleTime
        t.mHostTime = hostTime
        t.mRateScalar = rateScalar
        t.mFlags = flags.rawValue
        return t
    }
}

extension SFormat {
    init(c: CFormat) {
        self.init(
            sampleRate: c.mSampleRate, formatID: FourCharCode(rawValue: c.mFormatID),
            formatFlags: AudioFormatFlags(rawValue: c.mFormatFlags), bytesPerPacket: c.mBytesPerPacket,
            framesPerPacket: c.mFramesPerPacket, bytesPerFrame: c.mBytesPerFrame, channelsPerFrame: c.mChannelsPerFrame,
            bitsPerChannel: c.mBitsPerChannel)
    }
    var c: CFormat {
        CFormat(
            mSampleRate: sampleRate, mFormatID: formatID.rawValue, mFormatFlags: formatFlags.rawValue,
            mBytesPerPacket: bytesPerPacket, mFramesPerPacket: framesPerPacket, mBytesPerFrame: bytesPerFrame,
            mChannelsPerFrame: channelsPerFrame, mBitsPerChannel: bitsPerChannel, mReserved: 0)
    }
}

extension AQTypes.AudioChannelLayout {
    /// From the C structure (12 bytes + 20 per description).
    init(c: UnsafePointer<CAudioToolbox.AudioChannelLayout>) {
        let n = Int(c.pointee.mNumberChannelDescriptions)
        var descriptions: [AQTypes.AudioChannelDescription] = []
        let base = UnsafeRawPointer(c) + 12
        for i in 0..<n {
            let d = (base + 20 * i).loadUnaligned(as: CAudioToolbox.AudioChannelDescription.self)
            descriptions.append(AQTypes.AudioChannelDescription(
                label: d.mChannelLabel, flags: d.mChannelFlags, coordinates: (d.mCoordinates.0, d.mCoordinates.1, d.mCoordinates.2)))
        }
        self.init(tag: c.pointee.mChannelLayoutTag, bitmap: c.pointee.mChannelBitmap, descriptions: descriptions)
    }
    /// The C structure's bytes.
    var cBytes: [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        u32(tag)
        u32(bitmap)
        u32(UInt32(descriptions.count))
        for d in descriptions {
            u32(d.label)
            u32(d.flags)
            u32(d.coordinate0.bitPattern)
            u32(d.coordinate1.bitPattern)
            u32(d.coordinate2.bitPattern)
        }
        if descriptions.isEmpty { out += [UInt8](repeating: 0, count: 20) }
        return out
    }
}
