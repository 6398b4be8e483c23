import Foundation
import GRDB
import Strata

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
        switch value.storage {
        case .null:
            return nil
        case .int64(let int):
            switch type {
            case .double, .float: return doubleText(Double(int))
            default: return String(int)
            }
        case .double(let double):
            switch type {
            case .int, .int32, .int16, .bool:
                if let int = Int64(exactly: double) { return String(int) }
                return doubleText(double)
            default: return doubleText(double)
            }
        case .string(let string):
            if type == .uuid { return string.lowercased() }
            return string
        case .blob(let data):
            switch type {
            case .uuid where data.count == 16:
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }.uuidString.lowercased()
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

    static func doubleText(_ double: Double) -> String {
        if double.isNaN { return "NaN" }
        if double.isInfinite { return double < 0 ? "-Infinity" : "Infinity" }
        return "\(double)"
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 15)])
        }
        return String(decoding: bytes, as: UTF8.self)
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
        let fast = copy.withUTF8 { bytes -> UUID? in
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
        return fast ?? UUID(uuidString: text)  // anything else: as Foundation decides
    }

    /// `uuid.uuidString.lowercased()`, written directly.
    static func text(of uuid: UUID) -> String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                digits.withUTF8Buffer { digits in
                    var index = 0
                    for offset in 0..<16 {
                        if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                            out[index] = UInt8(ascii: "-")
                            index += 1
                        }
                        out[index] = digits[Int(bytes[offset] >> 4)]
                        out[index + 1] = digits[Int(bytes[offset] & 15)]
                        index += 2
                    }
                }
                return 36
            }
        }
    }
}
