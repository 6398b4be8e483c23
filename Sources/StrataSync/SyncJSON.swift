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
        return text.withUTF8 { bytes -> [String: String?]? in
            var scanner = JSONScanner(bytes)
            var values: [String: String?] = [:]
            let read = scanner.object { scanner, key in
                if scanner.null() {
                    values[key] = .some(nil)
                    return true
                }
                guard let value = scanner.string() else { return false }
                values[key] = .some(value)
                return true
            }
            return read && scanner.atEnd ? values : nil
        }
    }
}
