import AQFileStream
import AQTypes
import Foundation
import Testing

@Suite struct APITests {
    @Test func propertyCodesAreTheReferenceFourCharCodes() {
        let expected: [(AudioFileStreamProperty, String)] = [
            (.readyToProducePackets, "redy"), (.fileFormat, "ffmt"), (.dataFormat, "dfmt"), (.formatList, "flst"),
            (.magicCookieData, "mgic"), (.audioDataByteCount, "bcnt"), (.audioDataPacketCount, "pcnt"),
            (.maximumPacketSize, "psze"), (.dataOffset, "doff"), (.channelLayout, "cmap"), (.packetToFrame, "pkfr"),
            (.frameToPacket, "frpk"), (.packetToByte, "pkby"), (.byteToPacket, "bypk"), (.packetTableInfo, "pnfo"),
            (.packetSizeUpperBound, "pkub"), (.averageBytesPerPacket, "abpp"), (.bitRate, "brat"),
        ]
        #expect(expected.count == AudioFileStreamProperty.allCases.count)
        for (p, code) in expected { #expect(p.rawValue == FourCharCode(code).rawValue, "\(code)") }
    }

    @Test func errorCodesAreTheReferenceValues() {
        let expected: [(AudioFileStreamError, String)] = [
            (.unsupportedFileType, "typ?"), (.unsupportedDataFormat, "fmt?"), (.unsupportedProperty, "pty?"),
            (.badPropertySize, "!siz"), (.notOptimized, "optm"), (.invalidPacketOffset, "pck?"), (.invalidFile, "dta?"),
            (.valueUnknown, "unk?"), (.dataUnavailable, "more"), (.illegalOperation, "nope"),
            (.unspecifiedError, "wht?"), (.discontinuityCantRecover, "dsc!"),
        ]
        for (e, code) in expected {
            #expect(UInt32(bitPattern: e.code) == FourCharCode(code).rawValue)
            #expect(e.description.contains(code))
        }
        #expect(AudioFileStreamError.invalidFile.code == 0x6474_613F)
        #expect(AudioFileStreamError.dataUnavailable.code == 0x6D6F_7265)
    }

    static func wave(_ samples: [UInt8]) -> [UInt8] {
        riff(waveFmt() + ascii("data") + le(UInt64(samples.count), 4) + samples)
    }

    /// What `AudioFileStreamSeek` answers in C (issue 22): the seek's file offset minus
    /// `dataOffset`, Apple's convention (offsets from the start of the audio data, which players
    /// such as AudioStreamer add the data offset to). It equals `byte(forPacket:)`, and adding
    /// the data offset back lands exactly on the packet: parsing from there delivers it first.
    @Test func seekOffsetFromTheAudioDataLandsOnThePacket() throws {
        var samples: [UInt8] = []
        for k in 0..<1000 { samples += le(UInt64(k), 2) + le(UInt64(k), 2) }
        // A LIST chunk before the data: the data offset is not the plain 44.
        let file = riff(waveFmt() + ascii("LIST") + le(10, 4) + [UInt8](repeating: 7, count: 10) + ascii("data")
            + le(UInt64(samples.count), 4) + samples)
        var first: [UInt8]?
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, _ in if first == nil { first = Array(d.prefix(4)) } })
        try s.parse(Array(file.prefix(80)))
        guard case .int64(let dataOffset) = try s.value(of: .dataOffset) else { Issue.record("no data offset"); return }
        #expect(dataOffset == 44 + 18)
        let (absolute, flags) = try s.seek(toPacket: 777)
        let relative = absolute - dataOffset
        #expect(relative == 777 * 4)
        #expect(flags.isEmpty)
        #expect(try s.byte(forPacket: 777).byte == relative)
        first = nil
        try s.parse(Array(file[Int(relative + dataOffset)...]), flags: .discontinuity)
        #expect(first == le(777, 2) + le(777, 2))
    }

    @Test func propertiesTranslationsAndSeek() throws {
        let samples = randomBytes(4000, seed: 2)
        let file = Self.wave(samples)
        var got: [UInt8] = []
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, _ in got += d })
        #expect(throws: AudioFileStreamError.valueUnknown) { try s.value(of: .dataFormat) }
        #expect(throws: AudioFileStreamError.dataUnavailable) { try s.seek(toPacket: 0) }
        try s.parse(Array(file.prefix(50)))
        #expect(s.isReadyToProducePackets)
        #expect(try s.propertyInfo(.dataFormat).size == 40)
        #expect(try s.propertyInfo(.dataFormat).isWritable == false)
        #expect(try s.propertyInfo(.packetToByte).size == 24)
        #expect(throws: AudioFileStreamError.badPropertySize) { try s.value(of: .packetToFrame) }
        #expect(throws: AudioFileStreamError.valueUnknown) { try s.value(of: .packetTableInfo) }
        #expect(throws: AudioFileStreamError.unsupportedProperty) { try s.setValue(.uint32(1), of: .bitRate) }
        #expect(try s.frame(forPacket: 10) == 10)
        #expect(try s.packet(forFrame: 7) == AudioFramePacketTranslation(frame: 7, packet: 7, frameOffsetInPacket: 0))
        #expect(try s.byte(forPacket: 10) == AudioBytePacketTranslation(byte: 40, packet: 10, byteOffsetInPacket: 0, isEstimate: false))
        #expect(try s.packet(forByte: 41) == AudioBytePacketTranslation(byte: 41, packet: 10, byteOffsetInPacket: 1, isEstimate: false))
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try s.seek(toPacket: 1000) }
        #expect(throws: AudioFileStreamError.invalidPacketOffset) { try s.seek(toPacket: -1) }
        let (offset, flags) = try s.seek(toPacket: 900)
        #expect(offset == 44 + 3600)
        #expect(flags.isEmpty)
        got = []
        try s.parse(Array(file[Int(offset)...]), flags: .discontinuity)
        #expect(same(got, samples.suffix(400)))
        try s.close()
        #expect(throws: AudioFileStreamError.illegalOperation) { try s.parse([1]) }
        #expect(throws: AudioFileStreamError.illegalOperation) { try s.value(of: .dataFormat) }
    }

    /// Every property, the magic cookie too, stays readable after its notification, whether
    /// or not the listener sets CacheProperty (Apple's parser behaves so; Apple's
    /// AudioFileStreamExample reads the cookie when ReadyToProducePackets arrives). Every
    /// notification says PropertyIsCached.
    @Test func cookieStaysReadableAfterItsNotification() throws {
        let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x40, 0x01, 0x7F, 0xFC] + [UInt8](repeating: 0x21, count: 4)
        let stream = Array(repeating: adts, count: 4).flatMap { $0 }
        for cache in [false, true] {
            var inside: [UInt8]?
            var atReady: [UInt8]?
            var allCached = true
            let s = try AudioFileStream(
                fileTypeHint: AudioFileTypeID.aacADTS,
                propertyListener: { s, p, flags in
                    allCached = allCached && flags.contains(.propertyIsCached)
                    if p == .magicCookieData {
                        inside = s.magicCookie
                        if cache { flags.insert(.cacheProperty) }
                    }
                    if p == .readyToProducePackets, case .bytes(let b)? = try? s.value(of: .magicCookieData) { atReady = b }
                },
                packets: { _, _, _ in })
            try s.parse(stream)
            #expect(allCached)
            #expect(inside == [0x12, 0x08])
            #expect(atReady == [0x12, 0x08])
            #expect(s.magicCookie == [0x12, 0x08])
            #expect(try s.propertyInfo(.magicCookieData).size == 2)
        }
    }

    /// Callbacks can't re-enter the parser; discontinuities before the data can't be recovered.
    @Test func illegalReentryAndDiscontinuity() throws {
        var reentry: AudioFileStreamError?
        var holder: AudioFileStream?
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in
            do throws(AudioFileStreamError) { try holder?.parse([0]) } catch { reentry = error }
        })
        holder = s
        try s.parse(Self.wave(randomBytes(40, seed: 1)))
        #expect(reentry == .illegalOperation)
        holder = nil

        let t = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        try t.parse(Array(Self.wave([]).prefix(10)))
        #expect(throws: AudioFileStreamError.discontinuityCantRecover) { try t.parse([1, 2], flags: .discontinuity) }
        // The parser stays failed.
        #expect(throws: AudioFileStreamError.discontinuityCantRecover) { try t.parse([1, 2]) }
        #expect(throws: AudioFileStreamError.unsupportedFileType) {
            try AudioFileStream(fileTypeHint: "xyz!", propertyListener: { _, _, _ in }, packets: { _, _, _ in })
        }
    }

    /// A discontinuity in PCM data drops the partial packet.
    @Test func discontinuityDropsPartialPacket() throws {
        var got: [UInt8] = []
        let s = try AudioFileStream(propertyListener: { _, _, _ in }, packets: { d, _, _ in got += d })
        try s.parse(Array(Self.wave(randomBytes(8, seed: 1)).prefix(44 + 6)))
        #expect(got.count == 4)
        try s.parse([1, 2, 3, 4], flags: .discontinuity)
        #expect(got.suffix(4) == [1, 2, 3, 4])
    }
}
