import Foundation

/// Turns a `default:` scalar into a `DefaultValue` of the attribute's type.
///
/// - String: the scalar's text, exactly (any style; `"0"` and `0` are both `"0"`).
/// - Int, Int32, Int16: a plain integer within the type's range → `.int`.
/// - Double, Float: a plain number → `.double` (finite, and within Float's range for Float).
/// - Decimal: a plain integer → `.int`; any other plain decimal number → `.string` with its
///   exact text, so no precision is lost (`Decimal(string:)`).
/// - Bool: `true` or `false` → `.bool`.
/// - Date: `now` only → `.now`.
/// - UUID: `uuid` → `.uuid` (a new UUID per object), or a UUID literal → `.string` (uppercased).
/// - URL: an absolute URL with a scheme → `.string`.
/// - Data: a string → `.string`, the value being the string's UTF-8 bytes.
/// - Enums: one of the enum's cases → `.enumCase`.
/// YAML's null (`~`, `null`, empty) is never a default.
enum DefaultValueParser {
    static func range(of type: AttributeType) -> ClosedRange<Int64>? {
        switch type {
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        default: nil
        }
    }

    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.unicodeScalars.allSatisfy(\.properties.isASCIIHexDigit) }
    }

    /// The default value, or the message explaining why the scalar isn't one.
    static func parse(_ scalar: YAMLScalar, type: AttributeType, schema: Schema, attribute: String)
        -> Result<DefaultValue, SchemaProblem>
    {
        let text = scalar.value
        let isPlain = scalar.style == .plain
        func fail(_ message: String) -> Result<DefaultValue, SchemaProblem> { .failure(SchemaProblem(message)) }
        let mismatch = "default '\(text)' of '\(attribute)' is not a valid \(type.name)"
        if scalar.isNull {
            return fail("the default of '\(attribute)' is null; remove 'default' (an optional attribute is nil unless set)")
        }
        switch type {
        case .string:
            return .success(.string(text))
        case .int, .int32, .int16:
            guard isPlain, let value = Int64(text) else {
                return fail(Int64(text) != nil ? mismatch + "; write the number without quotes" : mismatch)
            }
            if let range = range(of: type), !range.contains(value) {
                return fail("default \(text) of '\(attribute)' is out of range for \(type.name) (\(range.lowerBound)...\(range.upperBound))")
            }
            return .success(.int(value))
        case .double, .float:
            guard isPlain, let value = Double(text), value.isFinite, !text.hasPrefix("."), !text.hasSuffix(".") else {
                return fail(mismatch)
            }
            if type == .float, let float = Float(text), !float.isFinite {
                return fail("default \(text) of '\(attribute)' is out of range for Float")
            }
            return .success(.double(value))
        case .decimal:
            guard isPlain, isDecimalNumber(text) else { return fail(mismatch) }
            if let value = Int64(text) { return .success(.int(value)) }
            return .success(.string(text))
        case .bool:
            switch (isPlain, text) {
            case (true, "true"), (true, "True"), (true, "TRUE"): return .success(.bool(true))
            case (true, "false"), (true, "False"), (true, "FALSE"): return .success(.bool(false))
            default: return fail(mismatch + "; use true or false")
            }
        case .date:
            guard text == "now" else { return fail("the default of Date attribute '\(attribute)' can only be 'now'") }
            return .success(.now)
        case .uuid:
            if text == "uuid" { return .success(.uuid) }
            guard isUUID(text) else {
                return fail("default '\(text)' of '\(attribute)' is not a UUID; use 'uuid' for a new one or a literal such as 01234567-89AB-CDEF-0123-456789ABCDEF")
            }
            return .success(.string(text.uppercased()))
        case .url:
            guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty else {
                return fail("default '\(text)' of '\(attribute)' is not an absolute URL")
            }
            return .success(.string(text))
        case .data:
            return .success(.string(text))
        case .enumeration(let name):
            guard let enumType = schema.enumType(named: name) else { return fail(mismatch) }
            guard enumType.cases.contains(text) else {
                return fail("default '\(text)' of '\(attribute)' is not a case of enum '\(name)'"
                    + (Suggestions.closest(to: text, in: enumType.cases).map { "; did you mean '\($0)'?" }
                        ?? "; its cases are \(enumType.cases.joined(separator: ", "))"))
            }
            return .success(.enumCase(text))
        case .codable:
            return fail("a Codable attribute has no default literal ('\(attribute)'); make it optional (nil until set), "
                + "or give the value in Swift")
        }
    }

    /// `-12`, `3.50`, `1e3`: digits with an optional sign, fraction and exponent.
    static func isDecimalNumber(_ text: String) -> Bool {
        var scalars = Substring(text).unicodeScalars[...]
        if scalars.first == "-" || scalars.first == "+" { scalars = scalars.dropFirst() }
        let digits = scalars.prefix { ("0"..."9").contains($0) }
        scalars = scalars.dropFirst(digits.count)
        guard !digits.isEmpty else { return false }
        if scalars.first == "." {
            scalars = scalars.dropFirst()
            let fraction = scalars.prefix { ("0"..."9").contains($0) }
            guard !fraction.isEmpty else { return false }
            scalars = scalars.dropFirst(fraction.count)
        }
        if scalars.first == "e" || scalars.first == "E" {
            scalars = scalars.dropFirst()
            if scalars.first == "-" || scalars.first == "+" { scalars = scalars.dropFirst() }
            let exponent = scalars.prefix { ("0"..."9").contains($0) }
            guard !exponent.isEmpty else { return false }
            scalars = scalars.dropFirst(exponent.count)
        }
        return scalars.isEmpty
    }
}

/// Why a value or key path is not valid: the message of a diagnostic whose location the
/// caller knows.
struct SchemaProblem: Error {
    var message: String
    /// For key paths: the offset, in Unicode scalars of the spelled path, of the segment at fault.
    var offset: Int?
    init(_ message: String, offset: Int? = nil) {
        self.message = message
        self.offset = offset
    }
}
