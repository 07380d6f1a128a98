// Audio Queue Services' C functions (AudioToolbox/AudioQueue.h) on AQEngine. Issue 12.
import AQEngine
import CAudioToolbox
import Foundation

/// What an `AudioQueueRef` points to: the engine's queue (playback or recording), the C
/// callback's user data, where its callbacks go (a run loop, a dispatch queue, or neither: the
/// engine's events thread), its C buffers and its C listeners. Thread safety: `lock` guards the
/// tables; the rest is set once.
final class CQueue: @unchecked Sendable {
    /// The engine's queue: a playback queue (`AudioQueueNewOutput`) or a recording one
    /// (`AudioQueueNewInput`).
    enum Kind {
        case output(AQEngine.AudioQueue)
        case input(AudioInputQueue)
    }
    /// The engine's queue and its engine: replaced when the queue moves to or from a private
    /// offline engine (`OfflineQueueSwitch.swift`). Under `bindLock`.
    private var bound: (kind: Kind, engine: AudioQueueEngine)
    private let bindLock = NSLock()
    /// The engine's queue now. Any thread.
    var kind: Kind { bindLock.withLock { bound.kind } }
    /// The engine's queue now, whichever its kind: for the calls both kinds answer alike.
    /// Any thread.
    var common: any AudioQueueCommon {
        switch kind {
        case .output(let q): return q
        case .input(let q): return q
        }
    }
    /// The engine the queue is on now: the process's, or its private offline engine. Any thread.
    var engine: AudioQueueEngine { bindLock.withLock { bound.engine } }
    /// Binds the handle to `kind` on `engine` (`OfflineQueueSwitch.swift`). Any control thread.
    func rebind(_ kind: Kind, on engine: AudioQueueEngine) { bindLock.withLock { bound = (kind, engine) } }
    /// A playback queue's engine callback (made once by `newOutputQueue`), to make the queue
    /// again on another engine. Set once before the handle is published.
    var outputCallback: AQEngine.AudioQueue.OutputCallback?
    /// The private engine on a hand-driven device this queue is on (offline rendering, or no
    /// live device could be made), owned by the queue and closed when it leaves it or is
    /// disposed of; nil on the process's engine. Under `lock`.
    var privateEngine: AudioQueueEngine?
    /// Threads running this queue's callback or a listener now (count by thread): calls that
    /// must not come from them (`AudioQueueSetOfflineRenderFormat`) look here. Under `lock`.
    var callbackThreads: [pthread_t: Int] = [:]
    /// `AudioQueueOfflineRender` calls in progress. Under `lock`.
    var offlineRenders = 0
    let userData: UnsafeMutableRawPointer?
    /// The caller's run loop's source, for a queue made with a run loop.
    let runLoop: RunLoopDelivery?
    /// The caller's dispatch queue, for a queue made with one (`…WithDispatchQueue`).
    let dispatch: DispatchDelivery?
    let lock = NSLock()
    /// C buffer address → the engine's buffer.
    var buffers: [UnsafeMutablePointer<CBuffer>: SBuffer] = [:]
    var listeners: [(id: UInt32, proc: AudioQueuePropertyListenerProc, userData: UnsafeMutableRawPointer?, token: Int)] = []
    var disposed = false

    init(kind: Kind, engine: AudioQueueEngine, userData: UnsafeMutableRawPointer?, runLoop: RunLoopDelivery?,
         dispatch: DispatchDelivery? = nil) {
        bound = (kind, engine)
        self.userData = userData
        self.runLoop = runLoop
        self.dispatch = dispatch
    }

    /// The playback queue; a recording queue answers kAudioQueueErr_InvalidQueueType (the call
    /// belongs to the other kind of queue).
    var queue: AQEngine.AudioQueue {
        get throws(AudioQueueError) {
            switch kind {
            case .output(let q): return q
            case .input: throw AudioQueueError(.invalidQueueType, "a playback queue's call on a recording queue")
            }
        }
    }

    var ref: AudioQueueRef { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// Runs `body` (the program's callback or listener) marked as this queue's callback on
    /// this thread. The callback's thread; allocates, does not block but for `lock`.
    func asCallback(_ body: () -> Void) {
        let me = pthread_self()
        lock.withLock { callbackThreads[me, default: 0] += 1 }
        defer {
            lock.withLock {
                let n = callbackThreads[me, default: 1] - 1
                callbackThreads[me] = n > 0 ? n : nil
            }
        }
        body()
    }

    /// True on a thread running this queue's callback or a listener now. Any thread.
    var onCallbackThread: Bool { lock.withLock { callbackThreads[pthread_self()] != nil } }

    /// Runs `work` on the queue's callback thread: submitted to its dispatch queue when it has
    /// one; here when there is no run loop or this is its thread, else posted to the loop's
    /// source. Posted or submitted work is skipped if the queue was disposed of meanwhile.
    func deliver(_ work: @escaping () -> Void) {
        if let dispatch {
            dispatch.post { [self] in
                if lock.withLock({ disposed }) { return }
                work()
            }
            return
        }
        guard let runLoop, !runLoop.isCurrent else { return work() }
        runLoop.post { [self] in
            if lock.withLock({ disposed }) { return }
            work()
        }
    }

    func cBuffer(for b: SBuffer) -> UnsafeMutablePointer<CBuffer>? {
        (b.userData as? CBufferBox)?.pointer
    }
}

/// The engine buffer's link back to its C structure.
final class CBufferBox {
    let pointer: UnsafeMutablePointer<CBuffer>
    init(_ p: UnsafeMutablePointer<CBuffer>) { pointer = p }
}

/// Live queue handles: a handle not in it (never made, or disposed of) is kAudio_ParamError.
enum Handles {
    static let lock = NSLock()
    nonisolated(unsafe) static var live: [UnsafeMutableRawPointer: CQueue] = [:]

    static func queue(_ ref: AudioQueueRef?) -> CQueue? {
        guard let ref else { return nil }
        return lock.withLock { live[UnsafeMutableRawPointer(ref)] }
    }
    static func add(_ q: CQueue) { lock.withLock { live[UnsafeMutableRawPointer(q.ref)] = q } }
    static func remove(_ q: CQueue) { _ = lock.withLock { live.removeValue(forKey: UnsafeMutableRawPointer(q.ref)) } }
}

/// Looks the handle up and runs `body` with it; an unknown handle is kAudio_ParamError.
@inline(__always)
func withQueue(_ ref: AudioQueueRef?, _ body: (CQueue) throws(AudioQueueError) -> Void) -> OSStatus {
    guard let q = Handles.queue(ref) else { return paramError }
    return status { () throws(AudioQueueError) in try body(q) }
}

// MARK: - Creating and disposing

/// `AudioQueueNewOutput`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueNewOutput(
    _ inFormat: UnsafePointer<CFormat>?, _ inCallbackProc: AudioQueueOutputCallback?, _ inUserData: UnsafeMutableRawPointer?,
    _ inCallbackRunLoop: OpaquePointer?, _ inCallbackRunLoopMode: OpaquePointer?, _ inFlags: UInt32,
    _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?
) -> OSStatus {
    guard let inFormat, let inCallbackProc, let outAQ else { return paramError }
    // The reference: inFlags is reserved and must be 0.
    guard inFlags == 0 else { return paramError }
    let loop = inCallbackRunLoop.map { RunLoopDelivery(loop: RunLoopDelivery.loop($0), mode: RunLoopDelivery.mode(inCallbackRunLoopMode)) }
    return newOutputQueue(inFormat.pointee, userData: inUserData, runLoop: loop, dispatch: nil, outAQ) { cq, cb in
        inCallbackProc(cq.userData, cq.ref, cb)
    }
}

/// Makes a playback queue whose buffers come back through `call` (on the queue's callback
/// thread: see ``CQueue/deliver(_:)``) and stores its handle in `outAQ`. The arguments were
/// checked by the caller.
func newOutputQueue(
    _ cFormat: CFormat, userData: UnsafeMutableRawPointer?, runLoop: RunLoopDelivery?, dispatch: DispatchDelivery?,
    _ outAQ: UnsafeMutablePointer<AudioQueueRef?>, call: @escaping (CQueue, UnsafeMutablePointer<CBuffer>) -> Void
) -> OSStatus {
    let format = SFormat(c: cFormat)
    return status { () throws(AudioQueueError) in
        // No live device (no JACK server reachable and none startable): the queue is made on a
        // private hand-driven engine, where it can render offline; starting it live answers
        // InvalidDevice (OfflineQueueSwitch.swift, docs/c-api.md "Offline rendering").
        let engine: AudioQueueEngine
        var privateEngine: AudioQueueEngine?
        do throws(AudioQueueError) {
            engine = try ProcessEngine.shared.get(channels: Int(format.channelsPerFrame))
        } catch where error.code == .invalidDevice {
            let rate = format.sampleRate > 0 && format.sampleRate.isFinite ? format.sampleRate : 48000
            engine = try makeOfflineEngine(sampleRate: rate, channels: Int(format.channelsPerFrame))
            privateEngine = engine
            debugNote("no live device (\(error.message)): the queue is made for offline rendering only")
        }
        let box = WeakBox()
        let callback: AQEngine.AudioQueue.OutputCallback = { _, buffer in
            guard let cq = box.value, let cb = cq.cBuffer(for: buffer) else { return }
            cq.deliver { cq.asCallback { call(cq, cb) } }
        }
        let queue: AQEngine.AudioQueue
        do throws(AudioQueueError) {
            queue = try engine.newOutput(format: format, callback: callback)
        } catch {
            privateEngine?.close()
            throw error
        }
        let made = CQueue(kind: .output(queue), engine: engine, userData: userData, runLoop: runLoop, dispatch: dispatch)
        made.outputCallback = callback
        made.privateEngine = privateEngine
        box.value = made
        Handles.add(made)
        outAQ.pointee = made.ref
    }
}

/// The queue as the engine's callback sees it (weak: the handle table owns it).
final class WeakBox: @unchecked Sendable {
    weak var value: CQueue?
}

/// `AudioQueueNewInput`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads
/// and blocking in docs/c-api.md. The queue records the JACK device's inputs `in_1…` (channel
/// `c` from input `c`; docs/c-api.md: how many there are and what they are connected to).
@c public func AudioQueueNewInput(
    _ inFormat: UnsafePointer<CFormat>?, _ inCallbackProc: AudioQueueInputCallback?, _ inUserData: UnsafeMutableRawPointer?,
    _ inCallbackRunLoop: OpaquePointer?, _ inCallbackRunLoopMode: OpaquePointer?, _ inFlags: UInt32,
    _ outAQ: UnsafeMutablePointer<AudioQueueRef?>?
) -> OSStatus {
    guard let inFormat, let inCallbackProc, let outAQ else { return paramError }
    guard inFlags == 0 else { return paramError }
    let loop = inCallbackRunLoop.map { RunLoopDelivery(loop: RunLoopDelivery.loop($0), mode: RunLoopDelivery.mode(inCallbackRunLoopMode)) }
    return newInputQueue(inFormat.pointee, userData: inUserData, runLoop: loop, dispatch: nil, outAQ) { cq, cb, time, n, descriptions in
        inCallbackProc(cq.userData, cq.ref, cb, time, n, descriptions)
    }
}

/// Makes a recording queue whose filled buffers go to `call` (on the queue's callback thread,
/// with the start time, the packet count and the descriptions, NULL when there are none) and
/// stores its handle in `outAQ`. The arguments were checked by the caller.
func newInputQueue(
    _ cFormat: CFormat, userData inUserData: UnsafeMutableRawPointer?, runLoop loop: RunLoopDelivery?,
    dispatch: DispatchDelivery?, _ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
    call: @escaping (CQueue, UnsafeMutablePointer<CBuffer>, UnsafePointer<CTimeStamp>, UInt32, UnsafePointer<CPacketDescription>?) -> Void
) -> OSStatus {
    let format = SFormat(c: cFormat)
    return status { () throws(AudioQueueError) in
        let engine = try ProcessEngine.shared.get(channels: 2, inputs: Int(format.channelsPerFrame))
        let box = WeakBox()
        let queue = try engine.newInput(format: format) { _, buffer, time, descriptions in
            guard let cq = box.value, let cb = cq.cBuffer(for: buffer) else { return }
            // The C buffer shares the engine buffer's bytes; its size and descriptions are copied.
            cb.pointee.mAudioDataByteSize = UInt32(buffer.audioDataByteSize)
            var cDescriptions = descriptions.map {
                CPacketDescription(mStartOffset: $0.startOffset, mVariableFramesInPacket: $0.variableFramesInPacket, mDataByteSize: $0.dataByteSize)
            }
            if let own = cb.pointee.mPacketDescriptions, cb.pointee.mPacketDescriptionCapacity > 0 {
                let n = min(cDescriptions.count, Int(cb.pointee.mPacketDescriptionCapacity))
                for i in 0..<n { own[i] = cDescriptions[i] }
                cb.pointee.mPacketDescriptionCount = UInt32(n)
            }
            // Constant-size packets (linear PCM): the count is the buffer's packets (its frames)
            // and there are no descriptions, as the reference says.
            let packets = descriptions.isEmpty
                ? (format.bytesPerPacket > 0 ? buffer.audioDataByteSize / Int(format.bytesPerPacket) : 0) : descriptions.count
            let stamp = time.c
            cq.deliver {
                var t = stamp
                cDescriptions.withUnsafeMutableBufferPointer { d in
                    call(cq, cb, &t, UInt32(packets), d.isEmpty ? nil : UnsafePointer(d.baseAddress))
                }
            }
        }
        let made = CQueue(kind: .input(queue), engine: engine, userData: inUserData, runLoop: loop, dispatch: dispatch)
        box.value = made
        Handles.add(made)
        outAQ.pointee = made.ref
    }
}

/// `AudioQueueDispose`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueDispose(_ inAQ: AudioQueueRef?, _ inImmediate: Bool) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        if case .input(let input) = q.kind {
            // A recording queue has nothing left to play: both ways finish now, and no callback
            // or listener runs once this returns.
            try input.dispose(immediately: inImmediate)
            release(q)
            return
        }
        // Asynchronous (not immediate): the handle stays valid until the engine reports the
        // disposal complete (on its events thread, once the last buffer has played).
        try q.queue.dispose(immediately: inImmediate, whenDisposed: { release(q) })
    }
}

/// Frees a disposed queue's C buffers and drops its handle.
func release(_ q: CQueue) {
    Handles.remove(q)
    TapHandles.removeAll(of: q)
    q.lock.lock()
    q.disposed = true
    let buffers = q.buffers
    q.buffers.removeAll()
    q.lock.unlock()
    let privateEngine = q.lock.withLock { () -> AudioQueueEngine? in
        defer { q.privateEngine = nil }
        return q.privateEngine
    }
    privateEngine?.close()
    q.runLoop?.invalidate()
    q.dispatch?.invalidate()
    for (p, b) in buffers {
        b.userData = nil
        p.deallocate()
    }
}

// MARK: - Buffers

func allocate(_ inAQ: AudioQueueRef?, _ size: UInt32, _ descriptions: UInt32, _ out: UnsafeMutablePointer<AudioQueueBufferRef?>?) -> OSStatus {
    guard let out else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        // A compressed queue's engine buffers always carry packet descriptions; a buffer
        // allocated without them (AudioQueueAllocateBuffer) gets hidden room for one per 256
        // bytes (16 to 2048), which AudioQueueEnqueueBuffer's descriptions are copied into; it
        // grows when more are passed (prepare), so there is no limit.
        let b: SBuffer
        switch q.kind {
        case .output(let queue):
            var hidden = Int(descriptions)
            if hidden == 0 && !queue.format.isLinearPCM { hidden = min(max(16, Int(size) / 256), 2048) }
            b = try queue.allocateBuffer(capacity: Int(size), packetDescriptions: hidden)
        case .input(let input):
            // Compressed recording: the buffer takes at most `descriptions` packets when it has
            // descriptions, else as many as fit (the callback gets their descriptions).
            b = try input.allocateBuffer(capacity: Int(size), packetDescriptions: Int(descriptions))
        }
        let p = UnsafeMutablePointer<CBuffer>.allocate(capacity: 1)
        let pds = descriptions > 0 ? UnsafeMutableRawPointer(b.packetDescriptions)?.assumingMemoryBound(to: CPacketDescription.self) : nil
        aqc_buffer_init(p, UInt32(b.audioDataBytesCapacity), b.audioData, pds == nil ? 0 : descriptions, pds)
        b.userData = CBufferBox(p)
        q.lock.withLock { q.buffers[p] = b }
        out.pointee = p
    }
}

/// `AudioQueueAllocateBuffer`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueAllocateBuffer(_ inAQ: AudioQueueRef?, _ inBufferByteSize: UInt32, _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>?) -> OSStatus {
    allocate(inAQ, inBufferByteSize, 0, outBuffer)
}

/// `AudioQueueAllocateBufferWithPacketDescriptions`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueAllocateBufferWithPacketDescriptions(
    _ inAQ: AudioQueueRef?, _ inBufferByteSize: UInt32, _ inNumberPacketDescriptions: UInt32,
    _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>?
) -> OSStatus {
    allocate(inAQ, inBufferByteSize, inNumberPacketDescriptions, outBuffer)
}

/// The engine buffer behind a C buffer of this queue, or `invalidBuffer`.
func engineBuffer(_ q: CQueue, _ p: AudioQueueBufferRef?) throws(AudioQueueError) -> SBuffer {
    guard let p, let b = q.lock.withLock({ q.buffers[p] }) else {
        throw AudioQueueError(.invalidBuffer, "the buffer does not belong to this queue")
    }
    return b
}

/// `AudioQueueFreeBuffer`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueFreeBuffer(_ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        let b = try engineBuffer(q, inBuffer)
        try q.common.freeBuffer(b)
        q.lock.withLock { _ = q.buffers.removeValue(forKey: inBuffer!) }
        b.userData = nil
        inBuffer!.deallocate()
    }
}

/// Copies the C buffer's size and the packet descriptions into the engine buffer of an output
/// queue, as Apple's AudioQueueEnqueueBuffer takes them:
/// - linear PCM: descriptions are ignored (constant-size packets need none); a compressed
///   format of constant-size packets (Apple IMA4) passed none plays the buffer as whole packets;
/// - descriptions passed to the call are used;
/// - none passed (0 or NULL): the buffer's own, `mPacketDescriptions` / `mPacketDescriptionCount`
///   (how a buffer from AudioQueueAllocateBufferWithPacketDescriptions is described).
/// A buffer from AudioQueueAllocateBuffer (hidden room) grows to take any number; a buffer
/// with visible room takes at most its `mPacketDescriptionCapacity` (`kAudioQueueErr_InvalidParameter`).
func prepare(_ queue: AQEngine.AudioQueue, _ b: SBuffer, _ p: AudioQueueBufferRef, _ count: UInt32, _ descriptions: UnsafePointer<CPacketDescription>?) throws(AudioQueueError) {
    b.audioDataByteSize = Int(p.pointee.mAudioDataByteSize)
    guard !queue.format.isLinearPCM else {
        b.packetDescriptionCount = 0
        return
    }
    var source = count > 0 ? descriptions : nil
    var n = Int(count)
    if source == nil {
        source = p.pointee.mPacketDescriptions.map { UnsafePointer($0) }
        n = source == nil ? 0 : Int(p.pointee.mPacketDescriptionCount)
    }
    guard let source, n > 0 else {
        b.packetDescriptionCount = 0
        return
    }
    if n > b.packetDescriptionCapacity {
        guard p.pointee.mPacketDescriptionCapacity == 0 else {
            throw AudioQueueError(.invalidParameter, "\(n) packet descriptions; the buffer has room for \(p.pointee.mPacketDescriptionCapacity)")
        }
        try queue.growPacketDescriptions(b, to: n)
    }
    guard let dst = b.packetDescriptions else { throw AudioQueueError(.invalidParameter, "the buffer has no room for packet descriptions") }
    let raw = UnsafeMutableRawPointer(dst)
    if UnsafeRawPointer(raw) != UnsafeRawPointer(source) {
        raw.copyMemory(from: source, byteCount: n * MemoryLayout<CPacketDescription>.stride)
    }
    b.packetDescriptionCount = n
}

/// A buffer still enqueued is `kAudioQueueErr_BufferEnqueuedTwice`, before its size or
/// descriptions are touched (they are the queue's until it comes back).
func refuseTwice(_ b: SBuffer) throws(AudioQueueError) {
    if b.isEnqueued { throw AudioQueueError(.bufferEnqueuedTwice, "the buffer is already enqueued (it has not come back through the callback)") }
}

/// `AudioQueueEnqueueBuffer`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueEnqueueBuffer(
    _ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?, _ inNumPacketDescs: UInt32,
    _ inPacketDescs: UnsafePointer<CPacketDescription>?
) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        let b = try engineBuffer(q, inBuffer)
        if case .input(let input) = q.kind { return try input.enqueue(b) }  // a buffer to fill
        let queue = try q.queue
        try refuseTwice(b)
        try prepare(queue, b, inBuffer!, inNumPacketDescs, inPacketDescs)
        try queue.enqueue(b)
    }
}

/// `AudioQueueEnqueueBufferWithParameters`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueEnqueueBufferWithParameters(
    _ inAQ: AudioQueueRef?, _ inBuffer: AudioQueueBufferRef?, _ inNumPacketDescs: UInt32,
    _ inPacketDescs: UnsafePointer<CPacketDescription>?, _ inTrimFramesAtStart: UInt32, _ inTrimFramesAtEnd: UInt32,
    _ inNumParamValues: UInt32, _ inParamValues: UnsafePointer<CAudioToolbox.AudioQueueParameterEvent>?,
    _ inStartTime: UnsafePointer<CTimeStamp>?, _ outActualStartTime: UnsafeMutablePointer<CTimeStamp>?
) -> OSStatus {
    if inNumParamValues > 0 && inParamValues == nil { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        let b = try engineBuffer(q, inBuffer)
        let queue = try q.queue
        try refuseTwice(b)
        try prepare(queue, b, inBuffer!, inNumPacketDescs, inPacketDescs)
        var events: [AQEngine.AudioQueueParameterEvent] = []
        for i in 0..<Int(inNumParamValues) {
            events.append(AQEngine.AudioQueueParameterEvent(rawParameter: inParamValues![i].mID, value: inParamValues![i].mValue))
        }
        let actual = try queue.enqueue(
            b, trimFramesAtStart: Int(inTrimFramesAtStart), trimFramesAtEnd: Int(inTrimFramesAtEnd),
            parameterEvents: events, startTime: inStartTime.map { STimeStamp(c: $0.pointee) })
        outActualStartTime?.pointee = actual.c
    }
}

// MARK: - Control

/// `AudioQueueStart`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueStart(_ inAQ: AudioQueueRef?, _ inStartTime: UnsafePointer<CTimeStamp>?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        let at = inStartTime.map { STimeStamp(c: $0.pointee) }
        switch q.kind {
        case .output(let queue):
            try refuseLiveStartWithoutDevice(q, queue)
            try queue.start(at: at)
        case .input(let input): _ = try input.start(at: at)
        }
    }
}

/// `AudioQueuePrime`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueuePrime(_ inAQ: AudioQueueRef?, _ inNumberOfFramesToPrepare: UInt32, _ outNumberOfFramesPrepared: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        let frames = try q.queue.prime(framesToPrepare: Int(inNumberOfFramesToPrepare))
        outNumberOfFramesPrepared?.pointee = UInt32(clamping: frames)
    }
}

/// `AudioQueueStop`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueStop(_ inAQ: AudioQueueRef?, _ inImmediate: Bool) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        try q.common.stop(immediately: inImmediate)
    }
}

/// `AudioQueuePause`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueuePause(_ inAQ: AudioQueueRef?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        try q.common.pause()
    }
}

/// `AudioQueueFlush`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueFlush(_ inAQ: AudioQueueRef?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        try q.common.flush()
    }
}

/// `AudioQueueReset`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueReset(_ inAQ: AudioQueueRef?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        try q.common.reset()
    }
}

// MARK: - Parameters and properties

/// `AudioQueueGetParameter`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueGetParameter(_ inAQ: AudioQueueRef?, _ inParamID: UInt32, _ outValue: UnsafeMutablePointer<AudioQueueParameterValue>?) -> OSStatus {
    guard let outValue else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        guard let id = AQEngine.AudioQueueParameterID(rawValue: inParamID) else {
            throw AudioQueueError(.invalidParameter, "unknown parameter \(inParamID)")
        }
        outValue.pointee = try q.queue.parameter(id)
    }
}

/// `AudioQueueSetParameter`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueSetParameter(_ inAQ: AudioQueueRef?, _ inParamID: UInt32, _ inValue: AudioQueueParameterValue) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in try q.queue.setParameter(rawID: inParamID, inValue) }
}

/// A property's value as the C API lays it out: the engine's bytes, except CurrentDevice, which
/// is a new CFString (the caller releases it, as with Apple's queue) holding the device's
/// identifier.
func cProperty(_ q: CQueue, _ id: UInt32) throws(AudioQueueError) -> [UInt8] {
    let bytes = try q.common.property(id)
    if id == UInt32(kAudioQueueProperty_ChannelAssignments) {
        // One C AudioQueueChannelAssignment (16 bytes) per UInt32 the engine gives.
        return Array(repeating: 0, count: bytes.count / 4 * MemoryLayout<CAudioToolbox.AudioQueueChannelAssignment>.stride)
    }
    guard id == UInt32(kAudioQueueProperty_CurrentDevice) else { return bytes }
    return withUnsafeBytes(of: UInt(bitPattern: 0)) { Array($0) }
}

/// ChannelAssignments' value for `AudioQueueGetProperty`, written into `out` (room for one
/// C assignment per channel, checked by the caller): each `mDeviceUID` a new (+1) CFString of
/// the device identifier, which the caller releases, as CurrentDevice's.
func writeChannelAssignments(_ q: CQueue, into out: UnsafeMutableRawPointer) {
    let assignments = q.common.channelAssignments
    let c = out.bindMemory(to: CAudioToolbox.AudioQueueChannelAssignment.self, capacity: assignments.count)
    for (i, a) in assignments.enumerated() {
        let uid = Unmanaged<CFString>.passRetained(CFStrings.make(a.deviceUID))
        c[i] = CAudioToolbox.AudioQueueChannelAssignment(mDeviceUID: uid, mChannelNumber: UInt32(clamping: a.channelNumber))
    }
}

/// ChannelAssignments from `AudioQueueSetProperty`'s bytes: `inDataSize` must be whole C
/// assignments (`.invalidPropertySize`; the count is the engine's to check); a NULL
/// `mDeviceUID` is `.invalidDevice`, one that is not a CFString `.invalidPropertyValue`.
func setChannelAssignments(_ q: CQueue, _ inData: UnsafeRawPointer?, _ inDataSize: UInt32) throws(AudioQueueError) {
    let size = MemoryLayout<CAudioToolbox.AudioQueueChannelAssignment>.stride
    guard let inData, inDataSize > 0, Int(inDataSize) % size == 0 else {
        throw AudioQueueError(.invalidPropertySize, "ChannelAssignments is one AudioQueueChannelAssignment (\(size) bytes) per channel; \(inDataSize) bytes given")
    }
    var assignments: [AQEngine.AudioQueueChannelAssignment] = []
    for i in 0..<Int(inDataSize) / size {
        let c = inData.loadUnaligned(fromByteOffset: i * size, as: CAudioToolbox.AudioQueueChannelAssignment.self)
        guard let raw = inData.loadUnaligned(fromByteOffset: i * size, as: UnsafeRawPointer?.self) else {
            throw AudioQueueError(.invalidDevice, "channel assignment \(i) has no device identifier (mDeviceUID NULL)")
        }
        let cf = Unmanaged<CFString>.fromOpaque(raw).takeUnretainedValue()
        guard CFGetTypeID(cf) == CFStringGetTypeID() else {
            throw AudioQueueError(.invalidPropertyValue, "channel assignment \(i): mDeviceUID is not a CFString")
        }
        assignments.append(AQEngine.AudioQueueChannelAssignment(deviceUID: CFStrings.string(cf), channelNumber: Int(c.mChannelNumber)))
    }
    try q.common.setChannelAssignments(assignments)
}

/// CurrentDevice's value: a +1 CFString of the device identifier (`AudioQueueGetProperty` only,
/// once the size is known to fit: a size query makes none).
func currentDeviceString(_ q: CQueue) throws(AudioQueueError) -> UnsafeRawPointer {
    let bytes = try q.common.property(UInt32(kAudioQueueProperty_CurrentDevice))
    return UnsafeRawPointer(Unmanaged<CFString>.passRetained(CFStrings.make(String(decoding: bytes, as: UTF8.self))).toOpaque())
}

/// The queue property a converter property ID stands for (issue 23): Apple's queue forwards
/// its converter's properties, and recorders read a recording queue's encoded format and cookie
/// as kAudioConverterCurrentOutputStreamDescription and kAudioConverterCompressionMagicCookie
/// (a playback queue's: …CurrentInputStreamDescription, …DecompressionMagicCookie). Others as given.
func converterAlias(_ q: CQueue, _ id: UInt32) -> UInt32 {
    let recording: Bool
    if case .input = q.kind { recording = true } else { recording = false }
    switch id {
    case UInt32(kAudioConverterCurrentOutputStreamDescription) where recording,
         UInt32(kAudioConverterCurrentInputStreamDescription) where !recording:
        return UInt32(kAudioQueueProperty_StreamDescription)
    case UInt32(kAudioConverterCompressionMagicCookie) where recording,
         UInt32(kAudioConverterDecompressionMagicCookie) where !recording:
        return UInt32(kAudioQueueProperty_MagicCookie)
    default:
        return id
    }
}

/// `AudioQueueGetPropertySize`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueGetPropertySize(_ inAQ: AudioQueueRef?, _ inID: UInt32, _ outDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outDataSize else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        outDataSize.pointee = UInt32(try cProperty(q, converterAlias(q, inID)).count)
    }
}

/// `AudioQueueGetProperty`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueGetProperty(_ inAQ: AudioQueueRef?, _ inID: UInt32, _ outData: UnsafeMutableRawPointer?, _ ioDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outData, let ioDataSize else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        let inID = converterAlias(q, inID)
        let bytes = try cProperty(q, inID)
        var n = bytes.count
        if Int(ioDataSize.pointee) < n {
            // The meters: as many channels as fit; everything else must fit whole.
            let meters = inID == UInt32(kAudioQueueProperty_CurrentLevelMeter) || inID == UInt32(kAudioQueueProperty_CurrentLevelMeterDB)
            guard meters, ioDataSize.pointee >= 8 else {
                throw AudioQueueError(.invalidPropertySize, "the property takes \(n) bytes; \(ioDataSize.pointee) given")
            }
            n = Int(ioDataSize.pointee) / 8 * 8
        }
        if inID == UInt32(kAudioQueueProperty_CurrentDevice) {
            outData.storeBytes(of: try currentDeviceString(q), as: UnsafeRawPointer.self)
        } else if inID == UInt32(kAudioQueueProperty_ChannelAssignments) {
            writeChannelAssignments(q, into: outData)
        } else {
            bytes.withUnsafeBytes { outData.copyMemory(from: $0.baseAddress!, byteCount: n) }
        }
        ioDataSize.pointee = UInt32(n)
    }
}

/// `AudioQueueSetProperty`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueSetProperty(_ inAQ: AudioQueueRef?, _ inID: UInt32, _ inData: UnsafeRawPointer?, _ inDataSize: UInt32) -> OSStatus {
    guard inData != nil || inDataSize == 0 else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        if inID == UInt32(kAudioQueueProperty_ChannelAssignments) {
            return try setChannelAssignments(q, inData, inDataSize)
        }
        if inID == UInt32(kAudioQueueProperty_CurrentDevice) {
            guard inDataSize == UInt32(MemoryLayout<UnsafeRawPointer>.size) else {
                throw AudioQueueError(.invalidPropertySize, "CurrentDevice is a CFStringRef")
            }
            guard let raw = inData!.load(as: UnsafeRawPointer?.self) else {
                throw AudioQueueError(.invalidDevice, "no device identifier")
            }
            let cf = Unmanaged<CFString>.fromOpaque(raw).takeUnretainedValue()
            guard CFGetTypeID(cf) == CFStringGetTypeID() else {
                throw AudioQueueError(.invalidPropertyValue, "CurrentDevice takes a CFStringRef")
            }
            let name = CFStrings.string(cf)
            try q.common.setCurrentDevice(name)
            return
        }
        var bytes = inDataSize == 0 ? [] : Array(UnsafeRawBufferPointer(start: inData, count: Int(inDataSize)))
        if inID == UInt32(kAudioQueueProperty_ChannelLayout) && bytes.count >= 12 {
            // C programs pass sizeof(AudioChannelLayout), which has room for one description
            // even when it has none: the layout is its header and its descriptions.
            let n = Int(inData!.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            if n <= 64 && bytes.count >= 12 + 20 * n { bytes = Array(bytes.prefix(12 + 20 * n)) }
        }
        try q.common.setProperty(inID, bytes)
    }
}

/// `AudioQueueAddPropertyListener`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueAddPropertyListener(_ inAQ: AudioQueueRef?, _ inID: UInt32, _ inProc: AudioQueuePropertyListenerProc?, _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inProc else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        guard let id = AQEngine.AudioQueuePropertyID(rawValue: inID) else {
            throw AudioQueueError(.invalidProperty, "unknown property \(inID)")
        }
        let box = WeakBox()
        box.value = q
        let userBits = UInt(bitPattern: inUserData)  // a pointer is not Sendable; its bits are
        let token: Int
        switch q.kind {
        case .output(let queue):
            token = queue.addPropertyListener(id, outputListener(box, inID, inProc, userBits))
        case .input(let input):
            token = try input.addPropertyListener(id) { _, _ in
                guard let cq = box.value else { return }
                cq.deliver { cq.asCallback { inProc(UnsafeMutableRawPointer(bitPattern: userBits), cq.ref, inID) } }
            }
        }
        q.lock.withLock { q.listeners.append((inID, inProc, inUserData, token)) }
    }
}

/// `AudioQueueRemovePropertyListener`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueRemovePropertyListener(_ inAQ: AudioQueueRef?, _ inID: UInt32, _ inProc: AudioQueuePropertyListenerProc?, _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inProc else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        guard AQEngine.AudioQueuePropertyID(rawValue: inID) != nil else {
            throw AudioQueueError(.invalidProperty, "unknown property \(inID)")
        }
        let token: Int? = q.lock.withLock {
            guard let i = q.listeners.firstIndex(where: {
                $0.id == inID && unsafeBitCast($0.proc, to: UnsafeRawPointer.self) == unsafeBitCast(inProc, to: UnsafeRawPointer.self)
                    && $0.userData == inUserData
            }) else { return nil }
            return q.listeners.remove(at: i).token
        }
        guard let token else { throw AudioQueueError(.invalidParameter, "no such listener") }
        try q.common.removePropertyListener(token)
    }
}

/// A playback queue's engine listener that calls the C listener `proc` (on the queue's
/// callback thread, marked as its callback); also used to add it again on another engine.
func outputListener(
    _ box: WeakBox, _ id: UInt32, _ proc: @escaping AudioQueuePropertyListenerProc, _ userBits: UInt
) -> AQEngine.AudioQueue.PropertyListener {
    { _, _ in
        guard let cq = box.value else { return }
        cq.deliver { cq.asCallback { proc(UnsafeMutableRawPointer(bitPattern: userBits), cq.ref, id) } }
    }
}

// MARK: - Time

/// `AudioQueueCreateTimeline`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueCreateTimeline(_ inAQ: AudioQueueRef?, _ outTimeline: UnsafeMutablePointer<AudioQueueTimelineRef?>?) -> OSStatus {
    guard let outTimeline else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        let t = q.common.createTimeline()
        outTimeline.pointee = OpaquePointer(Unmanaged.passRetained(t).toOpaque())
    }
}

/// `AudioQueueDisposeTimeline`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueDisposeTimeline(_ inAQ: AudioQueueRef?, _ inTimeline: AudioQueueTimelineRef?) -> OSStatus {
    guard let inTimeline else { return paramError }
    return withQueue(inAQ) { _ throws(AudioQueueError) in
        Unmanaged<AudioQueueTimeline>.fromOpaque(UnsafeRawPointer(inTimeline)).release()
    }
}

/// `AudioQueueGetCurrentTime`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueGetCurrentTime(
    _ inAQ: AudioQueueRef?, _ inTimeline: AudioQueueTimelineRef?, _ outTimeStamp: UnsafeMutablePointer<CTimeStamp>?,
    _ outTimelineDiscontinuity: UnsafeMutablePointer<UInt8>?
) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        let timeline = inTimeline.map { Unmanaged<AudioQueueTimeline>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
        let (time, discontinuity) = q.common.currentTime(timeline: timeline)
        outTimeStamp?.pointee = time.c
        outTimelineDiscontinuity?.pointee = discontinuity ? 1 : 0
    }
}

/// `AudioQueueDeviceGetCurrentTime`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueDeviceGetCurrentTime(_ inAQ: AudioQueueRef?, _ outTimeStamp: UnsafeMutablePointer<CTimeStamp>?) -> OSStatus {
    guard let outTimeStamp else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        outTimeStamp.pointee = q.engine.deviceCurrentTime().c
    }
}

/// `AudioQueueDeviceTranslateTime`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueDeviceTranslateTime(_ inAQ: AudioQueueRef?, _ inTime: UnsafePointer<CTimeStamp>?, _ outTime: UnsafeMutablePointer<CTimeStamp>?) -> OSStatus {
    guard let inTime, let outTime else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        outTime.pointee = q.engine.translateTime(STimeStamp(c: inTime.pointee)).c
    }
}

/// `AudioQueueDeviceGetNearestStartTime`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueDeviceGetNearestStartTime(_ inAQ: AudioQueueRef?, _ ioRequestedStartTime: UnsafeMutablePointer<CTimeStamp>?, _ inFlags: UInt32) -> OSStatus {
    guard let ioRequestedStartTime else { return paramError }
    // The reference: no flags are defined; pass 0.
    guard inFlags == 0 else { return paramError }
    return withQueue(inAQ) { q throws(AudioQueueError) in
        let requested = STimeStamp(c: ioRequestedStartTime.pointee)
        let asked: STimeStamp? = requested.flags.isEmpty ? nil : requested
        ioRequestedStartTime.pointee = q.engine.nearestStartTime(asked).c
    }
}

// MARK: - Offline rendering

/// `AudioQueueSetOfflineRenderFormat`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueSetOfflineRenderFormat(_ inAQ: AudioQueueRef?, _ inFormat: UnsafePointer<CFormat>?, _ inLayout: UnsafePointer<CAudioToolbox.AudioChannelLayout>?) -> OSStatus {
    withQueue(inAQ) { q throws(AudioQueueError) in
        try switchOfflineRendering(q, inFormat.map { SFormat(c: $0.pointee) }, layout: inLayout.map { AQTypes.AudioChannelLayout(c: $0) })
    }
}

/// `AudioQueueOfflineRender`, exported to C: its contract is in `AudioToolbox/AudioQueue.h`; threads and blocking in
/// docs/c-api.md (any thread unless said otherwise there).
@c public func AudioQueueOfflineRender(_ inAQ: AudioQueueRef?, _ inTimestamp: UnsafePointer<CTimeStamp>?, _ ioBuffer: AudioQueueBufferRef?, _ inNumberFrames: UInt32) -> OSStatus {
    guard let inTimestamp else { return paramError }
    var delivery: RunLoopDelivery?
    let status = withQueue(inAQ) { q throws(AudioQueueError) in
        q.lock.withLock { q.offlineRenders += 1 }
        defer { q.lock.withLock { q.offlineRenders -= 1 } }
        let b = try engineBuffer(q, ioBuffer)
        // A queue on the calling thread's run loop: the callbacks of each render cycle run
        // between the cycles, as with a queue without a run loop (a refill heard at once).
        let loop = q.runLoop
        try q.queue.offlineRender(
            at: STimeStamp(c: inTimestamp.pointee), into: b, frames: Int(inNumberFrames),
            betweenCycles: loop.map { l in { l.performIfOnLoopThread() } })
        ioBuffer!.pointee.mAudioDataByteSize = UInt32(b.audioDataByteSize)
        delivery = q.runLoop
    }
    // A queue on the calling thread's run loop: the callbacks of the buffers this render finished
    // run now, before the call returns, as with a queue without a run loop (issue 23: Apple's
    // aqrender renders on the thread whose loop it gave the queue and never runs that loop).
    delivery?.performIfOnLoopThread()
    return status
}
