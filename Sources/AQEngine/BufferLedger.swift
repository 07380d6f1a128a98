/// A queue's account of its buffers: which exist (by token), which the render thread holds, and
/// under which enqueue serial, so that every buffer comes back exactly once: a done event
/// counts only if it matches an enqueue still in flight, and a synchronous stop, reset or
/// dispose takes every one back at once (their done events, still on their way, then match
/// nothing). Converter tails are in flight under tokens with ``tailBit`` set.
///
/// Thread safety: a value guarded by its queue's lock.
struct BufferLedger {
    /// Set in the tokens of converter tails.
    static let tailBit: UInt32 = 0x8000_0000

    private var buffers: [AudioQueueBuffer?] = []
    private var freeTokens: [UInt32] = []
    /// In enqueue order.
    private var inFlight: [(token: UInt32, serial: UInt32)] = []
    private var lastSerial: UInt32 = 0

    /// Enqueues in flight (buffers and tails).
    var count: Int { inFlight.count }

    /// The buffer of `token` (nil for a tail or a freed buffer).
    func buffer(_ token: UInt32) -> AudioQueueBuffer? {
        token & BufferLedger.tailBit == 0 && Int(token) < buffers.count ? buffers[Int(token)] : nil
    }

    /// True when `b` is one of this ledger's buffers.
    func owns(_ b: AudioQueueBuffer) -> Bool { buffer(b.token) === b }

    /// Registers a new buffer made by `make` with the token it is given.
    mutating func add(_ make: (UInt32) -> AudioQueueBuffer) -> AudioQueueBuffer {
        let token: UInt32
        if let t = freeTokens.popLast() {
            token = t
        } else {
            token = UInt32(buffers.count)
            buffers.append(nil)
        }
        let b = make(token)
        buffers[Int(token)] = b
        return b
    }

    /// Forgets a buffer (freed).
    mutating func remove(_ b: AudioQueueBuffer) {
        guard owns(b) else { return }
        buffers[Int(b.token)] = nil
        freeTokens.append(b.token)
    }

    /// The serial the next enqueue is sent with.
    mutating func nextSerial() -> UInt32 {
        lastSerial &+= 1
        return lastSerial
    }

    /// `token` was sent to the render thread with `serial`.
    mutating func sent(_ token: UInt32, serial: UInt32) {
        inFlight.append((token, serial))
    }

    /// The render thread is done with `token`'s enqueue `serial`: true if it was in flight
    /// (false: a stale event, the enqueue was already taken back).
    mutating func done(_ token: UInt32, serial: UInt32) -> Bool {
        guard let k = inFlight.firstIndex(where: { $0.token == token && $0.serial == serial }) else { return false }
        inFlight.remove(at: k)
        return true
    }

    /// Every enqueue in flight is over (the renderer let go of them); their tokens, in enqueue
    /// order.
    mutating func takeBackAll() -> [UInt32] {
        let tokens = inFlight.map(\.token)
        inFlight.removeAll()
        return tokens
    }

    /// Tokens in flight, in enqueue order.
    var tokensInFlight: [UInt32] { inFlight.map(\.token) }

    /// Forgets every buffer (the queue is gone); returns them.
    mutating func removeAll() -> [AudioQueueBuffer] {
        let all = buffers.compactMap { $0 }
        buffers.removeAll()
        freeTokens.removeAll()
        inFlight.removeAll()
        return all
    }
}
