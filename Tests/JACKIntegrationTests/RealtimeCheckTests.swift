import Foundation
import Testing

/// The compiler's `@_noLocks` checker only guards what carries the annotation: every JACK
/// callback must keep it (removing it would silently allow allocation and locks).
@Suite("JACK callbacks are checked for realtime safety")
struct RealtimeCheckTests {
    @Test func everyCallbackIsNoLocks() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: root.appendingPathComponent("Sources/AQJack/JackCallbacks.swift"), encoding: .utf8)
        for name in ["jackProcess", "jackXrun", "jackSampleRate", "jackBufferSize", "jackFreewheel", "jackShutdown"] {
            #expect(source.contains("@_noLocks\nfunc \(name)("), "\(name) lost its @_noLocks")
        }
        let events = try String(contentsOf: root.appendingPathComponent("Sources/AQJack/JackEventThread.swift"), encoding: .utf8)
        #expect(events.contains("@_noLocks\nfunc signalShutdown("))
    }
}
