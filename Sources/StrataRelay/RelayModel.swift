import Foundation
import Strata
import StrataSchema

/// A model read at run time from its YAML files, as the relay serves it: the same
/// `SchemaDescriptor` the build plugin generates as `<ModelName>.schema` for the same files
/// and model name (the tests compare both for every reference model), so that the relay's
/// tables, columns and model fingerprint are the devices' own.
///
/// ```swift
/// let schema = try RelayModel.load(paths: ["Models"], modelName: "StrataModel")
/// ```
public enum RelayModel {
    /// The model of the YAML files at `paths` (files, or folders of `*.yaml` files), named
    /// `modelName` as the build plugin names it (`StrataModel` unless the app's target sets
    /// another name). Throws ``RelayModelError`` with the loader's diagnostics when the files
    /// do not make a valid model.
    public static func load(paths: [String], modelName: String = "StrataModel") throws -> SchemaDescriptor {
        let result = SchemaPipeline.load(paths: paths, modelName: modelName)
        guard let schema = result.schema else {
            throw RelayModelError(paths: paths, diagnostics: result.diagnostics.map { String(describing: $0) })
        }
        return descriptor(of: schema)
    }

    /// The descriptor of a validated schema, as the generator writes it.
    public static func descriptor(of schema: Schema) -> SchemaDescriptor {
        let layout = StorageLayout(schema: schema)
        let converter = Converter(schema: schema, layout: layout)
        return SchemaDescriptor(
            name: schema.name, entities: schema.entities.filter { !$0.isAbstract }.map(converter.entity))
    }
}

/// The model files could not be loaded: each diagnostic as the `strata` tool prints it.
public struct RelayModelError: Error, CustomStringConvertible, Sendable {
    public var paths: [String]
    public var diagnostics: [String]
    public var description: String {
        "the model at \(paths.joined(separator: ", ")) could not be loaded:\n" + diagnostics.joined(separator: "\n")
    }
}

/// What `GenerationContext+Descriptor.swift` writes as Swift source, made as values.
private struct Converter {
    let schema: Schema
    let layout: StorageLayout

    /// Column names of a unique constraint or index: to-one relationships by their foreign key.
    func columns(_ names: [String], of entity: Entity) -> [String] {
        names.map { name in
            if let relationship = entity.relationship(named: name),
                let column = layout.foreignKeyColumn(of: relationship, in: entity)
            {
                return column
            }
            return name
        }
    }

    func entity(_ entity: Entity) -> EntityDescriptor {
        let indexes = entity.indexes.map { index in
            IndexDescriptor(
                zip(columns(index.columns, of: entity), index.descending).map { IndexColumn($0, isDescending: $1) },
                name: index.name)
        }
        return EntityDescriptor(
            name: entity.name,
            attributes: entity.attributes.filter { !$0.isTransient }.map(attribute),
            relationships: entity.relationships.map { relationship($0, of: entity) },
            uniques: entity.uniques.map { columns($0, of: entity) },
            indexes: indexes,
            renamedFrom: entity.renamedFrom,
            primaryKey: entity.primaryKey,
            access: entity.access.map(access))
    }

    func access(_ access: Access) -> AccessDescriptor {
        switch access {
        case .everyone: .everyone
        case .users(let owner, let members):
            .users(owner: owner, members: members.map { .init(relationship: $0.relationship, attribute: $0.attribute) })
        case .through(let relationship): .through(relationship)
        }
    }

    func attribute(_ attribute: Attribute) -> AttributeDescriptor {
        AttributeDescriptor(
            name: attribute.name, type: valueType(attribute.type), isOptional: attribute.isOptional,
            defaultValue: attribute.defaultValue.map { defaultValue($0, type: attribute.type) },
            isIndexed: attribute.isIndexed, isUnique: attribute.isUnique, renamedFrom: attribute.renamedFrom,
            rules: rules(attribute.rules))
    }

    func valueType(_ type: AttributeType) -> ValueType {
        switch type {
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
        case .enumeration(let name): .enumeration(name: name, cases: schema.enumType(named: name)?.cases ?? [])
        case .codable: .json
        }
    }

    func rules(_ rules: StrataSchema.ValueRules) -> Strata.ValueRules {
        func bound(_ bound: RuleBound) -> DatabaseValue {
            switch bound {
            case .int(let value): Int(value).databaseValue
            case .double(let value): value.databaseValue
            case .date(let text): text.databaseValue
            }
        }
        return Strata.ValueRules(
            minimum: rules.min.map(bound), maximum: rules.max.map(bound), minLength: rules.minLength,
            maxLength: rules.maxLength, pattern: rules.pattern)
    }

    /// The value the generated code's literal makes (`.value(<literal>.databaseValue)`).
    func defaultValue(_ value: DefaultValue, type: AttributeType) -> DefaultValueDescriptor {
        switch value {
        case .now: return .now
        case .uuid: return .uuid
        case .date(let milliseconds): return .value(DefaultValue.dateText(milliseconds: milliseconds, storage: true).databaseValue)
        case .enumCase(let name): return .value(name.databaseValue)
        case .bool(let flag): return .value(flag.databaseValue)
        case .int(let number):
            switch type {
            case .decimal: return .value(Decimal(number).databaseValue)
            case .double, .float: return .value(Double(number).databaseValue)
            default: return .value(Int(number).databaseValue)
            }
        case .double(let number):
            switch type {
            case .decimal: return .value((Decimal(string: "\(number)") ?? Decimal(number)).databaseValue)
            default: return .value(number.databaseValue)
            }
        case .string(let text):
            switch type {
            case .uuid: return .value(UUID(uuidString: text).databaseValue)
            case .url: return .value(URL(string: text).databaseValue)
            case .decimal: return .value(Decimal(string: text).databaseValue)
            case .data: return .value(Data(text.utf8).databaseValue)
            default: return .value(text.databaseValue)
            }
        }
    }

    func relationship(_ relationship: Relationship, of entity: Entity) -> RelationshipDescriptor {
        let storage: RelationshipStorage
        switch layout.storage(of: relationship, in: entity) {
        case .foreignKey(let column): storage = .foreignKey(column: column)
        case .inverseForeignKey: storage = .inverseForeignKey
        case .joinTable(let name, let column, let inverseColumn):
            storage = .joinTable(name: name, column: column, inverseColumn: inverseColumn)
        }
        var initialOrder: [SortNode] = []
        if relationship.isOrdered, !relationship.initialOrder.isEmpty, let destination = schema.entity(named: relationship.destination) {
            initialOrder = relationship.initialOrder.map { SortNode(path: storedPath($0.path, from: destination), descending: $0.descending) }
        }
        return RelationshipDescriptor(
            name: relationship.name, destination: relationship.destination, inverse: relationship.inverse,
            isToMany: relationship.isToMany, isRequired: relationship.isRequired,
            deleteRule: Strata.DeleteRule(rawValue: relationship.deleteRule.rawValue) ?? .nullify, storage: storage,
            renamedFrom: relationship.renamedFrom, isOrdered: relationship.isOrdered,
            positionColumn: layout.positionColumn(of: relationship, in: entity), initialOrder: initialOrder,
            minCount: relationship.minCount, maxCount: relationship.maxCount)
    }

    /// A key path as the runtime reads it: `list.@position` becomes the position column
    /// (`listPosition`) of the entity that holds `list`.
    func storedPath(_ path: [String], from root: Entity) -> [String] {
        guard path.count >= 2, path.last == "@position" else { return path }
        var entity: Entity? = root
        for name in path.dropLast(2) {
            entity = entity?.relationship(named: name).flatMap { schema.entity(named: $0.destination) }
        }
        guard let entity, let relationship = entity.relationship(named: path[path.count - 2]),
            let position = layout.positionColumn(of: relationship, in: entity)
        else { return path }
        return Array(path.dropLast(2)) + [position]
    }
}
