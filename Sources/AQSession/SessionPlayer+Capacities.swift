import AQEngine

extension SessionPlayer {
    /// Queue slots an engine keeps beyond a session's own queues (a metronome, a preview, a
    /// program's own queues beside the player).
    package static let spareQueues = 16

    /// The renderer's capacities for playing `session` with `options`: a queue slot for every
    /// track and every take plus ``spareQueues`` (at least the engine's default 256), commands
    /// for every queue's buffers at once several times over (at least the default 8192), and
    /// `inputChannels` device inputs. Sessions of any size get an engine that fits them, so
    /// none is refused for its number of tracks.
    ///
    /// Thread safety: a pure function; any thread.
    package static func engineCapacities(for session: Session, options: Options = Options(), inputChannels: Int = 8) -> RenderCapacities {
        let defaults = RenderCapacities()
        let queues = max(defaults.queues, session.tracks.count + session.takes.count + spareQueues)
        return RenderCapacities(
            queues: queues,
            buffersPerQueue: max(defaults.buffersPerQueue, options.buffersPerTrack + 1, options.takeOptions.buffers + 1),
            commands: max(defaults.commands, queues * (options.buffersPerTrack + 4) * 2),
            inputChannels: inputChannels)
    }

    /// The renderer's capacities for playing the set list `sessions` live: while one session
    /// plays, the next is prepared (and a skip back makes the previous while the one playing
    /// fades), so the queue slots are those of the three largest sessions together (a slot
    /// given back is free again one render cycle later), plus ``spareQueues``.
    ///
    /// Thread safety: a pure function; any thread.
    package static func engineCapacities(forSetList sessions: [Session], options: Options = Options(), inputChannels: Int = 8) -> RenderCapacities {
        let defaults = RenderCapacities()
        let counts = sessions.map { $0.tracks.count + $0.takes.count }.sorted(by: >)
        let queues = max(defaults.queues, counts.prefix(3).reduce(0, +) + spareQueues)
        return RenderCapacities(
            queues: queues,
            buffersPerQueue: max(defaults.buffersPerQueue, options.buffersPerTrack + 1, options.takeOptions.buffers + 1),
            commands: max(defaults.commands, queues * (options.buffersPerTrack + 4) * 2),
            inputChannels: inputChannels)
    }
}
