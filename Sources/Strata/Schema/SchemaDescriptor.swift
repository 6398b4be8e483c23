import GRDB

/// The storage layout of a model: what the generator emits and the store creates and
/// migrates. Generated code holds one as `<ModelName>.schema`.
public struct SchemaDescriptor: Hashable, Sendable {
    /// The model's name; also the default store file name.
    public var name: String
    /// The entities, each stored in its own table.
    public var entities: [EntityDescriptor]

    /// A model named `name` with `entities`.
    public init(name: String, entities: [EntityDescriptor]) {
        self.name = name
        self.entities = entities
    }

    /// The entity called `name`, if any.
    public func entity(named name: String) -> EntityDescriptor? { entities.first { $0.name == name } }

    /// `relationships` followed by the primary key of the entity they lead to from `entity`
    /// (`["notebook", "id"]`); the path unchanged but for `"id"` when a name is unknown, so
    /// that the query builder reports it.
    func keyPath(through relationships: [String], from entity: String) -> [String] {
        var current = self.entity(named: entity)
        for name in relationships {
            current = current?.relationship(named: name).flatMap { self.entity(named: $0.destination) }
        }
        return relationships + [current?.primaryKey ?? "id"]
    }
}

/// One entity: one table named after it, with an `INTEGER PRIMARY KEY` column named
/// ``primaryKey`` (`id` unless the model names it with `primaryKey:`).
public struct EntityDescriptor: Hashable, Sendable {
    /// The entity name, which is also its table name.
    public var name: String
    /// The name of the primary key: the table's `INTEGER PRIMARY KEY` column (SQLite's rowid)
    /// and the struct's property that holds the object's ``EntityID``. `"id"` unless the
    /// model sets `primaryKey:`.
    public var primaryKey: String
    /// The attributes, one column each, in declaration order.
    public var attributes: [AttributeDescriptor]
    /// The relationships, with where each is stored.
    public var relationships: [RelationshipDescriptor]
    /// Unique constraints, each over column names.
    public var uniques: [[String]]
    /// Indexes, each over column names (`["a", "b"]`), possibly named and with descending
    /// columns.
    public var indexes: [IndexDescriptor]
    /// The entity's previous name, so that a migration renames its table instead of replacing it.
    public var renamedFrom: String?
    /// Which signed-in users may read and write the objects (the model's `access:`); nil
    /// when the model declares no per-user data.
    public var access: AccessDescriptor?

    /// An entity; see the properties for each part.
    public init(
        name: String, attributes: [AttributeDescriptor], relationships: [RelationshipDescriptor] = [],
        uniques: [[String]] = [], indexes: [IndexDescriptor] = [], renamedFrom: String? = nil,
        primaryKey: String = "id", access: AccessDescriptor? = nil
    ) {
        self.access = access
        self.name = name
        self.primaryKey = primaryKey
        self.attributes = attributes
        self.relationships = relationships
        self.uniques = uniques
        self.indexes = indexes
        self.renamedFrom = renamedFrom
    }

    /// The attribute called `name`, if any.
    public func attribute(named name: String) -> AttributeDescriptor? { attributes.first { $0.name == name } }
    /// The relationship called `name`, if any.
    public func relationship(named name: String) -> RelationshipDescriptor? {
        relationships.first { $0.name == name }
    }

    /// The join table of `relationship` when it is a many-to-many that is its own inverse
    /// (`Person.friends` ↔ `Person.friends`): a symmetric relationship, whose links are join
    /// rows stored in either order, so a person's destinations are the people on the other
    /// side of every row that names the person in either column.
    func symmetricJoinTable(_ relationship: RelationshipDescriptor) -> (name: String, column: String, inverseColumn: String)? {
        guard relationship.isToMany, relationship.destination == name, relationship.inverse == relationship.name,
              case .joinTable(let table, let column, let inverseColumn) = relationship.storage
        else { return nil }
        return (table, column, inverseColumn)
    }
}

/// An index of an entity's table: its columns in order, each ascending or descending, and
/// the SQLite name it was given, if any (otherwise the store names it
/// `strata_index_<table>_<columns>`).
///
/// ```swift
/// let plain: IndexDescriptor = ["notebookID", "updatedAt"]
/// let recent = IndexDescriptor(["notebookID", .descending("updatedAt")], name: "recentNotes")
/// ```
public struct IndexDescriptor: Hashable, Sendable, ExpressibleByArrayLiteral {
    /// The columns, in order.
    public var columns: [IndexColumn]
    /// The SQLite index name chosen in the model; nil for the store's own name.
    public var name: String?

    /// An index over `columns`, named `name` if given.
    public init(_ columns: [IndexColumn], name: String? = nil) {
        self.columns = columns
        self.name = name
    }

    /// An unnamed index over ascending columns.
    public init(arrayLiteral columns: IndexColumn...) {
        self.init(columns)
    }

    /// The column names, in order.
    public var columnNames: [String] { columns.map(\.name) }
}

/// One column of an ``IndexDescriptor``: a name, ascending unless ``isDescending``.
public struct IndexColumn: Hashable, Sendable, ExpressibleByStringLiteral {
    /// The column name.
    public var name: String
    /// True for a column indexed in descending order (`DESC`).
    public var isDescending: Bool

    /// A column, ascending unless `isDescending`.
    public init(_ name: String, isDescending: Bool = false) {
        self.name = name
        self.isDescending = isDescending
    }

    /// An ascending column: `"updatedAt"`.
    public init(stringLiteral name: String) {
        self.init(name)
    }

    /// A descending column: `.descending("updatedAt")`.
    public static func descending(_ name: String) -> IndexColumn {
        IndexColumn(name, isDescending: true)
    }
}

/// The type of an attribute, which decides its SQLite storage and its ordering.
public enum ValueType: Hashable, Sendable {
    /// Scalar types (`String`, `Int`, `Int32`, `Int16`, `Double`, `Float`, `Bool`, `Date`, `UUID`,
    /// `Data`, `Decimal`, `URL`), stored as GRDB stores them.
    case string, int, int32, int16, double, float, bool, date, uuid, data, decimal, url
    /// A `String`-backed enum; its cases in declaration order.
    case enumeration(name: String, cases: [String])
    /// A value of one of the app's `Codable` types (`Codable<T>` in the model), stored as JSON
    /// text (see ``StoredJSON``). The Swift type is not part of the storage: renaming it is
    /// not a migration.
    case json
}

/// A column default.
public enum DefaultValueDescriptor: Hashable, Sendable {
    /// A constant.
    case value(DatabaseValue)
    /// The current date, for `Date` attributes.
    case now
    /// A new random UUID, for `UUID` attributes.
    case uuid
}

/// One attribute: one column named after it.
public struct AttributeDescriptor: Hashable, Sendable {
    /// The attribute name, which is also its column name.
    public var name: String
    /// The value type, which decides the column's storage.
    public var type: ValueType
    /// True when the column accepts NULL.
    public var isOptional: Bool
    /// The column default, if any.
    public var defaultValue: DefaultValueDescriptor?
    /// True when the column has its own index.
    public var isIndexed: Bool
    /// True when no two rows may hold the same value (a unique index).
    public var isUnique: Bool
    /// The attribute's previous name, so that a migration renames its column instead of replacing
    /// it.
    public var renamedFrom: String?
    /// The rules every value must keep (bounds, lengths, a pattern); see ``ValueRules``.
    public var rules: ValueRules

    /// An attribute; see the properties for each part.
    public init(
        name: String, type: ValueType, isOptional: Bool = false, defaultValue: DefaultValueDescriptor? = nil,
        isIndexed: Bool = false, isUnique: Bool = false, renamedFrom: String? = nil, rules: ValueRules = ValueRules()
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
        self.isUnique = isUnique
        self.renamedFrom = renamedFrom
        self.rules = rules
    }
}

/// The rules an attribute's values keep (`min`, `max`, `minLength`, `maxLength`, `pattern`
/// in the model). NULL passes every rule.
///
/// The store enforces them on every write through its connections: bounds and lengths by
/// triggers stored in the file (so other programs writing the file keep them too), the
/// pattern by a trigger of the store's writer connection only, which calls Swift's `Regex`.
/// A write that breaks one fails with ``RuleViolationError``.
public struct ValueRules: Hashable, Sendable {
    /// The smallest value allowed: an integer, a real, or for dates the stored text
    /// (`yyyy-MM-dd HH:mm:ss.SSS`, UTC).
    public var minimum: DatabaseValue?
    /// The largest value allowed, stored like ``minimum``.
    public var maximum: DatabaseValue?
    /// The fewest Unicode code points a string may have (SQLite's `length()`).
    public var minLength: Int?
    /// The most Unicode code points a string may have (SQLite's `length()`).
    public var maxLength: Int?
    /// A regular expression (Swift `Regex` syntax) that the whole string must match.
    public var pattern: String?

    /// Rules; none unless given.
    public init(
        minimum: DatabaseValue? = nil, maximum: DatabaseValue? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil
    ) {
        self.minimum = minimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
    }

    /// True when there is no rule.
    public var isEmpty: Bool { self == ValueRules() }
}

/// Core Data's delete rules. The rule on relationship R of entity A says what happens to
/// R's destination objects when an A is deleted.
public enum DeleteRule: String, Hashable, Sendable, CaseIterable {
    /// Remove the reference: a to-one pointing back at the deleted object becomes nil.
    case nullify
    /// Delete the destination objects too.
    case cascade
    /// Refuse the delete while the relationship is not empty: ``DeleteDeniedError``.
    case deny
    /// Do nothing: references to the deleted object are left dangling.
    case noAction
}

/// Where a relationship is stored.
public enum RelationshipStorage: Hashable, Sendable {
    /// This entity's table holds the foreign key column (a to-one relationship).
    case foreignKey(column: String)
    /// The destination's table holds the foreign key to this entity (the to-many side of a
    /// one-to-many, or the non-owning side of a one-to-one).
    case inverseForeignKey
    /// A many-to-many join table; `column` references this entity, `inverseColumn` the destination.
    case joinTable(name: String, column: String, inverseColumn: String)
}

/// One relationship of an entity, and where it is stored.
public struct RelationshipDescriptor: Hashable, Sendable {
    /// The relationship name.
    public var name: String
    /// The name of the destination entity.
    public var destination: String
    /// The name of the inverse relationship on the destination.
    public var inverse: String
    /// True for a to-many relationship.
    public var isToMany: Bool
    /// A to-one that must not be nil.
    public var isRequired: Bool
    /// What happens to the destination objects when an object of this entity is deleted.
    public var deleteRule: DeleteRule
    /// The foreign key or join table that stores the relationship.
    public var storage: RelationshipStorage
    /// The relationship's previous name, so that a migration keeps its storage.
    public var renamedFrom: String?
    /// True for a to-many relationship whose destinations are in an order of their own
    /// (`ordered: true`): each destination's place is stored in the destination's table,
    /// in the ``positionColumn`` of the inverse to-one.
    public var isOrdered: Bool
    /// For a to-one stored as a foreign key whose inverse is ordered: the column of this
    /// entity's table that holds the object's place among its siblings (`listPosition`).
    public var positionColumn: String?
    /// For an ordered to-many: the order its destinations take when a migration makes the
    /// relationship ordered (sort keys of the destination; the id breaks ties). A migration
    /// hint, like ``renamedFrom``: not part of the stored model.
    public var initialOrder: [SortNode]
    /// For a to-many: the fewest destinations each object must have when a transaction
    /// commits (checked at commit, ``RuleViolationError``).
    public var minCount: Int?
    /// For a to-many: the most destinations each object may have when a transaction commits.
    public var maxCount: Int?

    /// A relationship; see the properties for each part.
    public init(
        name: String, destination: String, inverse: String, isToMany: Bool, isRequired: Bool = false,
        deleteRule: DeleteRule = .nullify, storage: RelationshipStorage, renamedFrom: String? = nil,
        isOrdered: Bool = false, positionColumn: String? = nil, initialOrder: [SortNode] = [],
        minCount: Int? = nil, maxCount: Int? = nil
    ) {
        self.minCount = minCount
        self.maxCount = maxCount
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isRequired = isRequired
        self.deleteRule = deleteRule
        self.storage = storage
        self.renamedFrom = renamedFrom
        self.isOrdered = isOrdered
        self.positionColumn = positionColumn
        self.initialOrder = initialOrder
    }
}
