// Planar floats written into a client's linear PCM buffers (issue 23): what ExtAudioFileRead and
// AudioConverterFillComplexBuffer give. Integers by PCMInterleaver's rule, floats as they are.
import AQConvert
import CAudioToolbox

enum PlanarPCM {
    /// Writes `count` frames of `planes` from frame `from` into `buffers` at frame `at`, in
    /// `format` (linear PCM: 16/24/32-bit signed integers or 32-bit floats, either byte order,
    /// interleaved in one buffer or one buffer a channel). Any thread; no allocation.
    static func store(_ planes: [UnsafeMutablePointer<Float>], from: Int, count: Int, at: Int, format: CFormat, channels: Int,
                      buffers: UnsafeMutablePointer<CAudioToolbox.AudioBuffer>) {
        let isFloat = format.mFormatFlags & UInt32(kAudioFormatFlagIsFloat) != 0
        let big = format.mFormatFlags & UInt32(kAudioFormatFlagIsBigEndian) != 0
        let nonInterleaved = format.mFormatFlags & UInt32(kAudioFormatFlagIsNonInterleaved) != 0
        let frameBytes = Int(format.mBytesPerFrame)
        let lanes = nonInterleaved ? 1 : channels
        for b in 0..<(nonInterleaved ? channels : 1) {
            let dst = buffers[b].mData! + at * frameBytes
            func sample(_ c: Int, _ i: Int) -> Float { planes[nonInterleaved ? b : c][from + i] }
            if isFloat {
                var p = dst
                for i in 0..<count {
                    for c in 0..<lanes {
                        let v = sample(c, i).bitPattern
                        p.storeBytes(of: big ? v.bigEndian : v.littleEndian, as: UInt32.self)
                        p += 4
                    }
                }
            } else {
                PCMInterleaver(bits: Int(format.mBitsPerChannel), bigEndian: big).interleave(frames: count, channels: lanes, into: dst) { c, i in sample(c, i) }
            }
        }
    }
}
