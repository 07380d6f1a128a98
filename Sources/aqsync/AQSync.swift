import ArgumentParser

/// The `aqsync` command: sample-accurate multi-track playback, file inspection, benchmarks.
@main
struct AQSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aqsync",
        abstract: "Sample-accurate audio scheduling on JACK.",
        subcommands: [InfoCommand.self, BenchCommand.self])
}
