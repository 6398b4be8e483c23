import GRDB

/// The typed identifier of an entity: the SQLite rowid of its row.
///
/// Generated entities declare `typealias ID = EntityID<Self>`, so a `Note.ID` can never be
/// passed where a `Notebook.ID` is expected. A value created in memory and not yet
/// inserted has the identifier ``unsaved``; inserting it assigns the rowid.
public struct EntityID<Entity>: Hashable, Comparable, Sendable, Codable, RawRepresentable,
    CustomStringConvertible, DatabaseValueConvertible
{
    /// The rowid.
    public var rawValue: Int64

    /// The identifier of the row with this rowid.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    /// The identifier of the row with this rowid.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// The identifier of a value that has not been inserted yet (rowid 0, which SQLite never assigns).
    public static var unsaved: EntityID { EntityID(rawValue: 0) }

    /// True unless this is ``unsaved``.
    public var isSaved: Bool { rawValue != 0 }

    /// Ordered by rowid, as SQLite orders ids.
    public static func < (lhs: EntityID, rhs: EntityID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The rowid, in decimal.
    public var description: String { "\(rawValue)" }

    /// Decodes the rowid as a single integer.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the rowid as a single integer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The rowid, as an SQLite integer.
    @inlinable
    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    /// The identifier stored in `dbValue`; nil when it is not an integer.
    @inlinable
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> EntityID? {
        guard case .int64(let value) = dbValue.storage else { return nil }
        return EntityID(rawValue: value)
    }
}
