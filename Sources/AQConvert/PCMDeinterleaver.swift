import AQTypes

/// How one sample of one channel is stored in a supported interleaved format.
///
/// Thread safety: a plain value; use from any thread.
public enum PCMSampleEncoding: Hashable, Sendable, BitwiseCopyable, CaseIterable {
    /// Unsigned 8-bit integer, 128 is silence (WAVE).
    case uint8
    /// Signed 16-bit integer, little-endian.
    case int16LE
    /// Signed 16-bit integer, big-endian.
    case int16BE
    /// Signed 24-bit integer packed in 3 bytes, little-endian.
    case int24LE
    /// Signed 24-bit integer packed in 3 bytes, big-endian.
    case int24BE
    /// Signed 32-bit integer, little-endian.
    case int32LE
    /// Signed 32-bit integer, big-endian.
    case int32BE
    /// IEEE 754 binary32, little-endian.
    case float32LE
    /// IEEE 754 binary32, big-endian.
    case float32BE
    /// IEEE 754 binary64, little-endian.
    case float64LE
    /// IEEE 754 binary64, big-endian.
    case float64BE
    /// ITU G.711 µ-law, 8 bits.
    case uLaw
    /// ITU G.711 A-law, 8 bits.
    case aLaw

    /// Bytes one sample of one channel occupies.
    public var bytesPerSample: Int {
        switch self {
        case .uint8, .uLaw, .aLaw: return 1
        case .int16LE, .int16BE: return 2
        case .int24LE, .int24BE: return 3
        case .int32LE, .int32BE, .float32LE, .float32BE: return 4
        case .float64LE, .float64BE: return 8
        }
    }
}

/// Converts interleaved PCM (any ``PCMSampleEncoding``) to planar Float32.
///
/// Made from a format that ``validate(_:)`` accepts. Samples are scaled to [−1, 1):
/// int16 / 32768, int24 / 8388608, int32 / 2147483648 (clamped below 1 where Float32 rounding
/// would reach it), unsigned 8-bit (x − 128) / 128, µ-law and A-law through G.711 expansion to
/// 16-bit linear, then / 32768; float32 is copied and float64 narrowed (neither is clamped).
///
/// This is control-side work (done when a buffer is enqueued or a file is decoded), never on
/// the render thread. The value itself holds no references and ``convert(_:frames:into:offset:)``
/// neither allocates nor locks (except that the first µ-law/A-law conversion in the process
/// builds its 256-entry table).
///
/// Thread safety: an immutable value; any thread may call it, from several threads at once.
public struct PCMDeinterleaver: Hashable, Sendable {
    /// The validated source format.
    public let format: AudioStreamBasicDescription
    /// How each sample is stored.
    public let encoding: PCMSampleEncoding
    /// Channels per frame (1…8): the number of destination planes ``convert(_:frames:into:offset:)`` writes.
    public let channelCount: Int
    /// Bytes of one interleaved source frame.
    public let bytesPerFrame: Int

    /// Checks that `format` is one this module converts and says how its samples are stored.
    ///
    /// Supported: interleaved, one frame per packet, packed samples, 1…8 channels,
    /// 8000…192000 Hz; `lpcm` signed integer 16, 24 (3 bytes), 32 bit or float 32, 64 bit, either
    /// endianness, or unsigned 8 bit; `ulaw` and `alaw` with 8 bits per channel.
    /// Thread safety: pure function; any thread.
    /// - Throws: ``PCMFormatError`` naming the first problem found; its `resultCode` is `'fmt?'`.
    public static func validate(_ format: AudioStreamBasicDescription) throws(PCMFormatError) -> PCMSampleEncoding {
        let id = format.formatID
        let flags = format.formatFlags
        let bits = format.bitsPerChannel
        guard id == AudioFormatID.linearPCM || id == AudioFormatID.uLaw || id == AudioFormatID.aLaw else {
            throw .unsupportedFormatID(id)
        }
        guard !flags.contains(.isNonInterleaved) else { throw .nonInterleaved }
        guard format.sampleRate.isFinite, format.sampleRate >= 8000, format.sampleRate <= 192_000 else {
            throw .sampleRateOutOfRange(format.sampleRate)
        }
        guard format.channelsPerFrame >= 1, format.channelsPerFrame <= 8 else {
            throw .channelCountOutOfRange(format.channelsPerFrame)
        }
        let encoding: PCMSampleEncoding
        if id != AudioFormatID.linearPCM {
            guard bits == 8 else { throw .companded(formatID: id, bits: bits) }
            encoding = id == AudioFormatID.uLaw ? .uLaw : .aLaw
        } else {
            let big = flags.contains(.isBigEndian)
            if flags.contains(.isFloat) {
                guard !flags.contains(.isSignedInteger) else { throw .conflictingFloatAndIntegerFlags }
                switch bits {
                case 32: encoding = big ? .float32BE : .float32LE
                case 64: encoding = big ? .float64BE : .float64LE
                default: throw .unsupportedFloatBitDepth(bits)
                }
            } else {
                let signed = flags.contains(.isSignedInteger)
                switch bits {
                case 8:
                    guard !signed else { throw .signedEightBit }
                    encoding = .uint8
                case 16, 24, 32:
                    guard signed else { throw .unsignedWideInteger(bits: bits) }
                    encoding =
                        bits == 16 ? (big ? .int16BE : .int16LE)
                        : bits == 24 ? (big ? .int24BE : .int24LE) : (big ? .int32BE : .int32LE)
                default: throw .unsupportedIntegerBitDepth(bits)
                }
            }
        }
        guard format.framesPerPacket == 1 else { throw .framesPerPacket(format.framesPerPacket) }
        let expected = UInt32(encoding.bytesPerSample) * format.channelsPerFrame
        guard format.bytesPerFrame == expected else {
            throw .bytesPerFrame(expected: expected, actual: format.bytesPerFrame)
        }
        guard format.bytesPerPacket == format.bytesPerFrame else {
            throw .bytesPerPacket(expected: format.bytesPerFrame, actual: format.bytesPerPacket)
        }
        return encoding
    }

    /// Makes a deinterleaver for `format`.
    ///
    /// Thread safety: any thread.
    /// - Throws: ``PCMFormatError`` when ``validate(_:)`` refuses the format.
    public init(format: AudioStreamBasicDescription) throws(PCMFormatError) {
        encoding = try Self.validate(format)
        self.format = format
        channelCount = Int(format.channelsPerFrame)
        bytesPerFrame = Int(format.bytesPerFrame)
    }

    /// Converts `frames` interleaved frames at `source` into planar floats: channel `c` of
    /// frame `i` goes to `destination[c][offset + i]`.
    ///
    /// `source` may have any alignment. `destination` must hold ``channelCount`` pointers, each
    /// to at least `offset + frames` writable floats. The format is switched on once per call;
    /// the inner loops are specialised per encoding, with no per-sample format branches.
    /// Thread safety: any thread (control or worker side by design); no allocation, no locks.
    public func convert(
        _ source: UnsafeRawPointer, frames: Int,
        into destination: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int
    ) {
        precondition(frames >= 0 && offset >= 0, "frames and offset must not be negative")
        guard frames > 0 else { return }
        switch encoding {
        case .int16LE: run(Int16LE.self, source, frames, destination, offset)
        case .float32LE: run(Float32LE.self, source, frames, destination, offset)
        case .int16BE: run(Int16BE.self, source, frames, destination, offset)
        case .int24LE: run(Int24LE.self, source, frames, destination, offset)
        case .int24BE: run(Int24BE.self, source, frames, destination, offset)
        case .int32LE: run(Int32LE.self, source, frames, destination, offset)
        case .int32BE: run(Int32BE.self, source, frames, destination, offset)
        case .float32BE: run(Float32BE.self, source, frames, destination, offset)
        case .float64LE: run(Float64LE.self, source, frames, destination, offset)
        case .float64BE: run(Float64BE.self, source, frames, destination, offset)
        case .uint8: run(UInt8Offset.self, source, frames, destination, offset)
        case .uLaw:
            G711.uLawTable.withUnsafeBufferPointer {
                runTable($0.baseAddress!, source, frames, destination, offset)
            }
        case .aLaw:
            G711.aLawTable.withUnsafeBufferPointer {
                runTable($0.baseAddress!, source, frames, destination, offset)
            }
        }
    }

    @inline(__always)
    private func run<D: SampleDecoder>(
        _: D.Type, _ source: UnsafeRawPointer, _ frames: Int,
        _ destination: UnsafePointer<UnsafeMutablePointer<Float>>, _ offset: Int
    ) {
        let stride = bytesPerFrame
        for c in 0..<channelCount {
            let out = destination[c] + offset
            var p = source + c * D.bytes
            for i in 0..<frames {
                out[i] = D.decode(p)
                p += stride
            }
        }
    }

    private func runTable(
        _ table: UnsafePointer<Float>, _ source: UnsafeRawPointer, _ frames: Int,
        _ destination: UnsafePointer<UnsafeMutablePointer<Float>>, _ offset: Int
    ) {
        let stride = bytesPerFrame
        for c in 0..<channelCount {
            let out = destination[c] + offset
            var p = c
            for i in 0..<frames {
                out[i] = table[Int(source.load(fromByteOffset: p, as: UInt8.self))]
                p += stride
            }
        }
    }
}

// MARK: - Per-encoding decoders (each a static, branch-free sample read)

/// Reads one sample at an arbitrary (possibly unaligned) address and scales it to Float.
private protocol SampleDecoder {
    static var bytes: Int { get }
    static func decode(_ p: UnsafeRawPointer) -> Float
}

/// 1 / 2^15, 1 / 2^23, 1 / 2^31: exact powers of two, so the scaling adds no rounding.
private let scale16: Float = 1.0 / 32768
private let scale24: Float = 1.0 / 8_388_608
private let scale32: Float = 1.0 / 2_147_483_648
/// The largest Float below 1: int32 values within 64 of full scale round up to 1.0 in Float32.
private let belowOne: Float = Float(1).nextDown

private enum UInt8Offset: SampleDecoder {
    static var bytes: Int { 1 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        (Float(p.load(as: UInt8.self)) - 128) * (1.0 / 128)
    }
}

private enum Int16LE: SampleDecoder {
    static var bytes: Int { 2 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(Int16(littleEndian: p.loadUnaligned(as: Int16.self))) * scale16
    }
}

private enum Int16BE: SampleDecoder {
    static var bytes: Int { 2 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(Int16(bigEndian: p.loadUnaligned(as: Int16.self))) * scale16
    }
}

private enum Int24LE: SampleDecoder {
    static var bytes: Int { 3 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        let u = UInt32(p.load(fromByteOffset: 0, as: UInt8.self)) << 8
            | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 16
            | UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 24
        return Float(Int32(bitPattern: u) >> 8) * scale24  // arithmetic shift sign-extends
    }
}

private enum Int24BE: SampleDecoder {
    static var bytes: Int { 3 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        let u = UInt32(p.load(fromByteOffset: 2, as: UInt8.self)) << 8
            | UInt32(p.load(fromByteOffset: 1, as: UInt8.self)) << 16
            | UInt32(p.load(fromByteOffset: 0, as: UInt8.self)) << 24
        return Float(Int32(bitPattern: u) >> 8) * scale24
    }
}

private enum Int32LE: SampleDecoder {
    static var bytes: Int { 4 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        min(Float(Int32(littleEndian: p.loadUnaligned(as: Int32.self))) * scale32, belowOne)
    }
}

private enum Int32BE: SampleDecoder {
    static var bytes: Int { 4 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        min(Float(Int32(bigEndian: p.loadUnaligned(as: Int32.self))) * scale32, belowOne)
    }
}

private enum Float32LE: SampleDecoder {
    static var bytes: Int { 4 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
    }
}

private enum Float32BE: SampleDecoder {
    static var bytes: Int { 4 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(bitPattern: UInt32(bigEndian: p.loadUnaligned(as: UInt32.self)))
    }
}

private enum Float64LE: SampleDecoder {
    static var bytes: Int { 8 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))))
    }
}

private enum Float64BE: SampleDecoder {
    static var bytes: Int { 8 }
    @inline(__always) static func decode(_ p: UnsafeRawPointer) -> Float {
        Float(Double(bitPattern: UInt64(bigEndian: p.loadUnaligned(as: UInt64.self))))
    }
}
