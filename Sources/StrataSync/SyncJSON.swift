import Foundation

/// The sync's hand-written JSON of flat objects of strings and nulls: the bases and the
/// conflict log's values in the store file, and the one string escaper of the sync (bases,
/// the outbox, and the server's bulk statements). Written by hand: a pull or an
/// acknowledgement encodes a base per object, and `JSONEncoder` cost more than the rest.
enum SyncJSON {
    /// A JSON object of `values`, keys sorted, as `JSONEncoder` with `.sortedKeys` writes it
    /// (written by hand: a pull or an acknowledgement encodes a base per object).
    static func encode(_ values: [String: String?]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(16 * values.count + 2)
        for (offset, key) in values.keys.sorted().enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let value = values[key] ?? nil {
                appendJSONString(value, to: &bytes)
            } else {
                bytes += SyncValue.jsonNull
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string` as a JSON string (the one escaper of the sync: bases, and the server's
    /// bulk statements).
    static func appendJSONString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // The bytes that need no escape go in runs (a pull writes a base per object).
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") else {
                    continue
                }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                start = index + 1
                appendEscape(of: byte, to: &bytes)
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The JSON escape of a byte that needs one.
    private static func appendEscape(of byte: UInt8, to bytes: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(byte)
        case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
        case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
        case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        default:
            bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        }
    }

    /// The values of a JSON object of strings and nulls (what ``encode(_:)`` writes); nil for
    /// nil or text that is not one.
    static func decode(_ text: String?) -> [String: String?]? {
        guard let text else { return nil }
        if let values = parseFlatObject(text) { return values }
        // Not in the form written above: Foundation's decoder decides.
        return try? JSONDecoder().decode([String: String?].self, from: Data(text.utf8))
    }

    /// A hand-written reader of `{"key":"value","key":null,…}` (any JSON whitespace, every
    /// JSON escape); nil for anything else, which ``decode(_:)`` hands to `JSONDecoder`.
    static func parseFlatObject(_ text: String) -> [String: String?]? {
        var text = text
        return text.withUTF8 { (bytes: UnsafeBufferPointer<UInt8>) -> [String: String?]? in
            var index = 0
            func skipSpace() {
                while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
            }
            func hexValue(_ byte: UInt8) -> UInt32? {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
                default: nil
                }
            }
            func unit() -> UInt32? {  // four hex digits after \u
                guard index + 4 <= bytes.count else { return nil }
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = hexValue(bytes[index]) else { return nil }
                    value = value << 4 | digit
                    index += 1
                }
                return value
            }
            func string() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
                    index += 1
                }
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "\"") {
                    let result = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return result
                }
                var result = Array(bytes[start..<index])
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    switch byte {
                    case UInt8(ascii: "\""):
                        return String(decoding: result, as: UTF8.self)
                    case UInt8(ascii: "\\"):
                        guard index < bytes.count else { return nil }
                        let escape = bytes[index]
                        index += 1
                        switch escape {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                        case UInt8(ascii: "b"): result.append(0x08)
                        case UInt8(ascii: "f"): result.append(0x0C)
                        case UInt8(ascii: "n"): result.append(0x0A)
                        case UInt8(ascii: "r"): result.append(0x0D)
                        case UInt8(ascii: "t"): result.append(0x09)
                        case UInt8(ascii: "u"):
                            guard var scalar = unit() else { return nil }
                            if (0xD800..<0xDC00).contains(scalar) {
                                guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                                else { return nil }
                                index += 2
                                guard let low = unit(), (0xDC00..<0xE000).contains(low) else { return nil }
                                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            }
                            guard let character = Unicode.Scalar(scalar) else { return nil }
                            result += Array(String(Character(character)).utf8)
                        default:
                            return nil
                        }
                    case 0..<0x20:
                        return nil
                    default:
                        result.append(byte)
                    }
                }
                return nil
            }
            var values: [String: String?] = [:]
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipSpace()
                    if index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
                       bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
                    {
                        index += 4
                        values[key] = .some(nil)
                    } else {
                        guard let value = string() else { return nil }
                        values[key] = .some(value)
                    }
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "}") else { return nil }
                    index += 1
                    break
                }
            }
            skipSpace()
            return index == bytes.count ? values : nil
        }
    }
}
