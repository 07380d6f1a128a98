import ArgumentParser

/// The `aqsync` command: sample-accurate multi-track playback, file inspection, benchmarks.
/// `aqsync SESSION` is `aqsync play SESSION`.
@main
struct AQSync: AsyncParsableCommand {
    /// What `aqsync --version` prints.
    static let version = "aqsync 0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "aqsync",
        abstract: "Sample-accurate audio scheduling on JACK.",
        // make-demo hides itself from the subcommand list (its configuration says so); the
        // help names it here so that it can be found.
        discussion: "aqsync make-demo DIR writes the demo session's synthesized audio into DIR (then: aqsync play DIR/session.toml).",
        version: version,
        subcommands: [PlayCommand.self, RenderCommand.self, InfoCommand.self, BenchCommand.self, MakeDemoCommand.self],
        defaultSubcommand: PlayCommand.self)
}
