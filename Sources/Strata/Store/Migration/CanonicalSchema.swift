import Foundation
import GRDB

/// The canonical description of a ``SchemaDescriptor`` that a store keeps in its file: JSON
/// with sorted keys, and a version hash over it (FNV-1a, 64 bits, hex). Migrations compare
/// the stored description with the app's.
struct CanonicalSchema: Codable, Hashable {
    struct Entity: Codable, Hashable {
        var name: String
        var attributes: [Attribute]
        var relationships: [Relationship]
        var uniques: [[String]]
        /// Unnamed indexes; a descending column is written `-name`.
        var indexes: [[String]]
        /// Named indexes, absent when there are none (so that older files hash the same).
        var namedIndexes: [NamedIndex]?
        var renamedFrom: String?
        /// The primary key's name, absent when it is `id` (so that older files hash the same).
        var primaryKey: String?
    }

    struct NamedIndex: Codable, Hashable {
        var name: String
        /// A descending column is written `-name`.
        var columns: [String]
    }

    struct Attribute: Codable, Hashable {
        var name: String
        var type: String
        var enumCases: [String]?
        var optional: Bool
        var defaultValue: Value?
        var indexed: Bool
        var unique: Bool
        var renamedFrom: String?
        /// The value rules; absent when there are none (so that older files hash the same).
        var rules: Rules?
    }

    /// An attribute's value rules.
    struct Rules: Codable, Hashable {
        var minimum: Value?
        var maximum: Value?
        var minLength: Int?
        var maxLength: Int?
        var pattern: String?
    }

    struct Relationship: Codable, Hashable {
        var name: String
        var destination: String
        var inverse: String
        var toMany: Bool
        var required: Bool
        var deleteRule: String
        var storage: String
        var column: String?
        var inverseColumn: String?
        var joinTable: String?
        var renamedFrom: String?
        /// `true` for an ordered to-many, absent otherwise (so that older files hash the same).
        var ordered: Bool?
        /// The position column of a to-one whose inverse is ordered.
        var positionColumn: String?
        /// A to-many's count rules, absent when not set.
        var minCount: Int?
        var maxCount: Int?
    }

    /// A default value: `now`, `uuid`, or a constant.
    struct Value: Codable, Hashable {
        var kind: String
        var int: Int64?
        var double: Double?
        var text: String?
        var blob: Data?
    }

    var name: String
    var entities: [Entity]

    init(_ schema: SchemaDescriptor) {
        name = schema.name
        entities = schema.entities.map { entity in
            Entity(
                name: entity.name,
                attributes: entity.attributes.map { attribute in
                    var type: String
                    var cases: [String]?
                    switch attribute.type {
                    case .enumeration(let name, let enumCases):
                        type = "enum:" + name
                        cases = enumCases
                    default:
                        type = "\(attribute.type)"
                    }
                    return Attribute(
                        name: attribute.name, type: type, enumCases: cases, optional: attribute.isOptional,
                        defaultValue: attribute.defaultValue.map(Value.init), indexed: attribute.isIndexed,
                        unique: attribute.isUnique, renamedFrom: attribute.renamedFrom,
                        rules: attribute.rules.isEmpty ? nil : Rules(
                            minimum: attribute.rules.minimum.map { Value(.value($0)) },
                            maximum: attribute.rules.maximum.map { Value(.value($0)) },
                            minLength: attribute.rules.minLength, maxLength: attribute.rules.maxLength,
                            pattern: attribute.rules.pattern))
                },
                relationships: entity.relationships.map { relationship in
                    var storage = "", column: String?, inverseColumn: String?, joinTable: String?
                    switch relationship.storage {
                    case .foreignKey(let c):
                        storage = "foreignKey"
                        column = c
                    case .inverseForeignKey:
                        storage = "inverseForeignKey"
                    case .joinTable(let name, let c, let ic):
                        storage = "joinTable"
                        joinTable = name
                        column = c
                        inverseColumn = ic
                    }
                    return Relationship(
                        name: relationship.name, destination: relationship.destination, inverse: relationship.inverse,
                        toMany: relationship.isToMany, required: relationship.isRequired,
                        deleteRule: relationship.deleteRule.rawValue, storage: storage, column: column,
                        inverseColumn: inverseColumn, joinTable: joinTable, renamedFrom: relationship.renamedFrom,
                        ordered: relationship.isOrdered ? true : nil, positionColumn: relationship.positionColumn,
                        minCount: relationship.minCount, maxCount: relationship.maxCount)
                },
                uniques: entity.uniques,
                indexes: entity.indexes.filter { $0.name == nil }.map(Self.indexColumns),
                namedIndexes: Self.namedIndexes(entity.indexes),
                renamedFrom: entity.renamedFrom,
                primaryKey: entity.primaryKey == "id" ? nil : entity.primaryKey)
        }
    }

    static func indexColumns(_ index: IndexDescriptor) -> [String] {
        index.columns.map { $0.isDescending ? "-" + $0.name : $0.name }
    }

    static func namedIndexes(_ indexes: [IndexDescriptor]) -> [NamedIndex]? {
        let named = indexes.compactMap { index in index.name.map { NamedIndex(name: $0, columns: indexColumns(index)) } }
        return named.isEmpty ? nil : named
    }

    static func indexDescriptor(_ columns: [String], name: String?) -> IndexDescriptor {
        IndexDescriptor(columns.map { $0.hasPrefix("-") ? .descending(String($0.dropFirst())) : IndexColumn($0) }, name: name)
    }

    /// Back to a descriptor (for the model stored in a file).
    var descriptor: SchemaDescriptor {
        SchemaDescriptor(name: name, entities: entities.map { entity in
            EntityDescriptor(
                name: entity.name,
                attributes: entity.attributes.map { attribute in
                    AttributeDescriptor(
                        name: attribute.name, type: Self.valueType(attribute.type, attribute.enumCases),
                        isOptional: attribute.optional, defaultValue: attribute.defaultValue?.descriptor,
                        isIndexed: attribute.indexed, isUnique: attribute.unique, renamedFrom: attribute.renamedFrom,
                        rules: attribute.rules.map { rules in
                            ValueRules(
                                minimum: rules.minimum.flatMap(Self.constant), maximum: rules.maximum.flatMap(Self.constant),
                                minLength: rules.minLength, maxLength: rules.maxLength, pattern: rules.pattern)
                        } ?? ValueRules())
                },
                relationships: entity.relationships.map { relationship in
                    let storage: RelationshipStorage
                    switch relationship.storage {
                    case "foreignKey": storage = .foreignKey(column: relationship.column ?? "")
                    case "joinTable":
                        storage = .joinTable(
                            name: relationship.joinTable ?? "", column: relationship.column ?? "",
                            inverseColumn: relationship.inverseColumn ?? "")
                    default: storage = .inverseForeignKey
                    }
                    return RelationshipDescriptor(
                        name: relationship.name, destination: relationship.destination, inverse: relationship.inverse,
                        isToMany: relationship.toMany, isRequired: relationship.required,
                        deleteRule: DeleteRule(rawValue: relationship.deleteRule) ?? .nullify, storage: storage,
                        renamedFrom: relationship.renamedFrom, isOrdered: relationship.ordered ?? false,
                        positionColumn: relationship.positionColumn, minCount: relationship.minCount,
                        maxCount: relationship.maxCount)
                },
                uniques: entity.uniques,
                indexes: entity.indexes.map { Self.indexDescriptor($0, name: nil) }
                    + (entity.namedIndexes ?? []).map { Self.indexDescriptor($0.columns, name: $0.name) },
                renamedFrom: entity.renamedFrom, primaryKey: entity.primaryKey ?? "id")
        })
    }

    /// The constant of a stored rule bound.
    static func constant(_ value: Value) -> DatabaseValue? {
        if case .value(let constant) = value.descriptor { return constant }
        return nil
    }

    static func valueType(_ name: String, _ cases: [String]?) -> ValueType {
        if name.hasPrefix("enum:") { return .enumeration(name: String(name.dropFirst(5)), cases: cases ?? []) }
        switch name {
        case "string": return .string
        case "int": return .int
        case "int32": return .int32
        case "int16": return .int16
        case "double": return .double
        case "float": return .float
        case "bool": return .bool
        case "date": return .date
        case "uuid": return .uuid
        case "data": return .data
        case "decimal": return .decimal
        case "json": return .json
        default: return .url
        }
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain structs of strings, numbers and arrays cannot fail.
        let data = (try? encoder.encode(self)) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ json: String) -> CanonicalSchema? {
        try? JSONDecoder().decode(CanonicalSchema.self, from: Data(json.utf8))
    }

    /// The version of the SQL layout (tables, indexes, triggers) the store derives from a
    /// model. Part of the version hash, so that a new layout migrates existing files.
    static let layoutVersion = 1

    /// FNV-1a over the layout version and the canonical JSON, as 16 hex digits.
    var versionHash: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "layout \(Self.layoutVersion)\n\(json)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension CanonicalSchema.Value {
    init(_ value: DefaultValueDescriptor) {
        switch value {
        case .now: self.init(kind: "now")
        case .uuid: self.init(kind: "uuid")
        case .value(let value):
            switch value.storage {
            case .null: self.init(kind: "null")
            case .int64(let int): self.init(kind: "int", int: int)
            case .double(let double): self.init(kind: "double", double: double)
            case .string(let text): self.init(kind: "text", text: text)
            case .blob(let blob): self.init(kind: "blob", blob: blob)
            }
        }
    }

    var descriptor: DefaultValueDescriptor {
        switch kind {
        case "now": .now
        case "uuid": .uuid
        case "int": .value((int ?? 0).databaseValue)
        case "double": .value((double ?? 0).databaseValue)
        case "text": .value((text ?? "").databaseValue)
        case "blob": .value((blob ?? Data()).databaseValue)
        default: .value(.null)
        }
    }
}
