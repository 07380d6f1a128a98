/// A queue's property listeners, as both kinds of queue keep them: each added under a token
/// (counted from 1), removed by it, read by property. The owner guards it with one of its locks.
///
/// Thread safety: a plain value; under the owner's lock.
struct PropertyListeners<Listener> {
    private var table: [(id: AudioQueuePropertyID, token: Int, listener: Listener)] = []
    private var lastToken = 0

    /// Adds `listener` for `id`; returns its token.
    mutating func add(_ id: AudioQueuePropertyID, _ listener: Listener) -> Int {
        lastToken += 1
        table.append((id, lastToken, listener))
        return lastToken
    }

    /// Removes the listener `token` names. Throws `.invalidParameter` when none has it (as
    /// `AudioQueueRemovePropertyListener` answers for a listener that was not added).
    mutating func remove(_ token: Int) throws(AudioQueueError) {
        guard let i = table.firstIndex(where: { $0.token == token }) else {
            throw AudioQueueError(.invalidParameter, "no listener with token \(token)")
        }
        table.remove(at: i)
    }

    /// The listeners of `id`, in the order they were added.
    func listeners(for id: AudioQueuePropertyID) -> [Listener] {
        table.filter { $0.id == id }.map(\.listener)
    }

    /// Forgets every listener (a disposal).
    mutating func removeAll() { table.removeAll() }
}
