import Foundation
import GRDB
import GRDBSQLite

/// The stored columns of one row, as a generated entity's `init(strataColumns:)` reads them.
///
/// Generated code reads each column by its position in the entity's
/// `strataColumnNames` and by its name:
///
/// - from a GRDB `Row` (``init(row:)``, what `init(row:)` passes), by name, as
///   `Row.strataValue(_:of:as:)` does;
/// - from a statement that selected exactly those columns in that order (Strata's results
///   fetches), by position, straight from SQLite: no column-name lookup, no `Row` value,
///   text read in full with its stored length.
///
/// Either way the same values are accepted and the same ``ValueDecodingError`` is thrown
/// (a column missing from the table fails the statement itself when read by position).
public struct EntityColumns {
    @usableFromInline
    enum Source {
        case row(Row)
        case statement(SQLiteStatement, offset: Int32)
    }

    @usableFromInline
    let source: Source

    /// The columns of `row`, found by name.
    @inlinable
    public init(row: Row) {
        source = .row(row)
    }

    /// The current row of `statement`, whose columns from `offset` on are the entity's
    /// `strataColumnNames` in order.
    init(statement: SQLiteStatement, offset: Int32 = 0) {
        source = .statement(statement, offset: offset)
    }

    /// The row, when the columns come from one (a hand-written entity's default
    /// `init(strataColumns:)` decodes it with `init(row:)`).
    public var row: Row? {
        if case .row(let row) = source { return row }
        return nil
    }

    /// The value of a required column: `position` in the entity's `strataColumnNames`,
    /// named `column`. See `Row.strataValue(_:of:as:)` for what is accepted.
    @inlinable
    public func value<Value: DatabaseValueConvertible>(
        _ position: Int32, _ column: String, of entity: String, as type: Value.Type = Value.self
    ) throws -> Value {
        switch source {
        case .row(let row):
            return try row.strataValue(column, of: entity)
        case .statement(let statement, let offset):
            // A date's text is read from its bytes (the same Date as GRDB's, faster).
            if Value.self == Date.self, let date = Self.storedDate(statement, offset + position) { return date as! Value }
            let dbValue = Self.storedValue(statement, offset + position)
            if StrataStorage.accepts(Value.self, dbValue), let value = Value.fromDatabaseValue(dbValue) { return value }
            throw Self.decodingError(statement, offset: offset, column, dbValue, of: entity, expected: Value.self)
        }
    }

    /// The value of an optional column: nil for NULL, else as ``value(_:_:of:as:)``.
    @inlinable
    public func optionalValue<Wrapped: DatabaseValueConvertible>(
        _ position: Int32, _ column: String, of entity: String, as type: Wrapped.Type = Wrapped.self
    ) throws -> Wrapped? {
        switch source {
        case .row(let row):
            return try row.strataOptionalValue(column, of: entity)
        case .statement(let statement, let offset):
            if Wrapped.self == Date.self, let date = Self.storedDate(statement, offset + position) { return (date as! Wrapped) }
            let dbValue = Self.storedValue(statement, offset + position)
            if dbValue.isNull { return nil }
            if StrataStorage.accepts(Wrapped.self, dbValue), let value = Wrapped.fromDatabaseValue(dbValue) { return value }
            throw Self.decodingError(statement, offset: offset, column, dbValue, of: entity, expected: Wrapped.self)
        }
    }

    /// The value of a required `Codable` attribute stored as JSON text (see
    /// `Row.strataJSONValue(_:of:as:)`).
    public func jsonValue<Value: Decodable>(
        _ position: Int32, _ column: String, of entity: String, as type: Value.Type = Value.self
    ) throws -> Value {
        switch source {
        case .row(let row):
            return try row.strataJSONValue(column, of: entity)
        case .statement(let statement, let offset):
            let dbValue = Self.storedValue(statement, offset + position)
            return try StoredJSON.decode(dbValue) {
                Self.decodingError(statement, offset: offset, column, dbValue, of: entity, expected: Value.self)
            }
        }
    }

    /// The value of an optional `Codable` attribute: nil for NULL, else as
    /// ``jsonValue(_:_:of:as:)``.
    public func optionalJSONValue<Wrapped: Decodable>(
        _ position: Int32, _ column: String, of entity: String, as type: Wrapped.Type = Wrapped.self
    ) throws -> Wrapped? {
        switch source {
        case .row(let row):
            return try row.strataOptionalJSONValue(column, of: entity)
        case .statement(let statement, let offset):
            let dbValue = Self.storedValue(statement, offset + position)
            if dbValue.isNull { return nil }
            return try StoredJSON.decode(dbValue) {
                Self.decodingError(statement, offset: offset, column, dbValue, of: entity, expected: Wrapped.self)
            }
        }
    }

    /// The date whose text column `index` holds in the form GRDB stores dates in (see
    /// ``StoredDateText``), or nil for any other value, left to `Date.fromDatabaseValue(_:)`.
    @usableFromInline
    static func storedDate(_ statement: SQLiteStatement, _ index: Int32) -> Date? {
        guard sqlite3_column_type(statement, index) == SQLITE_TEXT, let bytes = sqlite3_column_text(statement, index)
        else { return nil }
        return StoredDateText.date(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))))
    }

    /// The value stored at `index` of the statement's current row, text read in full (past a
    /// NUL character, with its stored length).
    @usableFromInline
    static func storedValue(_ statement: SQLiteStatement, _ index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            return sqlite3_column_int64(statement, index).databaseValue
        case SQLITE_FLOAT:
            return sqlite3_column_double(statement, index).databaseValue
        case SQLITE_TEXT:
            let bytes = sqlite3_column_text(statement, index)
            let count = Int(sqlite3_column_bytes(statement, index))
            guard let bytes, count > 0 else { return "".databaseValue }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self).databaseValue
        default:
            return DatabaseValue(sqliteStatement: statement, index: index)
        }
    }

    @usableFromInline
    static func decodingError(
        _ statement: SQLiteStatement, offset: Int32, _ column: String, _ value: DatabaseValue, of entity: String,
        expected: Any.Type
    ) -> ValueDecodingError {
        let key = SchemaRegistry.primaryKey(ofEntity: entity)
        var id: Int64?
        for index in offset..<sqlite3_column_count(statement)
        where String(cString: sqlite3_column_name(statement, index)) == key {
            id = Int64.fromDatabaseValue(storedValue(statement, index))
            break
        }
        return ValueDecodingError(
            entity: entity, id: id, column: column, storedValue: value, expectedType: String(describing: expected))
    }
}
