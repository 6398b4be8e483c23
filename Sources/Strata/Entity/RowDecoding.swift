import Foundation
import GRDB

/// A stored value that the generated type cannot represent.
///
/// Reading never traps: a row written by raw SQL, an older version of the app or another
/// tool may hold a value that is not one of an enumeration's cases, text where a number is
/// expected, or NULL in a required column. The read that meets it throws this error, which
/// names the table, the row, the column and the value found, and results controllers
/// report it as a failure (see ``ResultsControllerDelegate/controller(_:didFailWith:)``).
/// No row is skipped silently.
///
/// ```swift
/// do {
///     let notes = try store.read { db in try db.fetchAll(Note.self) }
/// } catch let error as ValueDecodingError {
///     print(error)   // cannot read Note.priority of the row with id 7: the stored text 'urgent' is not a valid Priority
/// }
/// ```
public struct ValueDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The entity (and table) of the row.
    public var entity: String
    /// The row's id, when the row has one that could be read.
    public var id: Int64?
    /// The column whose value could not be read.
    public var column: String
    /// The value found, nil when the column is missing from the row altogether.
    public var storedValue: DatabaseValue?
    /// The Swift type the generated code expected, as written in Swift (`Priority`, `Date`).
    public var expectedType: String
    /// Why the value is not valid, when more can be said than its type: for a `Codable`
    /// attribute stored as JSON, what the JSON decoder found (`no value for key 'color'`).
    public var detail: String?

    /// An error for the value of `column` in the row `id` of `entity`.
    public init(
        entity: String, id: Int64?, column: String, storedValue: DatabaseValue?, expectedType: String,
        detail: String? = nil
    ) {
        self.entity = entity
        self.id = id
        self.column = column
        self.storedValue = storedValue
        self.expectedType = expectedType
        self.detail = detail
    }

    /// A readable message that names the table, row, column and value.
    public var description: String {
        let row = id.map { "the row with id \($0)" } ?? "a row"
        let found: String
        switch storedValue?.storage {
        case nil: found = "the column is missing from the row"
        case .null?: found = "the stored value is NULL, and \(expectedType) is required"
        case .int64(let value)?: found = "the stored integer \(value) is not a valid \(expectedType)"
        case .double(let value)?: found = "the stored real \(value) is not a valid \(expectedType)"
        case .string(let value)?: found = "the stored text \(Self.quote(value)) is not a valid \(expectedType)"
        case .blob(let data)?: found = "the stored blob of \(data.count) bytes is not a valid \(expectedType)"
        }
        return "cannot read \(entity).\(column) of \(row): \(found)" + (detail.map { " (\($0))" } ?? "")
    }

    private static func quote(_ text: String) -> String {
        let limit = 80
        let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "'" + shown.replacingOccurrences(of: "\0", with: "\\0") + "'"
    }
}

extension Row {
    /// The value of a required `column`, for a generated entity's `init(row:)`.
    ///
    /// Throws ``ValueDecodingError`` when the column is missing, holds NULL, or holds a
    /// value that `Value` cannot represent exactly: a storage class other than the one
    /// Strata writes for the type (text in an integer column, a real where an integer is
    /// expected, a blob in a text column), an integer out of the type's range, a Bool that
    /// is not 0 or 1, text that is not an enumeration case or a date. SQLite's own lossy
    /// conversions (text to 0, 1.5 to 1) never apply. Generated code calls it.
    @inlinable
    public func strataValue<Value: DatabaseValueConvertible>(
        _ column: String, of entity: String, as type: Value.Type = Value.self
    ) throws -> Value {
        try strataDecode(strataDatabaseValue(column), column, of: entity)
    }

    /// The value of an optional `column`: nil for NULL, else as ``strataValue(_:of:as:)``.
    /// A missing column throws; it never reads as nil.
    @inlinable
    public func strataOptionalValue<Wrapped: DatabaseValueConvertible>(
        _ column: String, of entity: String, as type: Wrapped.Type = Wrapped.self
    ) throws -> Wrapped? {
        let dbValue = strataDatabaseValue(column)
        if dbValue?.isNull == true { return nil }
        return try strataDecode(dbValue, column, of: entity) as Wrapped
    }

    /// `dbValue` (nil: the column is missing) as a `Value`, or ``ValueDecodingError``.
    @inlinable
    func strataDecode<Value: DatabaseValueConvertible>(
        _ dbValue: DatabaseValue?, _ column: String, of entity: String
    ) throws -> Value {
        if let dbValue, StrataStorage.accepts(Value.self, dbValue), let value = Value.fromDatabaseValue(dbValue) {
            return value
        }
        throw strataDecodingError(column, of: entity, expected: Value.self)
    }

    /// The value of `column` as stored (NULL included), text read in full past a NUL
    /// character (see ``DatabaseValue/inFull(_:)``); nil when the row has no such column.
    /// Read through GRDB's non-generic accessor: its generic decoding path costs a runtime
    /// metadata lookup for every value read.
    @usableFromInline
    func strataDatabaseValue(_ column: String) -> DatabaseValue? {
        let stored: (any DatabaseValueConvertible)? = self[column]
        guard let stored else { return hasColumn(column) ? .null : nil }
        return stored.databaseValue.inFull { try withUnsafeData(named: column, $0) }
    }

    @usableFromInline
    func strataDecodingError(_ column: String, of entity: String, expected: Any.Type) -> ValueDecodingError {
        let key = SchemaRegistry.primaryKey(ofEntity: entity)
        let id = (try? decode(DatabaseValue.self, forColumn: key)).flatMap { Int64.fromDatabaseValue($0) }
        let value = strataDatabaseValue(column)
        return ValueDecodingError(
            entity: entity, id: id, column: column, storedValue: value, expectedType: String(describing: expected))
    }
}

extension DatabaseValue {
    /// This value, with text that GRDB cut at a NUL character read in full: GRDB reads
    /// text as a C string, but another program may have stored NUL characters in it.
    /// `readBytes` gives the stored bytes of the same value to a closure (GRDB's
    /// `Row.withUnsafeData`); only text pays for the extra read.
    @usableFromInline
    func inFull(_ readBytes: ((Data?) -> String?) throws -> String?) -> DatabaseValue {
        guard case .string(let text) = storage else { return self }
        let full = try? readBytes { data in
            guard let data, data.count != text.utf8.count else { return nil }
            return String(decoding: data, as: UTF8.self)
        }
        return full.flatMap { $0 }?.databaseValue ?? self
    }
}

/// Which SQLite storage classes a generated attribute type reads from, so that a value
/// written by raw SQL or another program is read exactly or refused, never converted.
@usableFromInline
enum StrataStorage {
    @inlinable
    static func accepts<Value>(_ type: Value.Type, _ dbValue: DatabaseValue) -> Bool {
        switch dbValue.storage {
        case .null:
            return true   // `fromDatabaseValue` refuses NULL for a non-optional type.
        case .int64(let value):
            // Metatype comparisons first: the optimizer folds them for a known type, where
            // a conformance check could cost a runtime lookup for every value read.
            if type == Bool.self { return value == 0 || value == 1 }
            if type == Int.self || type == Int64.self || type == Int32.self || type == Int16.self
                || type == Double.self || type == Float.self || type == Decimal.self
            {
                return true
            }
            return type is any StrataIntegerStored.Type || type is any BinaryInteger.Type
                || type is any BinaryFloatingPoint.Type
        case .double(let value):
            // A finite real too large for a Float would read as infinity.
            if type == Float.self { return Float(value).isFinite || !value.isFinite }
            if type == Double.self || type == Decimal.self { return true }
            return type is any BinaryFloatingPoint.Type
        case .string(let text):
            // Text is refused by the other numeric types themselves. A decimal must be a
            // whole decimal number ("12abc" would parse as 12); data is stored as blobs.
            if type == Decimal.self { return isDecimalNumber(text) }
            return type != Data.self
        case .blob:
            return type == Data.self || type == UUID.self
        }
    }
}

extension StrataStorage {
    /// Whether `text` is a plain decimal number: an optional sign, digits with an optional
    /// fraction, and an optional exponent.
    @usableFromInline
    static func isDecimalNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var count = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            count += digits()
        }
        guard count > 0 else { return false }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}

/// A type stored as an SQLite integer (entity identifiers).
public protocol StrataIntegerStored {}

extension EntityID: StrataIntegerStored {}

/// A value that SQLite cannot store exactly, refused when it is written.
///
/// SQLite reads and writes text as C strings, so a `String` with a NUL character would be
/// stored cut at the NUL; it has no NaN, so a NaN `Double` or `Float` would be stored as
/// NULL; a `Date` is stored as text with a four-digit year and no era, so a date outside the
/// years 0001 to 9999 would not read back. Rather than store another value than the one given, every write of a generated
/// entity (``Store``'s typed writes and GRDB's own `insert`, `update`, `save`, `upsert`)
/// refuses such a value with this error, before anything is written.
///
/// ```swift
/// do {
///     try store.insert(Note(title: "a\u{0}b", updatedAt: .now))
/// } catch let error as InvalidValueError {
///     print(error)   // cannot store Note.title: the text contains a NUL character, which SQLite would cut
/// }
/// ```
public struct InvalidValueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why a value cannot be stored.
    public enum Reason: Hashable, Sendable {
        /// Text with a NUL (`"\u{0}"`) character.
        case nulCharacter
        /// A floating-point NaN.
        case notANumber
        /// A date outside the years 0001 to 9999 (UTC), once rounded to the millisecond: a
        /// date is stored as `yyyy-MM-dd HH:mm:ss.SSS` text, which has four digits for the
        /// year and no era, so a later date could not be read back and an earlier one would
        /// read back as another date.
        case dateOutOfRange
        /// A value of a `Codable` attribute that its type could not encode as JSON (a
        /// non-finite floating-point number inside it, or the type's own `encode(to:)` threw);
        /// the encoder's explanation.
        case notEncodable(String)
    }

    /// The entity of the value.
    public var entity: String
    /// The attribute whose value cannot be stored.
    public var attribute: String
    /// Why.
    public var reason: Reason

    /// An error for `attribute` of `entity`.
    public init(entity: String, attribute: String, reason: Reason) {
        self.entity = entity
        self.attribute = attribute
        self.reason = reason
    }

    /// A readable message that names the attribute and the reason.
    public var description: String {
        switch reason {
        case .nulCharacter:
            "cannot store \(entity).\(attribute): the text contains a NUL character, which SQLite would cut"
        case .notANumber:
            "cannot store \(entity).\(attribute): NaN has no SQLite representation (it would be stored as NULL)"
        case .dateOutOfRange:
            "cannot store \(entity).\(attribute): dates are stored from 0001-01-01 to 9999-12-31 (UTC), to the millisecond"
        case .notEncodable(let explanation):
            "cannot store \(entity).\(attribute): the value cannot be encoded as JSON: \(explanation)"
        }
    }

    /// `value`, or this error when SQLite cannot store it exactly. Generated code calls it
    /// for text and floating-point attributes (and ``checkedDate(_:_:of:)`` for dates).
    @inlinable
    public static func checked<Value: DatabaseValueConvertible>(
        _ value: Value, _ attribute: String, of entity: String
    ) throws -> Value {
        switch value.databaseValue.storage {
        case .string(let text) where text.utf8.contains(0):
            throw InvalidValueError(entity: entity, attribute: attribute, reason: .nulCharacter)
        case .double(let number) where number.isNaN:
            throw InvalidValueError(entity: entity, attribute: attribute, reason: .notANumber)
        default:
            return value
        }
    }

    /// `date` (nil or not), or this error when it is outside the years 0001 to 9999 once
    /// stored (see ``Reason/dateOutOfRange``). Generated code calls it for date attributes.
    @inlinable
    public static func checkedDate(_ date: Date?, _ attribute: String, of entity: String) throws -> Date? {
        guard let date else { return nil }
        guard StoredDate.isStorable(date) else {
            throw InvalidValueError(entity: entity, attribute: attribute, reason: .dateOutOfRange)
        }
        return date
    }
}

/// The dates a store can hold: GRDB stores a date as `yyyy-MM-dd HH:mm:ss.SSS` text in UTC,
/// rounded to the millisecond, with four digits for the year and no era.
public enum StoredDate {
    private static let parsed = LockedValue<[String: Date]>([:])

    /// The date that the stored text `text` reads as, exactly as a fetch reads it (the
    /// same `Double`, which for a date with milliseconds may differ in its last bit from
    /// `Date(timeIntervalSince1970: milliseconds / 1000)`). Generated code calls it for fixed
    /// date defaults with milliseconds, so that the initializer's default equals the value
    /// a row with the column's default reads back. Traps on text that is not a date.
    public static func parse(_ text: String) -> Date {
        if let date = parsed.withLock({ $0[text] }) { return date }
        guard let date = Date.fromDatabaseValue(text.databaseValue) else { preconditionFailure("not a stored date: \(text)") }
        parsed.withLock { $0[text] = date }
        return date
    }

    /// 0001-01-01 00:00:00 UTC, as the stored text reads it (the calendar of the text is
    /// Julian before 1582, so this is `Date.distantPast`).
    @usableFromInline static let first: Double = -62_135_769_600
    /// 10000-01-01 00:00:00 UTC.
    @usableFromInline static let end: Double = 253_402_300_800

    /// Whether `date`, once stored, reads back as itself (to the millisecond). Dates well
    /// inside the range are accepted at once; near an end, the stored text decides, as
    /// rounding to the millisecond may carry into the next year.
    @usableFromInline
    static func isStorable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        if seconds > first + 1 && seconds < end - 1 { return true }
        guard seconds.isFinite, seconds > first - 1, seconds < end + 1 else { return false }
        // A year of four digits (not 10000), that reads back as the same instant (not a
        // year before 0001, whose era the text drops).
        guard case .string(let text) = date.databaseValue.storage,
              text.prefix(while: { $0 != "-" }).count == 4,
              let read = Date.fromDatabaseValue(text.databaseValue)
        else { return false }
        return abs(read.timeIntervalSince1970 - seconds) <= 0.0005 + 1e-6
    }
}
