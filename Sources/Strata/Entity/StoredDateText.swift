import Foundation
import GRDB
import StrataSQL

/// Reads the text GRDB stores a date as, `yyyy-MM-dd HH:mm:ss.SSS` in UTC, straight from its
/// bytes: the same `Date`, to the bit, as GRDB's `Date.fromDatabaseValue(_:)`, which parses
/// it into date components and asks Foundation's Gregorian calendar for the instant, under
/// a lock (37 % of the time of decoding the benchmarks' notes, more than every other column).
///
/// Only that exact form of a date between 1600-01-01 and 9999-12-31 is read here: other
/// forms (no milliseconds, a `T`, a time zone, a Julian day number), impossible dates that
/// the calendar would roll over, and years near the calendar's Julian reform are left to
/// GRDB (nil), and so is every date where the platform's calendar does not give, for a set of
/// texts checked once a process, the same instants as Strata (``agreesWithGRDB``). The tests
/// compare both readings, bit for bit, over every millisecond of a second and random instants
/// across the whole range (`StoredDateTextTests`).
@usableFromInline
enum StoredDateText {
    /// Days from 1970-01-01 to 2001-01-01, `Date`'s reference date.
    static let referenceDay = 11_323

    /// The date of `bytes`, or nil when they are not of the form read here, or when this
    /// platform's calendar does not read as Strata does (``agreesWithGRDB``).
    @usableFromInline
    static func date(_ bytes: UnsafeRawBufferPointer) -> Date? {
        agreesWithGRDB ? parse(bytes) : nil
    }

    /// Whether GRDB reads, through this platform's Foundation, the same `Date` as
    /// ``parse(_:)`` for texts where another order of the sums would differ in the last bit
    /// (every millisecond of a second before 2001, and a few others): checked once a process,
    /// in about a millisecond. Where it does not (another implementation of the calendar),
    /// every date is left to GRDB.
    static let agreesWithGRDB: Bool = {
        let seconds = ["2000-12-31 23:59:59", "1969-12-31 23:59:59", "2024-02-29 21:59:59", "1600-01-01 00:00:00", "9999-12-31 23:59:59"]
        for second in seconds {
            for milliseconds in 0..<1_000 {
                var text = second + "."
                if milliseconds < 100 { text += "0" }
                if milliseconds < 10 { text += "0" }
                text += String(milliseconds)
                let ours = Array(text.utf8).withUnsafeBytes { parse($0) }
                guard let ours, let grdb = Date.fromDatabaseValue(text.databaseValue),
                    ours.timeIntervalSinceReferenceDate.bitPattern == grdb.timeIntervalSinceReferenceDate.bitPattern
                else { return false }
            }
        }
        return true
    }()

    /// The date of `bytes` (23 of them), as the calendar computes it; nil when they are not
    /// of the form read here.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Date? {
        guard bytes.count == 23 else { return nil }
        // Digits, two at a time, with the separators in place.
        @inline(__always) func digit(_ i: Int) -> Int? {
            let d = Int(bytes[i]) &- 48
            return d >= 0 && d <= 9 ? d : nil
        }
        @inline(__always) func pair(_ i: Int) -> Int? {
            guard let a = digit(i), let b = digit(i + 1) else { return nil }
            return a * 10 + b
        }
        guard bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x20, bytes[13] == 0x3A, bytes[16] == 0x3A,
            bytes[19] == 0x2E,
            let century = pair(0), let yy = pair(2), let month = pair(5), let day = pair(8),
            let hour = pair(11), let minute = pair(14), let second = pair(17),
            let m1 = digit(20), let m23 = pair(21)
        else { return nil }
        let year = century * 100 + yy
        let milliseconds = m1 * 100 + m23
        guard year >= 1600, month >= 1, month <= 12, day >= 1, day <= CivilDate.days(inMonth: month, of: year),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        // As the calendar computes it: the day's start, plus the time of day with its fraction
        // (summed first, so that the fraction is rounded as at the scale of a day).
        let dayStart = Double((CivilDate.daysSince1970(year: year, month: month, day: day) - referenceDay) * 86_400)
        let timeOfDay = Double(hour * 3_600 + minute * 60 + second) + Double(milliseconds) / 1_000
        return Date(timeIntervalSinceReferenceDate: dayStart + timeOfDay)
    }
}
