// libFuzzer target for the AQFileStream push parser. Not a SwiftPM target: built by hand with
// swiftc -sanitize=fuzzer,address (see docs/file-stream.md, "Fuzzing").
//
// Each input is parsed twice: whole, and split into pieces whose sizes come from the input's
// first byte. Both runs must agree (same error, packets, bytes); any crash, hang, sanitizer report
// or disagreement is a finding. Properties, translations and a seek are exercised afterwards.
import AQFileStream
import AQTypes

struct Outcome: Equatable {
    var error: Int32?
    var packets = 0
    var bytes = 0
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var buffered = 0
}

func run(_ input: UnsafeRawBufferPointer, hint: FourCharCode?, pieceSize: Int) -> Outcome {
    var out = Outcome()
    let stream: AudioFileStream
    do {
        stream = try AudioFileStream(
            fileTypeHint: hint,
            propertyListener: { s, property, flags in
                _ = try? s.value(of: property)
                _ = try? s.propertyInfo(property)
                flags.insert(.cacheProperty)
            },
            packets: { data, count, descriptions in
                out.packets += count
                if let descriptions {
                    precondition(descriptions.count == count)
                    for d in descriptions {
                        let start = Int(d.startOffset), end = start + Int(d.dataByteSize)
                        precondition(start >= 0 && end <= data.count, "description outside the buffer")
                        for b in data[start..<end] { out.hash = (out.hash ^ UInt64(b)) &* 0x100_0000_01B3 }
                        out.bytes += Int(d.dataByteSize)
                    }
                } else {
                    for b in data { out.hash = (out.hash ^ UInt64(b)) &* 0x100_0000_01B3 }
                    out.bytes += data.count
                }
            })
    } catch {
        out.error = error.code
        return out
    }
    var i = 0
    while i < input.count {
        let n = min(pieceSize, input.count - i)
        do {
            try stream.parse(UnsafeRawBufferPointer(rebasing: input[i..<i + n]))
        } catch {
            out.error = error.code
            break
        }
        out.buffered = max(out.buffered, stream.bufferedByteCount)
        i += n
    }
    precondition(stream.bufferedByteCount <= AudioFileStream.maximumBufferedBytes)
    for p in AudioFileStreamProperty.allCases { _ = try? stream.value(of: p) }
    for k: Int64 in [0, 1, 7, 1000, -1, Int64.max / 2] {
        _ = try? stream.frame(forPacket: k)
        _ = try? stream.packet(forFrame: k)
        _ = try? stream.byte(forPacket: k)
        _ = try? stream.packet(forByte: k)
    }
    if out.error == nil, let (offset, _) = try? stream.seek(toPacket: 1), offset >= 0, Int(offset) < input.count {
        _ = try? stream.parse(UnsafeRawBufferPointer(rebasing: input[Int(offset)...]), flags: .discontinuity)
    }
    try? stream.close()
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFileStream(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    let hints: [FourCharCode?] = [nil, nil, AudioFileTypeID.mp3, AudioFileTypeID.aacADTS]
    let hint = hints[Int(control & 3)]
    let whole = run(input, hint: hint, pieceSize: Int.max)
    let split = run(input, hint: hint, pieceSize: Int(control >> 2) + 1)
    var a = whole, b = split
    a.buffered = 0
    b.buffered = 0
    precondition(a == b, "whole and split parses disagree: \(whole) vs \(split)")
    return 0
}
