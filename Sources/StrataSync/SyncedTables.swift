import Foundation
import GRDB
import Strata
import StrataSQL

/// The tables a sync moves, read off the model's ``SchemaDescriptor``: one per synced entity
/// (its attributes, to-one keys and list positions) and one per many-to-many join table
/// between synced entities.
struct SyncedTables: Sendable {
    /// One column of an entity's table, other than its primary key.
    struct Column: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            /// An attribute of this type.
            case value(ValueType)
            /// A to-one's key: the destination entity's object, by its sync id on the wire.
            case reference(String)
            /// The place of the object in an ordered to-many (an integer).
            case position
        }
        var name: String
        var kind: Kind
        var isOptional: Bool
        /// The type that tells how the column's values are written as text.
        var valueType: ValueType {
            switch kind {
            case .value(let type): type
            case .reference: .uuid
            case .position: .int
            }
        }
    }

    struct Entity: Sendable {
        var descriptor: EntityDescriptor
        var name: String { descriptor.name }
        var primaryKey: String { descriptor.primaryKey }
        var columns: [Column]
        /// The to-one columns, with their destinations.
        var references: [(column: String, destination: String)] {
            columns.compactMap { if case .reference(let destination) = $0.kind { return ($0.name, destination) } else { return nil } }
        }
        func column(named name: String) -> Column? { columns.first { $0.name == name } }
    }

    /// A many-to-many join table: `column` holds objects of `entity`, `inverseColumn` of
    /// `destination`.
    struct Join: Sendable {
        var name: String
        var entity: String
        var column: String
        var destination: String
        var inverseColumn: String
    }

    var schema: SchemaDescriptor
    var entities: [Entity]
    var joins: [Join]

    /// The synced part of `schema`: every entity, or those named in `only`.
    ///
    /// - Throws: ``SyncSetupError`` when a synced entity's relationship leads to an entity
    ///   that is not synced.
    init(schema: SchemaDescriptor, only: Set<String>?) throws {
        self.schema = schema
        let names = only ?? Set(schema.entities.map(\.name))
        for name in names.sorted() where schema.entity(named: name) == nil {
            throw SyncSetupError.unknownEntity(name)
        }
        var entities: [Entity] = []
        var joins: [Join] = []
        var seenJoins: Set<String> = []
        for entity in schema.entities where names.contains(entity.name) {
            var columns = entity.attributes.map {
                Column(name: $0.name, kind: .value($0.type), isOptional: $0.isOptional)
            }
            for relationship in entity.relationships {
                guard names.contains(relationship.destination) else {
                    throw SyncSetupError.relationshipLeavesSyncedEntities(
                        entity: entity.name, relationship: relationship.name, destination: relationship.destination)
                }
                switch relationship.storage {
                case .foreignKey(let column):
                    columns.append(Column(name: column, kind: .reference(relationship.destination), isOptional: !relationship.isRequired))
                    if let position = relationship.positionColumn {
                        columns.append(Column(name: position, kind: .position, isOptional: true))
                    }
                case .joinTable(let table, let column, let inverseColumn):
                    if seenJoins.insert(table).inserted {
                        joins.append(Join(
                            name: table, entity: entity.name, column: column,
                            destination: relationship.destination, inverseColumn: inverseColumn))
                    }
                case .inverseForeignKey:
                    break
                }
            }
            entities.append(Entity(descriptor: entity, columns: columns))
        }
        self.entities = entities
        self.joins = joins
    }

    func entity(named name: String) -> Entity? { entities.first { $0.name == name } }
    func join(named name: String) -> Join? { joins.first { $0.name == name } }

    /// Entity names, each after the entities its to-one keys lead to (self-references and
    /// cycles aside): the order inserts can be applied in.
    var dependencyOrder: [String] {
        SQLSchema.dependencyOrder(entities.map { ($0.name, $0.references.map(\.destination)) })
    }

    // MARK: - The neutral description of StrataSQL

    /// The tables as StrataSQL describes them, to make their DDL.
    var sqlSchema: SQLSchema {
        SQLSchema(
            tables: entities.map { entity in
                SQLTable(
                    name: entity.name, primaryKey: entity.primaryKey,
                    columns: entity.columns.map { sqlColumn($0, of: entity) },
                    uniques: entity.descriptor.uniques,
                    indexes: entity.descriptor.indexes.map { $0.columns.map { SQLIndexColumn($0.name, isDescending: $0.isDescending) } })
            },
            joinTables: joins.map { join in
                SQLJoinTable(
                    name: join.name, table: join.entity, tableKey: entity(named: join.entity)?.primaryKey ?? "id",
                    column: join.column, destination: join.destination,
                    destinationKey: entity(named: join.destination)?.primaryKey ?? "id", inverseColumn: join.inverseColumn)
            },
            countRules: countRules, modelName: schema.name)
    }

    /// The `minCount`/`maxCount` of the synced to-many relationships, with where their links
    /// are stored (as the store counts them).
    var countRules: [SQLCountRule] {
        var result: [SQLCountRule] = []
        for entity in entities {
            for relationship in entity.descriptor.relationships
            where relationship.isToMany && (relationship.minCount != nil || relationship.maxCount != nil) {
                var links: (table: String, column: String)?
                switch relationship.storage {
                case .joinTable(let name, let column, _): links = (name, column)
                case .inverseForeignKey:
                    if case .foreignKey(let column)? = schema.entity(named: relationship.destination)?
                        .relationship(named: relationship.inverse)?.storage
                    {
                        links = (relationship.destination, column)
                    }
                case .foreignKey: break
                }
                guard let links else { continue }
                result.append(SQLCountRule(
                    table: entity.name, key: entity.primaryKey, relationship: relationship.name, linksTable: links.table,
                    linksColumn: links.column, minCount: relationship.minCount, maxCount: relationship.maxCount))
            }
        }
        return result
    }

    /// `column` of `entity` as StrataSQL describes it: its attribute's default and rules as
    /// wire text, or the foreign key of its relationship.
    func sqlColumn(_ column: Column, of entity: Entity) -> SQLColumn {
        switch column.kind {
        case .value(let type):
            let attribute = entity.descriptor.attribute(named: column.name)
            let defaultValue: SQLDefault? = switch attribute?.defaultValue {
            case .now: .now
            case .uuid: .uuid
            case .value(let value): SyncValue.text(of: value, as: type).map(SQLDefault.value)
            case nil: nil
            }
            let rules = attribute?.rules ?? ValueRules()
            let sqlRules = SQLRules(
                minimum: rules.minimum.flatMap { SyncValue.text(of: $0, as: type) },
                maximum: rules.maximum.flatMap { SyncValue.text(of: $0, as: type) },
                minLength: rules.minLength, maxLength: rules.maxLength)
            return SQLColumn(
                name: column.name,
                kind: .value(
                    type.sqlValueType, default: defaultValue, rules: sqlRules,
                    isIndexed: attribute?.isIndexed ?? false, isUnique: attribute?.isUnique ?? false),
                isOptional: column.isOptional)
        case .reference(let destination):
            let relationship = entity.descriptor.relationships.first {
                if case .foreignKey(let name) = $0.storage { return name == column.name } else { return false }
            }
            let inverse = relationship.flatMap { schema.entity(named: destination)?.relationship(named: $0.inverse) }
            let rule = inverse?.deleteRule ?? .nullify
            return SQLColumn(
                name: column.name,
                kind: .reference(SQLReference(
                    table: destination, key: self.entity(named: destination)?.primaryKey ?? "id",
                    deleteRule: SQLDeleteRule(rawValue: rule.rawValue) ?? .nullify,
                    isOneToOne: relationship?.isToMany == false && inverse.map { !$0.isToMany } == true)),
                isOptional: column.isOptional)
        case .position:
            return SQLColumn(name: column.name, kind: .position, isOptional: column.isOptional)
        }
    }
}

extension ValueType {
    /// The type as StrataSQL names it.
    var sqlValueType: SQLValueType {
        switch self {
        case .string: .string
        case .int: .int
        case .int32: .int32
        case .int16: .int16
        case .double: .double
        case .float: .float
        case .bool: .bool
        case .date: .date
        case .uuid: .uuid
        case .data: .data
        case .decimal: .decimal
        case .url: .url
        case .enumeration(_, let cases): .enumeration(cases: cases)
        case .json: .json
        }
    }
}

/// A sync that cannot be set up as asked.
public enum SyncSetupError: StrataError {
    /// `entities:` names an entity the model does not have.
    case unknownEntity(String)
    /// A synced entity's relationship leads to an entity that is not synced: both ends of
    /// every relationship must sync.
    case relationshipLeavesSyncedEntities(entity: String, relationship: String, destination: String)
    /// The store does not record its change history (``Store/Options/recordsHistory`` is off),
    /// which the sync reads to know what to push.
    case historyNotRecorded
    /// The store file already numbers this many synced tables (the most its sync state
    /// leaves room for, 1,023, counting every table it ever synced) and the model adds more.
    case tooManyTables(Int)

    public var description: String {
        switch self {
        case .unknownEntity(let name):
            "the model has no entity '\(name)' to sync"
        case .relationshipLeavesSyncedEntities(let entity, let relationship, let destination):
            "\(entity).\(relationship) leads to \(destination), which does not sync: sync both ends of every relationship"
        case .historyNotRecorded:
            "the store does not record its change history (Store.Options.recordsHistory is off); sync reads it to know what to push"
        case .tooManyTables(let count):
            "the store file syncs \(count) tables already, the most its sync state leaves room for"
        }
    }
}
