import ArgumentParser

/// `aqsync info FILE`: placeholder until the parser lands (issue 3).
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "info", abstract: "Show what the file-stream parser finds in an audio file.")
    @Argument var file: String
    func run() throws { throw ValidationError("not implemented yet") }
}
