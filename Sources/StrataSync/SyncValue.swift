import Foundation
import GRDB
import Strata
import StrataSQL

/// Values on the wire: every column value travels as text (or nil for NULL), in one
/// canonical form per type, so that a push or a pull is a plain message (JSON) and a value
/// read back from either side compares equal to the one written:
///
/// | type | text |
/// | --- | --- |
/// | `Int`, `Int32`, `Int16`, positions | decimal digits |
/// | `Double`, `Float` | Swift's shortest round-trip form; `Infinity`, `-Infinity`, `NaN` |
/// | `Bool` | `1` or `0` |
/// | `Date` | `yyyy-MM-dd HH:mm:ss.SSS`, UTC (the store's own form) |
/// | `UUID`, references | lowercase `8-4-4-4-12` |
/// | `Data` | lowercase hexadecimal |
/// | `String`, `URL`, enums, `Decimal`, `Codable<T>` | the stored text |
enum SyncValue {
    /// The wire text of a value stored in SQLite.
    static func text(of value: DatabaseValue, as type: ValueType) -> String? {
        text(of: StoredValue(value), as: type)
    }

    /// The wire text of a value as the store keeps it.
    static func text(of value: StoredValue, as type: ValueType) -> String? {
        switch value {
        case .null:
            return nil
        case .integer(let int):
            switch type {
            case .double, .float: return doubleText(Double(int))
            default: return String(int)
            }
        case .real(let double):
            switch type {
            case .int, .int32, .int16, .bool:
                if let int = Int64(exactly: double) { return String(int) }
                return doubleText(double)
            default: return doubleText(double)
            }
        case .text(let string):
            if type == .uuid { return string.lowercased() }
            return string
        case .blob(let data):
            switch type {
            case .uuid where data.count == 16:
                return text(of: data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) })
            case .string, .url, .enumeration, .json, .decimal, .date:
                return String(decoding: data, as: UTF8.self)
            default:
                return hex(data)
            }
        }
    }

    /// The SQLite value of a wire text, as the store keeps a value of `type`.
    static func databaseValue(of text: String?, as type: ValueType) -> DatabaseValue {
        guard let text else { return .null }
        switch type {
        case .int, .int32, .int16, .bool:
            if let int = Int64(text) { return int.databaseValue }
            return (Double(text) ?? 0).databaseValue
        case .double, .float:
            return (Double(text) ?? .nan).databaseValue
        case .uuid:
            guard let uuid = uuid(text) else { return text.databaseValue }
            return uuid.databaseValue
        case .data:
            return (data(hex: text) ?? Data(text.utf8)).databaseValue
        case .string, .url, .enumeration, .json, .decimal, .date:
            return text.databaseValue
        }
    }

    /// The wire text of a PostgreSQL `timestamptz` given as microseconds since 2000-01-01
    /// 00:00 UTC (its binary form): what `to_char(value AT TIME ZONE 'UTC', 'YYYY-MM-DD
    /// HH24:MI:SS.MS')` writes, years before 1 AD as that function writes them (1 BC as
    /// `0001`), years after 9999 with every digit; nil for `infinity` and `-infinity` (for
    /// which that function answers NULL).
    static func dateText(microsecondsSince2000 microseconds: Int64) -> String? {
        guard microseconds != .max, microseconds != .min else { return nil }
        let perDay: Int64 = 86_400_000_000
        var days = microseconds / perDay
        var time = microseconds % perDay
        if time < 0 {
            time += perDay
            days -= 1
        }
        let (year, month, day) = CivilDate.of(daysSince1970: days + 10_957)  // 2000-01-01 is day 10,957
        let milliseconds = time / 1_000
        let yearDigits = year > 0 ? year : 1 - year
        var width = 4
        var limit: Int64 = 10_000
        while yearDigits >= limit {
            width += 1
            limit = limit.multipliedReportingOverflow(by: 10).overflow ? .max : limit * 10
        }
        return String(unsafeUninitializedCapacity: width + 20) { out in
            // `value`'s last `count` decimal digits, zero-padded, at `end` (exclusive).
            func put(_ value: Int64, _ count: Int, endingAt end: Int) {
                var value = value
                for index in stride(from: end - 1, through: end - count, by: -1) {
                    out[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(yearDigits, width, endingAt: width)
            var index = width
            func field(_ separator: Character, _ value: Int64, _ count: Int) {
                out[index] = separator.asciiValue!
                put(value, count, endingAt: index + 1 + count)
                index += 1 + count
            }
            field("-", month, 2)
            field("-", day, 2)
            field(" ", milliseconds / 3_600_000, 2)
            field(":", milliseconds / 60_000 % 60, 2)
            field(":", milliseconds / 1_000 % 60, 2)
            field(".", milliseconds % 1_000, 3)
            return index
        }
    }

    /// Writes `bytes` into `out` as lowercase hexadecimal digits (two per byte), with a dash
    /// before the 5th, 7th, 9th and 11th byte when `dashed` (a UUID's text: 36 from 16).
    static func writeHex(_ bytes: UnsafeRawBufferPointer, dashed: Bool, into out: UnsafeMutableBufferPointer<UInt8>) {
        @inline(__always) func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble }
        var index = 0
        for (offset, byte) in bytes.enumerated() {
            if dashed, offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                out[index] = UInt8(ascii: "-")
                index += 1
            }
            out[index] = digit(byte >> 4)
            out[index + 1] = digit(byte & 15)
            index += 2
        }
    }

    /// JSON's `null`.
    static let jsonNull: [UInt8] = Array("null".utf8)

    static func doubleText(_ double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-Infinity" : "Infinity" }
        return "\(double)"
    }

    static func hex(_ data: Data) -> String {
        String(unsafeUninitializedCapacity: 2 * data.count) { out in
            data.withUnsafeBytes { writeHex($0, dashed: false, into: out) }
            return 2 * data.count
        }
    }

    static func data(hex text: String) -> Data? {
        var text = Substring(text)
        if text.hasPrefix("\\x") { text = text.dropFirst(2) }
        guard text.utf8.count.isMultiple(of: 2) else { return nil }
        // Into an array first: appending to `Data` byte by byte cost more than the decoding.
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for byte in text.utf8 {
            guard let value = hexDigit(byte) else { return nil }
            if let first = high {
                result.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return Data(result)
    }

    @inline(__always)
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The UUID of `text`, as `UUID(uuidString:)` reads it (`8-4-4-4-12` hexadecimal digits,
    /// either case), without its formatted scan, which a pull of thousands of ids felt.
    static func uuid(_ text: String) -> UUID? {
        var copy = text
        return copy.withUTF8 { uuid(utf8: $0) } ?? UUID(uuidString: text)  // anything else: as Foundation decides
    }

    /// The UUID of 36 bytes of UTF-8 text in the form `8-4-4-4-12`, either case; nil for
    /// anything else.
    static func uuid(utf8 bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var index = 0
            for offset in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard bytes[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = hexDigit(bytes[index]), let low = hexDigit(bytes[index + 1]) else { return false }
                out[offset] = high << 4 | low
                index += 2
            }
            return true
        }
        return parsed ? UUID(uuid: value) : nil
    }

    /// `uuid.uuidString.lowercased()`, written directly.
    static func text(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                writeHex(bytes, dashed: true, into: out)
                return 36
            }
        }
    }
}

extension UUID {
    /// The sync id's wire text: `uuidString.lowercased()`, written directly.
    var syncText: String { SyncValue.text(of: self) }
}

/// A value as a store keeps it (SQLite's five storage classes), in a form of the sync's own:
/// what a pull's batch holds (``PullBatch``) whichever server read it, turned into SQLite's
/// value only where the store is written.
enum StoredValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let int): self = .integer(int)
        case .double(let double): self = .real(double)
        case .string(let string): self = .text(string)
        case .blob(let data): self = .blob(data)
        }
    }

    var isNull: Bool { self == .null }

    /// The same value as SQLite's.
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let int): int.databaseValue
        case .real(let double): double.databaseValue
        case .text(let string): string.databaseValue
        case .blob(let data): data.databaseValue
        }
    }
}
