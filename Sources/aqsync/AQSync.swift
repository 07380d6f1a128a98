import ArgumentParser

/// The `aqsync` command: sample-accurate multi-track playback, file inspection, benchmarks.
/// `aqsync SESSION` is `aqsync play SESSION`.
@main
struct AQSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aqsync",
        abstract: "Sample-accurate audio scheduling on JACK.",
        subcommands: [PlayCommand.self, RenderCommand.self, InfoCommand.self, BenchCommand.self, MakeDemoCommand.self],
        defaultSubcommand: PlayCommand.self)
}
