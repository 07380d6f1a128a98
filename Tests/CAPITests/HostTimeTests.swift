import Foundation
import Testing

/// Core Audio's host-time functions through C (issue 23): `hosttime.c`, offline.
@Suite struct HostTimeTests {
    @Test func hostTimeIsMonotonicNanoseconds() throws {
        let exe = try CAPI.build("Tests/CAPIPrograms/hosttime.c")
        let r = try CAPI.run(exe, environment: ["AQSYNC_DEVICE": "offline"])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains(" 0 failed"), "\(r.output)")
    }
}
