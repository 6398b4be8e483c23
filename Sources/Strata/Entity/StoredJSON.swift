import Foundation
import GRDB

/// How a `Codable<T>` attribute is stored: its value encoded as JSON text, the same text for
/// equal values.
///
/// The model names one of the app's own types (`style: Codable<Style>`); the generated
/// struct holds a `Style`, and the column holds its JSON. The encoding is deterministic:
/// `JSONEncoder` with sorted keys and unescaped slashes, dates as the encoder's default
/// (seconds since 2001), data as base64. So an unchanged value writes the same text, and a
/// change is seen as a change. Types whose encoding follows an iteration order (`Set`, a
/// `Dictionary` keyed by anything but `String` or `Int`) may encode equal values as
/// different text; prefer arrays and string keys in stored types.
///
/// Reading never traps and never substitutes a default: text that is not valid JSON, or
/// JSON the type cannot decode (another program wrote it, or the type changed), throws
/// ``ValueDecodingError`` naming the entity, row, attribute, the text found and what the
/// decoder said.
///
/// ```swift
/// do {
///     let shapes = try store.read { db in try db.fetchAll(Circle.self) }
/// } catch let error as ValueDecodingError {
///     print(error)   // cannot read Circle.style of the row with id 3: the stored text '{"fill":' is not a valid Style (…)
/// }
/// ```
public enum StoredJSON {
    /// The JSON text of `value`, or ``InvalidValueError`` (``InvalidValueError/Reason/notEncodable(_:)``)
    /// when it cannot be encoded. Generated code calls it in `encode(to:)`.
    public static func encode<Value: Encodable>(_ value: Value, _ attribute: String, of entity: String) throws
        -> String
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw InvalidValueError(entity: entity, attribute: attribute, reason: .notEncodable(explain(error)))
        }
    }

    /// The JSON text of an optional attribute's value; nil (stored as NULL) for nil.
    public static func encode<Value: Encodable>(_ value: Value?, _ attribute: String, of entity: String) throws
        -> String?
    {
        guard let value else { return nil }
        return try encode(value, attribute, of: entity) as String
    }

    /// `error` (a `DecodingError` or `EncodingError`) in one line: what was wrong, and where
    /// in the value (`at items.2.name`).
    static func explain(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            guard !codingPath.isEmpty else { return "" }
            return " at " + codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "no value for the key '\(key.stringValue)'\(path(context.codingPath))"
        case DecodingError.typeMismatch(let type, let context):
            return "expected \(type)\(path(context.codingPath)): \(context.debugDescription)"
        case DecodingError.valueNotFound(let type, let context):
            return "null where \(type) is expected\(path(context.codingPath))"
        case DecodingError.dataCorrupted(let context):
            return context.debugDescription + path(context.codingPath)
        case EncodingError.invalidValue(let value, let context):
            return "\(value)\(path(context.codingPath)): \(context.debugDescription)"
        default:
            return String(describing: error)
        }
    }
}

extension Row {
    /// The value of a required `Codable` attribute stored as JSON text in `column`, for a
    /// generated entity's `init(row:)`. Throws ``ValueDecodingError`` when the column is
    /// missing, NULL, not text, not valid JSON, or JSON that `Value` cannot decode.
    public func strataJSONValue<Value: Decodable>(
        _ column: String, of entity: String, as type: Value.Type = Value.self
    ) throws -> Value {
        try strataDecodeJSON(strataDatabaseValue(column), column, of: entity)
    }

    /// The value of an optional `Codable` attribute: nil for NULL, else as
    /// ``strataJSONValue(_:of:as:)``. A missing column throws; it never reads as nil.
    public func strataOptionalJSONValue<Wrapped: Decodable>(
        _ column: String, of entity: String, as type: Wrapped.Type = Wrapped.self
    ) throws -> Wrapped? {
        let dbValue = strataDatabaseValue(column)
        if dbValue?.isNull == true { return nil }
        return try strataDecodeJSON(dbValue, column, of: entity) as Wrapped
    }

    private func strataDecodeJSON<Value: Decodable>(_ dbValue: DatabaseValue?, _ column: String, of entity: String)
        throws -> Value
    {
        try StoredJSON.decode(dbValue) { strataDecodingError(column, of: entity, expected: Value.self) }
    }
}

extension StoredJSON {
    /// `dbValue` (nil: the column is missing) decoded as JSON text; `failure` makes the
    /// error of a value that is not text or not such JSON.
    static func decode<Value: Decodable>(_ dbValue: DatabaseValue?, failure: () -> ValueDecodingError) throws -> Value {
        guard let dbValue, case .string(let text) = dbValue.storage else { throw failure() }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            var error2 = failure()
            error2.detail = "JSON: " + StoredJSON.explain(error)
            throw error2
        }
    }
}
