// Swift strings to and from Core Foundation's CFString (the toolchain's), for the properties and
// arguments of the C API that are CFStringRefs (issue 23). Plain functions: any thread.
import CAudioToolbox
import Foundation

enum CFStrings {
    /// A new CFString (+1: the caller owns it) with `s`'s characters.
    static func make(_ s: String) -> CFString {
        s.withCString { CFStringCreateWithCString(nil, $0, CFStringBuiltInEncodings.UTF8.rawValue) }
            ?? CFStringCreateWithCString(nil, "", CFStringBuiltInEncodings.UTF8.rawValue)!
    }

    /// The characters of `cf` (UTF-8), or "" when they cannot be had.
    static func string(_ cf: CFString) -> String {
        let capacity = CFStringGetMaximumSizeForEncoding(CFStringGetLength(cf), CFStringBuiltInEncodings.UTF8.rawValue) + 1
        var buffer = [CChar](repeating: 0, count: max(1, capacity))
        guard CFStringGetCString(cf, &buffer, capacity, CFStringBuiltInEncodings.UTF8.rawValue) else { return "" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
