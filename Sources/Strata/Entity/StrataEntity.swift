import GRDB

/// A value type generated from an entity of a model.
///
/// Generated structs conform to this protocol and to GRDB's record protocols, so both
/// Strata's store and GRDB's own query interface can read and write them.
///
/// Every object has an ``EntityID`` in the property that the model names its primary key:
/// `id` unless the entity or its file sets `primaryKey:`. The runtime reads it as
/// ``objectID`` whatever its name. An entity whose key is `id` is also `Identifiable`
/// through it; an entity that keeps `id` for an attribute of its own (`primaryKey: objectID`
/// and a server's `id: String`) is not, and SwiftUI lists name the key
/// (`ForEach(items, id: \.objectID)`).
public protocol StrataEntity: ResultsItem, Codable, FetchableRecord, MutablePersistableRecord, TableRecord
where ID == EntityID<Self> {
    /// The entity's description in the model's ``SchemaDescriptor``.
    static var entityDescriptor: EntityDescriptor { get }

    /// The model the entity belongs to, whose relationships typed predicates, sort keys and
    /// fetch requests follow (`Ticket.repo.name`). Generated entities return their model's
    /// `schema`; the default finds a schema of an open store that has exactly this entity.
    static var schemaDescriptor: SchemaDescriptor { get }

    /// The row's identifier, whatever the model names its primary key; ``EntityID/unsaved``
    /// until inserted. For an entity whose key is `id`, the same value as `id`.
    var objectID: ID { get set }

    /// The stored columns that ``init(strataColumns:)`` reads, in the order of their
    /// positions, the primary key first; empty when it reads by name only (the default, for
    /// entities written by hand). Results fetches select exactly these columns, so that
    /// generated entities are decoded by position, straight from SQLite. An entity that
    /// lists columns must also implement ``init(strataColumns:)`` (the default reads rows
    /// only, and stops the program when given a statement's columns).
    static var strataColumnNames: [String] { get }

    /// Decodes an object from its stored columns (see ``EntityColumns``). Generated
    /// entities read each column by position and name; the default decodes the row with
    /// `init(row:)`.
    init(strataColumns columns: EntityColumns) throws

    /// Reads the stored column at `position` of ``strataColumnNames`` into this value and
    /// leaves the others as they are: a refetch that answers a commit reads again only the
    /// columns the commit wrote into the value it held. Generated entities read that one
    /// column (position 0, the key, and any other position decode every column); the default
    /// decodes every column.
    mutating func strataRead(_ columns: EntityColumns, at position: Int32) throws
}

extension StrataEntity {
    public static var strataColumnNames: [String] { [] }

    public mutating func strataRead(_ columns: EntityColumns, at position: Int32) throws {
        self = try Self(strataColumns: columns)
    }

    public init(strataColumns columns: EntityColumns) throws {
        guard let row = columns.row else {
            preconditionFailure("\(Self.self) has no strataColumnNames: it is decoded from rows only")
        }
        try self.init(row: row)
    }
}

extension StrataEntity {
    /// A schema of a store opened in this process that has exactly ``entityDescriptor``,
    /// for entities written by hand; generated entities name their model instead.
    public static var schemaDescriptor: SchemaDescriptor { SchemaRegistry.schema(of: entityDescriptor) }

    /// The entity's name, which is also its table's name.
    public static var entityName: String { entityDescriptor.name }

    /// The name of the entity's primary key column (and of the property that holds it).
    static var primaryKeyName: String { entityDescriptor.primaryKey }
}
