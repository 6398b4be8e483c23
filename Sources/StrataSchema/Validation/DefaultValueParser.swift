import Foundation
import StrataSQL

/// Turns a `default:` scalar into a `DefaultValue` of the attribute's type.
///
/// - String: the scalar's text, exactly (any style; `"0"` and `0` are both `"0"`).
/// - Int, Int32, Int16: a plain integer within the type's range → `.int`.
/// - Double, Float: a plain number → `.double` (finite, and within Float's range for Float).
/// - Decimal: a plain integer → `.int`; any other plain decimal number → `.string` with its
///   exact text, so no precision is lost (`Decimal(string:)`).
/// - Bool: `true` or `false` → `.bool`.
/// - Date: `now` → `.now`; an ISO 8601 date-time in UTC or with an offset
///   (`2024-01-01T09:30:00Z`, `2024-01-01T09:30:00.250+02:00`) or a date
///   (`2024-01-01`, midnight UTC) → `.date` (milliseconds since 1970).
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
            if text == "now" { return .success(.now) }
            switch parseDate(text) {
            case .success(let milliseconds): return .success(.date(milliseconds: milliseconds))
            case .failure(let problem):
                return fail("default '\(text)' of '\(attribute)' is not a valid date: \(problem.message)")
            }
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

    /// `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` with up to three fraction digits and `Z` or
    /// `±HH:MM`: milliseconds since 1970-01-01 00:00:00 UTC, or why the text is not such a date.
    static func parseDate(_ text: String) -> Result<Int64, SchemaProblem> {
        let example = "write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[index..<(index + count)] {
                guard ("0"..."9").contains(scalar) else { return nil }
                value = value * 10 + Int(scalar.value - 48)
            }
            index += count
            return value
        }
        func expect(_ character: Unicode.Scalar) -> Bool {
            guard index < scalars.count, scalars[index] == character else { return false }
            index += 1
            return true
        }
        let malformed = Result<Int64, SchemaProblem>.failure(SchemaProblem("expected ISO 8601; \(example)"))
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else {
            return malformed
        }
        guard (1...12).contains(month) else { return .failure(SchemaProblem("month \(month) is not in 1...12")) }
        let monthDays = CivilDate.days(inMonth: month, of: year)
        guard year >= 1 else { return .failure(SchemaProblem("year 0000 is not in 0001...9999")) }
        guard (1...monthDays).contains(day) else {
            return .failure(SchemaProblem("day \(day) is not in 1...\(monthDays) for " + text.prefix(7)))
        }
        var seconds = 0, milliseconds = 0, offset = 0
        if index < scalars.count {
            guard expect("T") || expect("t") else {
                return .failure(SchemaProblem("expected 'T' and a time after the date; \(example)"))
            }
            guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2) else {
                return .failure(SchemaProblem("expected a time HH:MM:SS after 'T'; \(example)"))
            }
            guard hour <= 23 else { return .failure(SchemaProblem("hour \(hour) is not in 0...23")) }
            guard minute <= 59 else { return .failure(SchemaProblem("minute \(minute) is not in 0...59")) }
            guard second <= 59 else { return .failure(SchemaProblem("second \(second) is not in 0...59 (leap seconds are not supported)")) }
            seconds = hour * 3600 + minute * 60 + second
            if expect(".") {
                var count = 0
                while index < scalars.count, ("0"..."9").contains(scalars[index]) {
                    count += 1
                    if count <= 3 { milliseconds = milliseconds * 10 + Int(scalars[index].value - 48) }
                    index += 1
                }
                guard count > 0 else { return .failure(SchemaProblem("expected digits after '.'; \(example)")) }
                guard count <= 3 else {
                    return .failure(SchemaProblem("\(count) fraction digits; Strata stores dates to the millisecond, so write at most 3"))
                }
                for _ in count..<3 { milliseconds *= 10 }
            }
            if expect("Z") || expect("z") {
                offset = 0
            } else if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" {
                let sign = scalars[index] == "-" ? -1 : 1
                index += 1
                guard let hours = digits(2), expect(":"), let minutes = digits(2), hours <= 23, minutes <= 59 else {
                    return .failure(SchemaProblem("expected a UTC offset such as +02:00 (hours 00...23, minutes 00...59)"))
                }
                offset = sign * (hours * 3600 + minutes * 60)
            } else {
                return .failure(SchemaProblem("the time needs a zone: 'Z' for UTC or an offset such as +02:00"))
            }
            guard index == scalars.count else { return malformed }
        }
        let days = CivilDate.daysSince1970(year: year, month: month, day: day)
        let total = (Int64(days) * 86_400 + Int64(seconds - offset)) * 1000 + Int64(milliseconds)
        // 0001-01-01T00:00:00.000Z ... 9999-12-31T23:59:59.999Z: four-digit years in storage.
        guard (-62_135_596_800_000...253_402_300_799_999).contains(total) else {
            return .failure(SchemaProblem("in UTC it is outside 0001-01-01...9999-12-31"))
        }
        return .success(total)
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
