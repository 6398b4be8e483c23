import GRDB

/// A value type generated from an entity of a model.
///
/// Generated structs conform to this protocol and to GRDB's record protocols, so both
/// Strata's store and GRDB's own query interface can read and write them.
public protocol StrataEntity: Sendable, Hashable, Codable, Identifiable, FetchableRecord,
    MutablePersistableRecord, TableRecord where ID == EntityID<Self>
{
    /// The entity's description in the model's ``SchemaDescriptor``.
    static var entityDescriptor: EntityDescriptor { get }

    /// The row's identifier; ``EntityID/unsaved`` until inserted.
    var id: ID { get set }
}

extension StrataEntity {
    /// The entity's name, which is also its table's name.
    public static var entityName: String { entityDescriptor.name }
}
