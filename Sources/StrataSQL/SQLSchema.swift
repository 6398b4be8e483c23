/// A neutral description of the tables a sync server holds for a model: what a DDL renderer
/// (``PostgreSQLDDL``) needs, and nothing of the runtime nor of the model language.
///
/// StrataSync builds one from the runtime's `SchemaDescriptor`, the `strata sql` command
/// from the parsed model files; both then print the same statements.
public struct SQLSchema: Hashable, Sendable {
    /// One table per entity, in model order (the renderer orders them by their keys).
    public var tables: [SQLTable]
    /// The many-to-many join tables, each once, in model order.
    public var joinTables: [SQLJoinTable]
    /// The `minCount`/`maxCount` rules of the to-many relationships, in model order.
    public var countRules: [SQLCountRule]
    /// The model's name (its Swift namespace, `StrataModel` unless set), recorded with the
    /// ``fingerprint`` in the server's `strata_sync_meta`; nil records nothing.
    public var modelName: String?

    /// A description of `tables`, `joinTables` and `countRules`, of the model `modelName`.
    public init(tables: [SQLTable], joinTables: [SQLJoinTable], countRules: [SQLCountRule] = [], modelName: String? = nil) {
        self.tables = tables
        self.joinTables = joinTables
        self.countRules = countRules
        self.modelName = modelName
    }

    /// The table called `name`, if any.
    public func table(named name: String) -> SQLTable? { tables.first { $0.name == name } }

    /// Table names, each after the tables its references lead to (self-references and
    /// cycles aside): the order tables can be made and inserts applied in.
    public static func dependencyOrder(_ tables: [(name: String, references: [String])]) -> [String] {
        var order: [String] = []
        var state: [String: Int] = [:]  // 1: visiting, 2: done
        var references: [String: [String]] = [:]
        for table in tables where references[table.name] == nil { references[table.name] = table.references }
        func visit(_ name: String) {
            guard state[name] == nil, let destinations = references[name] else { return }
            state[name] = 1
            for destination in destinations where destination != name { visit(destination) }
            state[name] = 2
            order.append(name)
        }
        for table in tables { visit(table.name) }
        return order
    }

    /// ``tables``, each after the tables its references lead to.
    public var orderedTables: [SQLTable] {
        Self.dependencyOrder(tables.map { ($0.name, $0.references) }).compactMap(table(named:))
    }
}

/// The table of one entity: a `uuid` primary key and its columns.
public struct SQLTable: Hashable, Sendable {
    /// The table's name (the entity's).
    public var name: String
    /// The primary key column (`id` unless the model names it).
    public var primaryKey: String
    /// The other columns: attributes, then for each to-one its key (and its position column
    /// when its inverse is ordered).
    public var columns: [SQLColumn]
    /// Unique constraints over several columns (or one), as the model declares them.
    public var uniques: [[String]]
    /// Indexes the model declares, each over its columns in order.
    public var indexes: [[SQLIndexColumn]]

    /// A table; see the properties for each part.
    public init(
        name: String, primaryKey: String, columns: [SQLColumn], uniques: [[String]] = [], indexes: [[SQLIndexColumn]] = []
    ) {
        self.name = name
        self.primaryKey = primaryKey
        self.columns = columns
        self.uniques = uniques
        self.indexes = indexes
    }

    /// The column called `name`, if any.
    public func column(named name: String) -> SQLColumn? { columns.first { $0.name == name } }

    /// The tables the columns' references lead to, in column order.
    public var references: [String] { columns.compactMap { $0.reference?.table } }
}

/// One column of an index, ascending unless ``isDescending``.
public struct SQLIndexColumn: Hashable, Sendable {
    /// The column name.
    public var name: String
    /// True for `DESC`.
    public var isDescending: Bool

    /// A column of an index.
    public init(_ name: String, isDescending: Bool = false) {
        self.name = name
        self.isDescending = isDescending
    }
}

/// The type of a column's values, as the model names it.
public enum SQLValueType: Hashable, Sendable {
    case string, int, int32, int16, double, float, bool, date, uuid, data, decimal, url
    /// A `String`-backed enum: one of `cases`.
    case enumeration(cases: [String])
    /// A `Codable<T>` value, as JSON.
    case json
}

/// A column default.
public enum SQLDefault: Hashable, Sendable {
    /// The current date.
    case now
    /// A new random UUID.
    case uuid
    /// A constant, as wire text: the canonical text of the value (`1` or `0` for a `Bool`,
    /// `yyyy-MM-dd HH:mm:ss.SSS` in UTC for a `Date`, lowercase hexadecimal for `Data`).
    case value(String)
}

/// The rules of a column's values: bounds (as wire text, like ``SQLDefault/value(_:)``) and
/// string lengths in Unicode code points.
public struct SQLRules: Hashable, Sendable {
    public var minimum: String?
    public var maximum: String?
    public var minLength: Int?
    public var maxLength: Int?

    /// Rules; none unless given.
    public init(minimum: String? = nil, maximum: String? = nil, minLength: Int? = nil, maxLength: Int? = nil) {
        self.minimum = minimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
    }
}

/// The delete rule of the relationship that leads back to a key's table (its inverse), which
/// decides the foreign key's `ON DELETE`.
public enum SQLDeleteRule: String, Hashable, Sendable, CaseIterable {
    /// `ON DELETE SET NULL`.
    case nullify
    /// `ON DELETE CASCADE`.
    case cascade
    /// `ON DELETE RESTRICT`.
    case deny
    /// No foreign key: the reference may dangle.
    case noAction
}

/// A to-one's key column: the object of `table` it leads to.
public struct SQLReference: Hashable, Sendable {
    /// The destination table.
    public var table: String
    /// The destination's primary key column.
    public var key: String
    /// The inverse relationship's delete rule.
    public var deleteRule: SQLDeleteRule
    /// True for a one-to-one: the column holds each destination once.
    public var isOneToOne: Bool

    /// A reference; see the properties for each part.
    public init(table: String, key: String, deleteRule: SQLDeleteRule, isOneToOne: Bool) {
        self.table = table
        self.key = key
        self.deleteRule = deleteRule
        self.isOneToOne = isOneToOne
    }
}

/// One column of an entity's table.
public struct SQLColumn: Hashable, Sendable {
    /// The kind of column.
    public enum Kind: Hashable, Sendable {
        /// An attribute, with its default and rules; `isIndexed` and `isUnique` give it its
        /// own index or unique constraint.
        case value(SQLValueType, default: SQLDefault?, rules: SQLRules, isIndexed: Bool, isUnique: Bool)
        /// A to-one's key (a `uuid`).
        case reference(SQLReference)
        /// An object's place in an ordered to-many (an integer).
        case position
    }

    /// The column name.
    public var name: String
    /// What the column holds.
    public var kind: Kind
    /// True when the column accepts NULL.
    public var isOptional: Bool

    /// A column; see the properties for each part.
    public init(name: String, kind: Kind, isOptional: Bool) {
        self.name = name
        self.kind = kind
        self.isOptional = isOptional
    }

    /// The type of the column's values.
    public var valueType: SQLValueType {
        switch kind {
        case .value(let type, _, _, _, _): type
        case .reference: .uuid
        case .position: .int
        }
    }

    /// The reference, for a to-one's key.
    public var reference: SQLReference? {
        if case .reference(let reference) = kind { return reference }
        return nil
    }
}

/// A many-to-many join table: `column` holds objects of `table`, `inverseColumn` of
/// `destination`.
public struct SQLJoinTable: Hashable, Sendable {
    public var name: String
    public var table: String
    public var tableKey: String
    public var column: String
    public var destination: String
    public var destinationKey: String
    public var inverseColumn: String

    /// A join table; see the properties for each part.
    public init(
        name: String, table: String, tableKey: String, column: String, destination: String, destinationKey: String,
        inverseColumn: String
    ) {
        self.name = name
        self.table = table
        self.tableKey = tableKey
        self.column = column
        self.destination = destination
        self.destinationKey = destinationKey
        self.inverseColumn = inverseColumn
    }
}

/// The `minCount`/`maxCount` of a to-many relationship: each object of `table` has between
/// `minCount` and `maxCount` rows of `linksTable` whose `linksColumn` holds its key (the
/// destinations' to-one key of a one-to-many, the relationship's own column of its join
/// table for a many-to-many).
public struct SQLCountRule: Hashable, Sendable {
    /// The owner's table (the entity that declares the relationship).
    public var table: String
    /// The owner's primary key column.
    public var key: String
    /// The relationship's name.
    public var relationship: String
    /// The table holding one row per link: the destination's, or the join table.
    public var linksTable: String
    /// The column of `linksTable` holding the owner's key.
    public var linksColumn: String
    public var minCount: Int?
    public var maxCount: Int?

    /// A count rule; see the properties for each part.
    public init(
        table: String, key: String, relationship: String, linksTable: String, linksColumn: String, minCount: Int?,
        maxCount: Int?
    ) {
        self.table = table
        self.key = key
        self.relationship = relationship
        self.linksTable = linksTable
        self.linksColumn = linksColumn
        self.minCount = minCount
        self.maxCount = maxCount
    }
}

/// The SQL dialects `strata sql` can write.
public enum SQLDialect: String, CaseIterable, Sendable {
    case postgresql
}
