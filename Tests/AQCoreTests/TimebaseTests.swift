import Testing
@testable import AQCore

@Suite struct TimebaseTests {
    /// Sample → host → sample is exact to the frame over a day of frames, at several rates
    /// and rate scalars.
    @Test(arguments: [44100.0, 48000.0, 96000.0, 192000.0])
    func roundTripIsExact(rate: Double) {
        for scalar in [0.999, 1.0, 1.0001] {
            let tb = DeviceTimebase(anchorFrame: 1_234_567, anchorHostTime: 9_000_000_000_000, nominalRate: rate, rateScalar: scalar)
            var f: Int64 = -1_000_000
            while f < Int64(rate * 86_400) {
                let host = tb.hostTime(forSampleTime: Double(f))
                let back = tb.sampleTime(forHostTime: host)
                #expect(Int64(back.rounded()) == f, "frame \(f) came back as \(back)")
                #expect(abs(back - Double(f)) < 0.01)
                f += 7_777_777
            }
        }
    }

    @Test func rateScalarFromCycle() {
        // 256 frames took 5,333,440 ns instead of 5,333,333 ns: slightly slow.
        let c = CycleInfo(frame: 0, frames: 256, hostTimeNs: 1_000_000, nextHostTimeNs: 1_000_000 + 5_333_440)
        let tb = DeviceTimebase(cycle: c, nominalRate: 48000)
        // Apple's mRateScalar: actual host time per frame over nominal, above 1 when slow.
        #expect(abs(tb.rateScalar - 5_333_440 / 5_333_333.33) < 1e-6)
        #expect(tb.rateScalar > 1)
        #expect(abs(tb.framesPerNanosecond - 256 / 5_333_440.0) < 1e-12)
        let none = DeviceTimebase(cycle: CycleInfo(frame: 0, frames: 256, hostTimeNs: 5, nextHostTimeNs: 0), nominalRate: 48000)
        #expect(none.rateScalar == 1)
    }

    @Test func completeFillsTheMissingHalf() throws {
        let tb = DeviceTimebase(anchorFrame: 4800, anchorHostTime: 100_000_000, nominalRate: 48000, rateScalar: 1)
        let fromSample = try #require(tb.complete(AudioTimeStamp(sampleTime: 9600)))
        #expect(fromSample.hostTime == 200_000_000)
        let fromHost = try #require(tb.complete(AudioTimeStamp(hostTime: 150_000_000)))
        #expect(fromHost.sampleTime == 7200)
        #expect(fromHost.flags.contains([.sampleTimeValid, .hostTimeValid, .rateScalarValid]))
        #expect(tb.complete(AudioTimeStamp(flags: [])) == nil)
    }
}
