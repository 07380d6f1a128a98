import Foundation
import AQEngine

/// `aqsync play --start-at INSTANT` (issue 26): an instant on the system's wall clock
/// (CLOCK_REALTIME), written as ISO 8601 with a zone (`2026-11-27T12:00:03.250Z`,
/// `2026-11-27T13:00:03+01:00`; fractions down to the nanosecond) or as seconds from now
/// (`+3`, `+2.5`, `+2.5s`).
///
/// Thread safety: stateless; any thread.
package enum StartInstant {
    /// Parses `text`; `now` is the instant `+N` counts from (CLOCK_REALTIME).
    /// - Throws: ``StartInstantError`` with a line saying what is wrong and what to write.
    package static func parse(_ text: String, now: SystemInstant) throws(StartInstantError) -> SystemInstant {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("+") {
            var n = t.dropFirst()
            if n.hasSuffix("s") { n = n.dropLast() }
            guard !n.isEmpty, n.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), n.filter({ $0 == "." }).count <= 1,
                  n.first != ".", n.last != ".", let v = Double(n), v.isFinite, v > 0, v <= 86_400
            else {
                throw StartInstantError("'\(text)' is not a time from now: write +N or +N.N seconds (more than 0, at most a day), e.g. +3 or +2.5s")
            }
            return SystemInstant(clock: .realtime, nanoseconds: now.nanoseconds + Int64((v * 1e9).rounded()))
        }
        guard let ns = iso8601(t) else {
            throw StartInstantError("'\(text)' is not an instant: write ISO 8601 with a zone, e.g. 2026-11-27T12:00:03.250Z or 2026-11-27T13:00:03.250+01:00, or seconds from now, e.g. +3")
        }
        return SystemInstant(clock: .realtime, nanoseconds: ns)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)` as nanoseconds since 1970 UTC; nil
    /// when it is anything else (no zone, a field out of range, a leap second).
    package static func iso8601(_ text: String) -> Int64? {
        let c = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int64? {
            guard i + n <= c.count else { return nil }
            var v: Int64 = 0
            for k in 0..<n {
                let d = c[i + k]
                guard d >= 48 && d <= 57 else { return nil }
                v = v * 10 + Int64(d - 48)
            }
            i += n
            return v
        }
        func expect(_ ch: UInt8) -> Bool {
            guard i < c.count, c[i] == ch else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2) else { return nil }
        guard i < c.count, c[i] == 84 || c[i] == 116 || c[i] == 32 else { return nil }  // T, t or a space
        i += 1
        guard let hour = digits(2), expect(58), let minute = digits(2), expect(58), let second = digits(2) else { return nil }
        var fraction: Int64 = 0
        if i < c.count && (c[i] == 46 || c[i] == 44) {  // . or ,
            i += 1
            var n = 0
            while i < c.count, c[i] >= 48 && c[i] <= 57 {
                guard n < 9 else { return nil }
                fraction = fraction * 10 + Int64(c[i] - 48)
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
            for _ in n..<9 { fraction *= 10 }
        }
        var zone: Int64 = 0  // seconds east of UTC
        guard i < c.count else { return nil }
        if c[i] == 90 || c[i] == 122 {  // Z or z
            i += 1
        } else if c[i] == 43 || c[i] == 45 {  // + or -
            let sign: Int64 = c[i] == 43 ? 1 : -1
            i += 1
            guard let zh = digits(2) else { return nil }
            _ = expect(58)
            guard let zm = digits(2), zh <= 23, zm <= 59 else { return nil }
            zone = sign * (zh * 3600 + zm * 60)
        } else {
            return nil
        }
        guard i == c.count else { return nil }
        guard year >= 1970, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - zone
        return seconds * 1_000_000_000 + fraction
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `ns` (CLOCK_REALTIME) as ISO 8601 UTC with nanoseconds, for log lines.
    package static func format(_ ns: Int64) -> String {
        let secs = ns >= 0 ? ns / 1_000_000_000 : (ns - 999_999_999) / 1_000_000_000
        let frac = ns - secs * 1_000_000_000
        let days = secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400
        let rem = secs - days * 86_400
        // H. Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad(rem / 60 % 60, 2)):\(pad(rem % 60, 2)).\(pad(frac, 9))Z"
    }
}

/// A `--start-at` value that is not an instant.
package struct StartInstantError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
