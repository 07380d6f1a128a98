import Foundation
import Testing

/// The README's and docs/embedding.md's example program is the file the package builds
/// (`Sources/aqengine-example/main.swift`; `EmbeddingExampleOnJACKTests` runs it).
@Suite struct EmbeddingExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func text(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The ```swift blocks of a Markdown text.
    func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" { current = [] }
            else if current != nil, line == "```" { blocks.append(current!.joined(separator: "\n")); current = nil }
            else if current != nil { current!.append(line) }
        }
        return blocks
    }

    @Test(arguments: ["README.md", "docs/embedding.md"])
    func documentShowsTheBuiltProgram(document: String) throws {
        let program = try text("Sources/aqengine-example/main.swift").trimmingCharacters(in: .newlines)
        let blocks = swiftBlocks(try text(document))
        #expect(blocks.contains(program), "\(document) has no ```swift block equal to Sources/aqengine-example/main.swift")
        // The dependency: by the checkout's identity, without the command line's packages.
        #expect(blocks.contains { $0.contains(".package(path: \"../aqsync\", traits: [])") && $0.contains(".product(name: \"AQEngine\", package: \"aqsync\")") },
                "\(document) shows no dependency with traits: []")
    }

    /// The products an embedder uses never need the command line's packages: their only
    /// dependencies on them are conditioned on the "Tools" trait.
    @Test func commandLinePackagesOnlyWithTheToolsTrait() throws {
        let manifest = try text("Package.swift")
        for product in ["\"TOMLKit\", package: \"TOMLKit\"", "\"ArgumentParser\", package: \"swift-argument-parser\""] {
            let uses = manifest.components(separatedBy: ".product(name: " + product).dropFirst()
            #expect(!uses.isEmpty, "\(product) is not used any more: update this test")
            #expect(uses.allSatisfy { $0.hasPrefix(", condition: .when(traits: [\"Tools\"]))") }, "\(product) is used without the Tools trait")
        }
    }
}
