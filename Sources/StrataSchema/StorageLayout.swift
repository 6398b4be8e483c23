/// Where each relationship of a schema is stored. The rules, which the runtime relies on
/// through the generated ``SchemaDescriptor``:
///
/// - A to-one whose inverse is to-many (one-to-many) stores a foreign key column
///   `<relationship>ID` (or the name given by `foreignKey:`) in its entity's table; the to-many side is `.inverseForeignKey`.
/// - A one-to-one stores the foreign key on one side only: the side marked `required`
///   (when exactly one is), else the side whose `(entity, relationship)` pair is
///   lexicographically smaller. The other side is `.inverseForeignKey` and has no stored
///   property. A to-one that is its own inverse stores the foreign key.
/// - A many-to-many uses a join table named `<Entity>_<relationship>` after the
///   lexicographically smaller `(entity, relationship)` pair. Its columns are
///   `<lowerFirst(Entity)>ID` for each side (`noteID`, `tagID`). When both sides are the same
///   entity, the column that references the objects of relationship `r` is `<r>ID`, so
///   `column` (this object) is `<inverse>ID` and `inverseColumn` is `<relationship>ID`;
///   a self many-to-many that is its own inverse uses `<lowerFirst(Entity)>ID` and
///   `<relationship>ID`. Both sides' descriptors name the same table and columns.
///
/// - A to-one whose inverse is ordered (`ordered: true`) also stores `<relationship>Position`,
///   the object's place among its siblings.
///
/// The validator checks the names this layout produces (table and column clashes, SQLite's
/// reserved names); the generator writes them into the schema descriptor.
public struct StorageLayout: Sendable {
    /// Where one relationship is stored.
    public enum Storage: Hashable, Sendable {
        /// A foreign key column in the relationship's own entity's table.
        case foreignKey(column: String)
        /// Nothing in this entity's table: the inverse's foreign key holds the link.
        case inverseForeignKey
        /// A join table with one column for each side (`column` references this entity).
        case joinTable(name: String, column: String, inverseColumn: String)
    }

    private var storages: [String: Storage] = [:]
    private var positions: [String: String] = [:]

    /// The storage of every relationship of `schema`.
    public init(schema: Schema) {
        for entity in schema.entities {
            for relationship in entity.relationships {
                let storage = Self.storage(of: relationship, in: entity, schema: schema)
                storages[Self.key(entity.name, relationship.name)] = storage
                if case .foreignKey = storage,
                   schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse)?.isOrdered == true
                {
                    positions[Self.key(entity.name, relationship.name)] = relationship.name + "Position"
                }
            }
        }
    }

    /// The position column of a to-one stored as a foreign key whose inverse is an ordered
    /// to-many (`listPosition` for `Task.list` when `TaskList.tasks` is `ordered: true`):
    /// the child's place among its siblings.
    public func positionColumn(of relationship: Relationship, in entity: Entity) -> String? {
        positions[Self.key(entity.name, relationship.name)]
    }

    /// Where `relationship` of `entity` is stored.
    public func storage(of relationship: Relationship, in entity: Entity) -> Storage {
        storages[Self.key(entity.name, relationship.name)] ?? .inverseForeignKey
    }

    /// The foreign key column of a to-one relationship stored in its entity's table.
    public func foreignKeyColumn(of relationship: Relationship, in entity: Entity) -> String? {
        if case .foreignKey(let column) = storage(of: relationship, in: entity) { return column }
        return nil
    }

    /// `name` with its first character lowercased: `Note` → `note`.
    static func lowerFirst(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.lowercased() + name.dropFirst()
    }

    /// The key column of a to-one that stores its key: `foreignKey:` or `<relationship>ID`.
    public static func keyColumn(of relationship: Relationship) -> String {
        relationship.foreignKey ?? relationship.name + "ID"
    }

    private static func key(_ entity: String, _ relationship: String) -> String { entity + "\u{0}" + relationship }

    private static func isSmaller(_ a: (String, String), than b: (String, String)) -> Bool {
        a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
    }

    private static func storage(of relationship: Relationship, in entity: Entity, schema: Schema) -> Storage {
        let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse)
        let isSelfInverse = relationship.destination == entity.name && relationship.inverse == relationship.name
        let mine = (entity.name, relationship.name)
        let theirs = (relationship.destination, relationship.inverse)
        switch (relationship.isToMany, inverse?.isToMany ?? false) {
        case (false, true):
            return .foreignKey(column: keyColumn(of: relationship))
        case (true, false):
            return .inverseForeignKey
        case (false, false):
            if isSelfInverse || inverse == nil { return .foreignKey(column: keyColumn(of: relationship)) }
            let owns: Bool
            if relationship.isRequired != inverse!.isRequired {
                owns = relationship.isRequired
            } else {
                owns = isSmaller(mine, than: theirs)
            }
            return owns ? .foreignKey(column: keyColumn(of: relationship)) : .inverseForeignKey
        case (true, true):
            let owner = isSmaller(mine, than: theirs) || isSelfInverse ? mine : theirs
            let table = owner.0 + "_" + owner.1
            if isSelfInverse {
                return .joinTable(
                    name: table, column: lowerFirst(entity.name) + "ID",
                    inverseColumn: relationship.name + "ID")
            }
            if relationship.destination == entity.name {
                return .joinTable(
                    name: table, column: relationship.inverse + "ID", inverseColumn: relationship.name + "ID")
            }
            return .joinTable(
                name: table, column: lowerFirst(entity.name) + "ID",
                inverseColumn: lowerFirst(relationship.destination) + "ID")
        }
    }
}
