import Foundation
import GRDB
import Testing
@testable import Strata
import StrataSQL

/// Strata reads a stored date's text itself (`StoredDateText`); GRDB's
/// `Date.fromDatabaseValue(_:)` is the reference: every text read must give GRDB's `Date`
/// to the bit, and every text it does not read must be left to GRDB (nil).
@Suite("Stored dates read from their text")
struct StoredDateTextTests {
    /// GRDB's reading of `text`, and ours (nil: left to GRDB).
    private func readings(_ text: String) -> (grdb: Date?, ours: Date?) {
        let ours = Array(text.utf8).withUnsafeBytes { StoredDateText.parse($0) }
        return (Date.fromDatabaseValue(text.databaseValue), ours)
    }

    private func expectSame(_ text: String, _ comment: @autoclosure () -> String = "") {
        let (grdb, ours) = readings(text)
        guard let ours else {
            Issue.record("\(text) was not read \(comment())")
            return
        }
        #expect(grdb?.timeIntervalSinceReferenceDate.bitPattern == ours.timeIntervalSinceReferenceDate.bitPattern,
                "\(text): GRDB \(grdb.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil"), ours \(ours.timeIntervalSinceReferenceDate) \(comment())")
    }

    @Test("every millisecond of seconds at the edges: the epochs, the range's ends, leap days, before 1970",
          arguments: [
            "1970-01-01 00:00:00", "1969-12-31 23:59:59", "2001-01-01 00:00:00", "2000-12-31 23:59:59",
            "1600-01-01 00:00:00", "1600-02-29 12:00:00", "1899-12-31 23:59:59", "2024-02-29 21:59:59",
            "2100-02-28 23:59:59", "2400-02-29 00:00:00", "9999-12-31 23:59:59", "2038-01-19 03:14:07",
          ])
    func everyMillisecond(of second: String) {
        for ms in 0..<1_000 { expectSame(second + "." + String(format: "%03d", ms)) }
    }

    @Test("random instants across the range, as GRDB writes them and as typed")
    func randomInstants() {
        let seed = partTestSeed("StoredDateTextTests.randomInstants")
        var random = StoreRandom(seed: seed)
        for _ in 0..<20_000 {
            // As GRDB stores a Date: its own text.
            let seconds = Double.random(in: -11_676_096_000..<253_402_300_799, using: &random)
            guard case .string(let text) = Date(timeIntervalSince1970: seconds).databaseValue.storage else {
                Issue.record("not text")
                return
            }
            expectSame(text, "seed \(seed)")
            // As typed: any valid date and time.
            let year = Int.random(in: 1600...9999, using: &random), month = Int.random(in: 1...12, using: &random)
            let day = Int.random(in: 1...CivilDate.days(inMonth: month, of: year), using: &random)
            let typed = String(
                format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", year, month, day, Int.random(in: 0...23, using: &random),
                Int.random(in: 0...59, using: &random), Int.random(in: 0...59, using: &random),
                Int.random(in: 0...999, using: &random))
            expectSame(typed, "seed \(seed)")
        }
    }

    /// Where the platform's calendar sums otherwise, `agreesWithGRDB` turns the reading off and
    /// every date goes to GRDB; on Linux (swift-foundation's calendar) it must be on, or the
    /// speed the benchmarks measure is not there.
    @Test("the reading is on where the calendar agrees, and then used by results fetches")
    func onWhereTheCalendarAgrees() {
        #if os(Linux)
        #expect(StoredDateText.agreesWithGRDB)
        #endif
        let text = "2000-12-31 23:59:59.003"
        let read = Array(text.utf8).withUnsafeBytes { StoredDateText.date($0) }
        #expect((read != nil) == StoredDateText.agreesWithGRDB)
    }

    /// The calendar arithmetic the reading shares with the schema's date defaults
    /// (`CivilDate`): a day's number and its date agree both ways, for every day of the
    /// stored range, and each month has the days the day numbers give it.
    @Test("CivilDate's day numbers and dates agree both ways over 0001...9999")
    func civilDateBothWays() {
        let first = CivilDate.daysSince1970(year: 1, month: 1, day: 1)
        let last = CivilDate.daysSince1970(year: 9999, month: 12, day: 31)
        #expect(first == -719_162 && last == 2_932_896 && CivilDate.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        var expected = (year: 1, month: 1, day: 1)
        for days in first...last {
            let (year, month, day) = CivilDate.of(daysSince1970: Int64(days))
            guard (Int(year), Int(month), Int(day)) == expected,
                CivilDate.daysSince1970(year: expected.year, month: expected.month, day: expected.day) == days
            else {
                Issue.record("day \(days): \(year)-\(month)-\(day), expected \(expected)")
                return
            }
            // The next day, by the month's length.
            if expected.day < CivilDate.days(inMonth: expected.month, of: expected.year) {
                expected.day += 1
            } else if expected.month < 12 {
                expected = (expected.year, expected.month + 1, 1)
            } else {
                expected = (expected.year + 1, 1, 1)
            }
        }
    }

    @Test("other forms, impossible dates and years before 1600 are left to GRDB")
    func othersLeftToGRDB() {
        for text in [
            "2024-01-01", "2024-01-01 10:00", "2024-01-01 10:00:00", "2024-01-01T10:00:00.000",
            "2024-01-01 10:00:00.000Z", "2024-01-01 10:00:00.0001", "2024-01-01 10:00:00,000",
            "2024-02-30 10:00:00.000", "2023-02-29 10:00:00.000", "2024-13-01 10:00:00.000", "2024-00-10 10:00:00.000",
            "2024-01-00 10:00:00.000", "2024-01-01 24:00:00.000", "2024-01-01 10:60:00.000", "2024-01-01 10:00:60.000",
            "1599-12-31 23:59:59.999", "1582-10-15 00:00:00.000", "0001-01-01 00:00:00.000", "+024-01-01 10:00:00.000",
            "2024-0a-01 10:00:00.000", "2024/01/01 10:00:00.000", "２024-01-01 10:00:00.000", "",
        ] {
            #expect(readings(text).ours == nil, "\(text) was read")
        }
    }
}
