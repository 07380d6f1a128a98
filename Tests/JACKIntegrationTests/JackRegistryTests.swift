import AQJackServer
import Foundation
import Testing

/// JACK's server registry read as jack2 lays it out: entries in use with their names, the
/// `jack-UID:` prefix and trailing colon taken off; anything else read as no entries.
@Suite struct JackRegistryTests {
    /// A registry with `entries` (slot, pid, JACK's registered name).
    static func registry(_ entries: [(Int, Int32, String)]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: JackRegistry.headerBytes + 8 * JackRegistry.entryBytes)
        bytes.replaceSubrange(0..<4, with: Array("KCAJ".utf8))
        for (slot, pid, name) in entries {
            let at = JackRegistry.headerBytes + slot * JackRegistry.entryBytes
            withUnsafeBytes(of: pid.littleEndian) { bytes.replaceSubrange(at..<(at + 4), with: $0) }
            bytes.replaceSubrange((at + 4)..<(at + 4 + name.utf8.count), with: Array(name.utf8))
        }
        return bytes
    }

    @Test func entriesInUseWithTheirServerNames() {
        let bytes = Self.registry([(0, 29846, "jack-0:aqcap-29842-256:"), (1, 0, "jack-0:released:"), (7, 31497, "jack-1000:default:")])
        #expect(JackRegistry.parse(bytes) == [.init(pid: 29846, name: "aqcap-29842-256"), .init(pid: 31497, name: "default")])
    }

    @Test func notARegistryHasNoEntries() {
        #expect(JackRegistry.parse([]).isEmpty)
        var bytes = Self.registry([(0, 5, "jack-0:x:")])
        bytes[0] = 0
        #expect(JackRegistry.parse(bytes).isEmpty)
        #expect(JackRegistry.parse(Array(Self.registry([(0, 5, "jack-0:x:")]).prefix(100))).isEmpty)
    }
}
