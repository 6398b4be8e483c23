import GRDB

/// The typed identifier of an entity: the SQLite rowid of its row.
///
/// Generated entities declare `typealias ID = EntityID<Self>`, so a `Note.ID` can never be
/// passed where a `Notebook.ID` is expected. A value created in memory and not yet
/// inserted has the identifier ``unsaved``; inserting it assigns the rowid.
public struct EntityID<Entity>: Hashable, Comparable, Sendable, Codable, RawRepresentable,
    CustomStringConvertible, DatabaseValueConvertible
{
    public var rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// The identifier of a value that has not been inserted yet (rowid 0, which SQLite never assigns).
    public static var unsaved: EntityID { EntityID(rawValue: 0) }

    /// True unless this is ``unsaved``.
    public var isSaved: Bool { rawValue != 0 }

    public static func < (lhs: EntityID, rhs: EntityID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> EntityID? {
        Int64.fromDatabaseValue(dbValue).map(EntityID.init(rawValue:))
    }
}
