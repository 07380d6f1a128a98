// The little of Core Audio's device API programs read (CoreAudio/AudioHardware.h, and its
// AudioToolbox names in AudioServices.h), issue 23: the system object (1) has a default input
// and output device, the process's JACK device (2), whose nominal sample rate, buffer frame size
// and name are the engine's device's. Any thread; the first call about the device opens the
// process's JACK client (ProcessEngine.get), which blocks as long as that takes.
import AQEngine
import CAudioToolbox
import Foundation

enum HardwareObjects {
    static let system: UInt32 = 1
    static let device: UInt32 = 2

    /// The property's value in its C layout, or the result code refusing it.
    static func value(_ object: UInt32, _ address: AudioObjectPropertyAddress) -> Result<[UInt8], AudioFileFailure> {
        func of<T>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
        let unknown = AudioFileFailure(status: kAudioHardwareUnknownPropertyError, "object \(object) has no property '\(FourCharCode(rawValue: address.mSelector))'")
        switch object {
        case system:
            switch address.mSelector {
            case UInt32(kAudioHardwarePropertyDefaultInputDevice), UInt32(kAudioHardwarePropertyDefaultOutputDevice),
                 UInt32(kAudioHardwarePropertyDefaultSystemOutputDevice):
                return .success(of(device))
            default: return .failure(unknown)
            }
        case device:
            let known: [UInt32] = [UInt32(kAudioDevicePropertyNominalSampleRate), UInt32(kAudioDevicePropertyBufferFrameSize), UInt32(kAudioObjectPropertyName)]
            guard known.contains(address.mSelector) else { return .failure(unknown) }
            let engine: AudioQueueEngine
            do {
                engine = try ProcessEngine.shared.get(channels: 2)
            } catch {
                return .failure(AudioFileFailure(status: kAudioHardwareNotRunningError, "no device: \(error)"))
            }
            switch address.mSelector {
            case UInt32(kAudioDevicePropertyNominalSampleRate): return .success(of(engine.device.sampleRate))
            case UInt32(kAudioDevicePropertyBufferFrameSize): return .success(of(UInt32(engine.device.framesPerCycle)))
            default:
                // A new CFString (the caller releases it), as Apple's.
                let name = Unmanaged<CFString>.passRetained(CFStrings.make(engine.device.uid)).toOpaque()
                return .success(of(UInt(bitPattern: name)))
            }
        default:
            return .failure(AudioFileFailure(status: kAudioHardwareBadObjectError, "no audio object \(object)"))
        }
    }

    /// The size of a property's value without making it (the name's CFString is made on reading).
    static func size(_ object: UInt32, _ address: AudioObjectPropertyAddress) -> Result<UInt32, AudioFileFailure> {
        if object == device && address.mSelector == UInt32(kAudioObjectPropertyName) { return .success(UInt32(MemoryLayout<UInt>.size)) }
        return value(object, address).map { UInt32($0.count) }
    }
}

/// `AudioObjectHasProperty`, exported to C: its contract is in `CoreAudio/AudioHardware.h`.
@c public func AudioObjectHasProperty(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?) -> Bool {
    guard let inAddress else { return false }
    if case .success = HardwareObjects.size(inObjectID, inAddress.pointee) { return true }
    return false
}

/// `AudioObjectGetPropertyDataSize`, exported to C: its contract is in `CoreAudio/AudioHardware.h`.
@c public func AudioObjectGetPropertyDataSize(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?, _ inQualifierDataSize: UInt32,
                                              _ inQualifierData: UnsafeRawPointer?, _ outDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let inAddress, let outDataSize else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in outDataSize.pointee = try HardwareObjects.size(inObjectID, inAddress.pointee).get() }
}

/// `AudioObjectGetPropertyData`, exported to C: its contract is in `CoreAudio/AudioHardware.h`.
@c public func AudioObjectGetPropertyData(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?, _ inQualifierDataSize: UInt32,
                                          _ inQualifierData: UnsafeRawPointer?, _ ioDataSize: UnsafeMutablePointer<UInt32>?,
                                          _ outData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let inAddress, let ioDataSize, let outData else { return paramError }
    return fileStatus { () throws(AudioFileFailure) in
        let size = try HardwareObjects.size(inObjectID, inAddress.pointee).get()
        guard ioDataSize.pointee >= size else {
            throw AudioFileFailure(status: kAudioHardwareBadPropertySizeError, "the property takes \(size) bytes; \(ioDataSize.pointee) given")
        }
        let bytes = try HardwareObjects.value(inObjectID, inAddress.pointee).get()
        bytes.withUnsafeBytes { outData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        ioDataSize.pointee = UInt32(bytes.count)
    }
}

/// `AudioHardwareServiceHasProperty`, exported to C (AudioToolbox/AudioServices.h): AudioObjectHasProperty.
@c public func AudioHardwareServiceHasProperty(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?) -> Bool {
    AudioObjectHasProperty(inObjectID, inAddress)
}

/// `AudioHardwareServiceGetPropertyDataSize`, exported to C (AudioToolbox/AudioServices.h): AudioObjectGetPropertyDataSize.
@c public func AudioHardwareServiceGetPropertyDataSize(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?, _ inQualifierDataSize: UInt32,
                                                       _ inQualifierData: UnsafeRawPointer?, _ outDataSize: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    AudioObjectGetPropertyDataSize(inObjectID, inAddress, inQualifierDataSize, inQualifierData, outDataSize)
}

/// `AudioHardwareServiceGetPropertyData`, exported to C (AudioToolbox/AudioServices.h): AudioObjectGetPropertyData.
@c public func AudioHardwareServiceGetPropertyData(_ inObjectID: UInt32, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>?, _ inQualifierDataSize: UInt32,
                                                   _ inQualifierData: UnsafeRawPointer?, _ ioDataSize: UnsafeMutablePointer<UInt32>?,
                                                   _ outData: UnsafeMutableRawPointer?) -> OSStatus {
    AudioObjectGetPropertyData(inObjectID, inAddress, inQualifierDataSize, inQualifierData, ioDataSize, outData)
}
