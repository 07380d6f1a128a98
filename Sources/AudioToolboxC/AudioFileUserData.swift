// Audio File Services' user data (AudioToolbox/AudioFile.h: AudioFileCountUserData, …GetUserDataSize,
// …GetUserDataSize64, …GetUserData, …GetUserDataAtOffset, …SetUserData, …RemoveUserData),
// issue 23. User data are the file's top-level chunks of a given four-char type, numbered in
// file order: CAF chunks, WAVE/RF64 chunks after `RIFF`/`RF64` … `WAVE`, AIFF/AIFC chunks after
// `FORM` … `AIFF`/`AIFC`. Read from a file opened for reading; a file being created (CAF, WAVE,
// AIFF, AIFC) takes chunks that are written after its audio data when it is optimized or
// closed, and its header's sizes count them. An AudioFileID is used from one thread at a time;
// every call blocks on the file system. docs/c-api.md.
import AQTypes
import CAudioToolbox
import Foundation

/// One top-level chunk: its type, where its bytes start in the file, and their count.
struct FileChunk: Equatable {
    var type: UInt32
    var offset: Int64
    var size: Int64
}

enum FileChunks {
    /// The top-level chunks of a CAF, WAVE/RF64 or AIFF/AIFC file in `storage` (`fileSize`
    /// bytes), in file order; nil for another container (MPEG, ADTS, MP4, Ogg, FLAC…). A chunk
    /// that runs past the end stops the walk (the chunks before it are kept). Blocks on the
    /// storage.
    static func walk(_ storage: any AudioFileStorage, fileSize: Int64) -> [FileChunk]? {
        var head = [UInt8](repeating: 0, count: 12)
        guard storage.readFully(&head, 12, at: 0) == 12 else { return nil }
        let tag = String(decoding: head[0..<4], as: UTF8.self)
        let form = String(decoding: head[8..<12], as: UTF8.self)
        func be32(_ b: [UInt8], _ i: Int) -> UInt32 { b[i..<i + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        func le32(_ b: [UInt8], _ i: Int) -> UInt32 { b[i..<i + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        var chunks: [FileChunk] = []
        var at: Int64
        var header = [UInt8](repeating: 0, count: 12)
        switch tag {
        case "caff":
            at = 8
            while at + 12 <= fileSize, storage.readFully(&header, 12, at: at) == 12 {
                let size = Int64(bitPattern: UInt64(be32(header, 4)) << 32 | UInt64(be32(header, 8)))
                let body = size == -1 ? fileSize - (at + 12) : size
                guard body >= 0, at + 12 + body <= fileSize else { break }
                chunks.append(FileChunk(type: be32(header, 0), offset: at + 12, size: body))
                at += 12 + body
            }
        case "RIFF", "RF64", "BW64", "FORM":
            let big = tag == "FORM"
            guard big ? (form == "AIFF" || form == "AIFC") : form == "WAVE" else { return nil }
            var ds64Data: Int64?
            at = 12
            while at + 8 <= fileSize, storage.readFully(&header, 8, at: at) == 8 {
                var size = Int64(big ? be32(header, 4) : le32(header, 4))
                let type = be32(header, 0)
                // RF64: the data chunk's 32-bit size is -1, its size in the ds64 chunk.
                if type == 0x6461_7461, size == 0xFFFF_FFFF, let d = ds64Data { size = d }
                guard at + 8 + size <= fileSize else { break }
                if type == 0x6473_3634, size >= 24 {  // 'ds64': RIFF size, data size, frames
                    var d = [UInt8](repeating: 0, count: 16)
                    if storage.readFully(&d, 16, at: at + 8) == 16 {
                        ds64Data = Int64(bitPattern: UInt64(le32(d, 12)) << 32 | UInt64(le32(d, 8)))
                    }
                }
                chunks.append(FileChunk(type: type, offset: at + 8, size: size))
                at += 8 + size + size % 2
            }
        default:
            return nil
        }
        return chunks
    }
}

/// User data of a file being created: chunks to write after the audio data.
struct PendingUserData {
    var chunks: [(type: UInt32, bytes: [UInt8])] = []

    func indices(of type: UInt32) -> [Int] { chunks.indices.filter { chunks[$0].type == type } }

    /// Sets item `index` of `type` (an index one past the last adds one).
    mutating func set(_ type: UInt32, index: Int, _ bytes: [UInt8]) throws(AudioFileFailure) {
        let found = indices(of: type)
        if index < found.count {
            chunks[found[index]].bytes = bytes
        } else if index == found.count {
            chunks.append((type, bytes))
        } else {
            throw AudioFileFailure(status: kAudioFileInvalidChunkError, "user data '\(FourCharCode(rawValue: type))' has \(found.count) item(s); index \(index) would leave a hole")
        }
    }

    mutating func remove(_ type: UInt32, index: Int) throws(AudioFileFailure) {
        let found = indices(of: type)
        guard index < found.count else {
            throw AudioFileFailure(status: kAudioFileInvalidChunkError, "no user data '\(FourCharCode(rawValue: type))' at index \(index)")
        }
        chunks.remove(at: found[index])
    }

    /// The chunks as the container writes them (WAVE: little-endian 32-bit sizes; AIFF:
    /// big-endian; both padded to an even size; CAF: 64-bit big-endian sizes).
    func bytes(caf: Bool, littleEndian: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for c in chunks {
            out += withUnsafeBytes(of: c.type.bigEndian) { Array($0) }
            if caf {
                out += withUnsafeBytes(of: UInt64(c.bytes.count).bigEndian) { Array($0) }
            } else {
                let n = UInt32(c.bytes.count)
                out += withUnsafeBytes(of: littleEndian ? n.littleEndian : n.bigEndian) { Array($0) }
            }
            out += c.bytes
            if !caf && c.bytes.count % 2 == 1 { out.append(0) }
        }
        return out
    }
}

extension CAudioFile {
    /// The items of user data `type`: (offset, size) of each, in order.
    func userData(_ type: UInt32) throws(AudioFileFailure) -> [(bytes: [UInt8]?, offset: Int64, size: Int64)] {
        switch kind {
        case .reading(let r):
            guard let chunks = FileChunks.walk(r.storage, fileSize: r.storage.size) else {
                throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "user data are chunks of CAF, WAVE and AIFF files")
            }
            return chunks.filter { $0.type == type }.map { (nil, $0.offset, $0.size) }
        case .writing(let w):
            guard w.acceptsUserData else {
                throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "user data are chunks of CAF, WAVE and AIFF files")
            }
            return w.userData.chunks.filter { $0.type == type }.map { ($0.bytes, 0, Int64($0.bytes.count)) }
        }
    }

    /// Item `index` of user data `type`, or kAudioFileInvalidChunkError.
    func userDataItem(_ type: UInt32, _ index: UInt32) throws(AudioFileFailure) -> (bytes: [UInt8]?, offset: Int64, size: Int64) {
        let items = try userData(type)
        guard Int(index) < items.count else {
            throw AudioFileFailure(status: kAudioFileInvalidChunkError, "no user data '\(FourCharCode(rawValue: type))' at index \(index) (\(items.count) item(s))")
        }
        return items[Int(index)]
    }

    /// Copies up to `count` bytes of an item from byte `from` of it into `out`; returns the count.
    func readUserData(_ item: (bytes: [UInt8]?, offset: Int64, size: Int64), from: Int64, count: Int, into out: UnsafeMutableRawPointer) -> Int {
        let n = Int(max(0, min(Int64(count), item.size - from)))
        guard n > 0 else { return 0 }
        if let bytes = item.bytes {
            bytes.withUnsafeBytes { out.copyMemory(from: $0.baseAddress! + Int(from), byteCount: n) }
            return n
        }
        guard case .reading(let r) = kind else { return 0 }
        return r.storage.readFully(out, n, at: item.offset + from)
    }

    /// The file being written, for setting user data; a file opened for reading is refused.
    func userDataWriter() throws(AudioFileFailure) -> AudioFileWriteState {
        guard case .writing(let w) = kind else {
            throw AudioFileFailure(status: kAudioFilePermissionsError, "the file was opened for reading: its user data cannot change")
        }
        guard w.acceptsUserData else {
            throw AudioFileFailure(status: kAudioFileOperationNotSupportedError, "user data are chunks of CAF, WAVE and AIFF files")
        }
        return w
    }
}

/// `AudioFileCountUserData`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileCountUserData(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ outNumberItems: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outNumberItems else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in outNumberItems.pointee = UInt32(try f.userData(inUserDataID).count) }
}

/// `AudioFileGetUserDataSize`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetUserDataSize(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32, _ outUserDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let outUserDataSize else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let item = try f.userDataItem(inUserDataID, inIndex)
        guard item.size <= Int64(UInt32.max) else {
            throw AudioFileFailure(status: kAudioFileDoesNotAllow64BitDataSizeError, "the item is \(item.size) bytes: AudioFileGetUserDataSize64")
        }
        outUserDataSize.pointee = UInt32(item.size)
    }
}

/// `AudioFileGetUserDataSize64`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetUserDataSize64(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32, _ outUserDataSize: UnsafeMutablePointer<UInt64>?) -> OSStatus {
    guard let outUserDataSize else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in outUserDataSize.pointee = UInt64(try f.userDataItem(inUserDataID, inIndex).size) }
}

/// `AudioFileGetUserData`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetUserData(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32,
                                    _ ioUserDataSize: UnsafeMutablePointer<UInt32>?, _ outUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioUserDataSize, let outUserData else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let item = try f.userDataItem(inUserDataID, inIndex)
        ioUserDataSize.pointee = UInt32(f.readUserData(item, from: 0, count: Int(ioUserDataSize.pointee), into: outUserData))
    }
}

/// `AudioFileGetUserDataAtOffset`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileGetUserDataAtOffset(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32, _ inOffset: Int64,
                                            _ ioUserDataSize: UnsafeMutablePointer<UInt32>?, _ outUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let ioUserDataSize, let outUserData, inOffset >= 0 else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let item = try f.userDataItem(inUserDataID, inIndex)
        ioUserDataSize.pointee = UInt32(f.readUserData(item, from: inOffset, count: Int(ioUserDataSize.pointee), into: outUserData))
    }
}

/// `AudioFileSetUserData`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileSetUserData(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32,
                                    _ inUserDataSize: UInt32, _ inUserData: UnsafeRawPointer?) -> OSStatus {
    guard inUserDataSize == 0 || inUserData != nil else { return paramError }
    return withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        let w = try f.userDataWriter()
        let bytes = inUserData.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(inUserDataSize))) } ?? []
        try w.userData.set(inUserDataID, index: Int(inIndex), bytes)
    }
}

/// `AudioFileRemoveUserData`, exported to C: its contract is in `AudioToolbox/AudioFile.h`.
@c public func AudioFileRemoveUserData(_ inAudioFile: OpaquePointer?, _ inUserDataID: UInt32, _ inIndex: UInt32) -> OSStatus {
    withAudioFile(inAudioFile) { f throws(AudioFileFailure) in
        try f.userDataWriter().userData.remove(inUserDataID, index: Int(inIndex))
    }
}
