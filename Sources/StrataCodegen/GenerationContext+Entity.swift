import StrataSchema

extension GenerationContext {
    /// An attribute's `doc:`, then its rules (`Rules: min 1, max 5; checked by the store.`).
    static func documentation(of attribute: Attribute) -> String? {
        let rules = attribute.rules
        var parts: [String] = []
        if let min = rules.min { parts.append("min \(min.text)") }
        if let max = rules.max { parts.append("max \(max.text)") }
        if let minLength = rules.minLength { parts.append("minLength \(minLength)") }
        if let maxLength = rules.maxLength { parts.append("maxLength \(maxLength)") }
        if let pattern = rules.pattern { parts.append("pattern `\(pattern)`") }
        var lines: [String] = []
        if attribute.isTransient { lines.append("Transient: not stored; an object read from the store has its default.") }
        if !parts.isEmpty {
            lines.append("Rules: \(parts.joined(separator: ", ")) (the store refuses a write that breaks one).")
        }
        guard !lines.isEmpty else { return attribute.doc }
        return ([attribute.doc].compactMap { $0 } + lines).joined(separator: "\n\n")
    }

    /// A stored to-one foreign key property of an entity.
    struct ForeignKey {
        var relationship: Relationship
        var column: String
        var destinationType: String
        /// `Notebook.ID` or `Notebook.ID?`.
        var swiftType: String
    }

    func foreignKeys(of entity: Entity) -> [ForeignKey] {
        entity.relationships.compactMap { relationship in
            guard !relationship.isToMany, let column = layout.foreignKeyColumn(of: relationship, in: entity) else {
                return nil
            }
            let destination = typeName(relationship.destination)
            return ForeignKey(
                relationship: relationship, column: column, destinationType: destination,
                swiftType: destination + ".ID" + (relationship.isRequired ? "" : "?"))
        }
    }

    // MARK: - Entity

    func writeEntity(_ entity: Entity, _ w: inout SwiftWriter) throws {
        if entity.isAbstract {
            writeAbstractEntity(entity, &w)
            return
        }
        let type = typeName(entity.name)
        let keys = foreignKeys(of: entity)

        // The stored properties in the initializer's order, with the initializer's defaults.
        var properties: [(name: String, type: String, defaultValue: String?)] = [(entity.primaryKey, "ID", ".unsaved")]
        for attribute in entity.attributes {
            let value = attribute.defaultValue.map { defaultExpression($0, type: attribute.type) }
            properties.append((attribute.name, attributeType(attribute), value ?? (attribute.isOptional ? "nil" : nil)))
        }
        for key in keys {
            properties.append((key.column, key.swiftType, key.relationship.isRequired ? nil : "nil"))
        }

        w.docComment(entity.doc)
        // The key's property; an entity whose key is `id` is `Identifiable` through it.
        let key = SwiftNames.identifier(entity.primaryKey), keyMember = "self." + SwiftNames.member(entity.primaryKey)
        let keyLiteral = SwiftNames.stringLiteral(entity.primaryKey)
        let conformances = ["Strata.StrataEntity"] + (entity.primaryKey == "id" ? ["Swift.Identifiable"] : [])
            + (entity.parent.map { [typeName($0)] } ?? [])
        w.block("public struct \(type): \(conformances.joined(separator: ", "))") { w in
            w.line("public typealias ID = Strata.EntityID<\(type)>")
            w.blankLine()
            if entity.primaryKey != "id" {
                w.line("/// The object's id: the primary key, named `\(entity.primaryKey)` in the model.")
            }
            w.line("public var \(key): ID")
            for attribute in entity.attributes {
                w.docComment(Self.documentation(of: attribute))
                w.line("public var \(SwiftNames.identifier(attribute.name)): \(attributeType(attribute))")
            }
            for key in keys {
                w.docComment(key.relationship.doc.map { "The identifier of `\(key.relationship.name)`: \($0)" })
                w.line("public var \(SwiftNames.identifier(key.column)): \(key.swiftType)")
            }
            w.blankLine()
            let parameters = properties.map { "\(SwiftNames.identifier($0.name)): \($0.type)" + ($0.defaultValue.map { " = " + $0 } ?? "") }
            w.call("public init", parameters, " {")
            w.indent { w in
                w.line("\(keyMember) = \(key)")
                for name in entity.attributes.map(\.name) + keys.map(\.column) {
                    w.line("self.\(SwiftNames.member(name)) = \(SwiftNames.identifier(name))")
                }
            }
            w.line("}")
            if entity.primaryKey != "objectID" {
                w.blankLine()
                w.line("/// The object's id, as ``Strata/StrataEntity`` reads it: `\(entity.primaryKey)`.")
                w.line("public var objectID: ID {")
                w.indent { w in
                    w.line("get { \(keyMember) }")
                    w.line("set { \(keyMember) = newValue }")
                }
                w.line("}")
            }
        }

        w.blankLine()
        w.block("extension \(type)") { w in
            w.line("public static let databaseTableName: Swift.String = \(SwiftNames.stringLiteral(entity.name))")
            w.line(
                "public static let entityDescriptor: Strata.EntityDescriptor = \(SwiftNames.identifier(schema.name)).schema.entity(named: \(SwiftNames.stringLiteral(entity.name)))!"
            )
            w.line("public static var schemaDescriptor: Strata.SchemaDescriptor { \(SwiftNames.identifier(schema.name)).schema }")
            w.blankLine()
            // Reading never traps: a stored value the type cannot represent throws
            // `Strata.ValueDecodingError` naming the table, row, column and value.
            let entityLiteral = SwiftNames.stringLiteral(entity.name)
            // Transient attributes have no column; `Codable<T>` attributes are JSON text,
            // decoded by `strataJSONValue`.
            let stored = entity.attributes.filter { !$0.isTransient }
            let columns: [(name: String, isOptional: Bool, isJSON: Bool)] =
                stored.map { ($0.name, $0.isOptional, $0.type.isCodable) }
                + keys.map { ($0.column, !$0.relationship.isRequired, false) }
            // `init(row:)` reads by name; a results fetch selects `strataColumnNames` in order
            // and decodes by position (`Strata.EntityColumns`).
            let columnNames = [entity.primaryKey] + columns.map(\.name)
            w.block("public init(row: GRDB.Row) throws") { w in
                w.line("try self.init(strataColumns: Strata.EntityColumns(row: row))")
            }
            w.blankLine()
            w.line("/// The stored columns, in the order `init(strataColumns:)` reads them.")
            w.line(
                "public static let strataColumnNames: [Swift.String] = [\(columnNames.map(SwiftNames.stringLiteral).joined(separator: ", "))]"
            )
            w.blankLine()
            func read(_ position: Int, _ column: (name: String, isOptional: Bool, isJSON: Bool)) -> String {
                let kind = column.isJSON ? "JSONValue" : "Value"
                let reader = column.isOptional ? "optional" + kind : (column.isJSON ? "jsonValue" : "value")
                return "self.\(SwiftNames.member(column.name)) = try columns.\(reader)(\(position), \(SwiftNames.stringLiteral(column.name)), of: \(entityLiteral))"
            }
            w.block("public init(strataColumns columns: Strata.EntityColumns) throws") { w in
                w.line("\(keyMember) = try columns.value(0, \(keyLiteral), of: \(entityLiteral))")
                // Transient attributes are not stored: a read object starts with the default.
                for attribute in entity.attributes where attribute.isTransient {
                    let value = attribute.defaultValue.map { defaultExpression($0, type: attribute.type) } ?? "nil"
                    w.line("self.\(SwiftNames.member(attribute.name)) = \(value)")
                }
                for (offset, column) in columns.enumerated() { w.line(read(offset + 1, column)) }
            }
            w.blankLine()
            // A refetch that answers a commit reads again only the columns the commit wrote
            // into the value it held.
            w.block("public mutating func strataRead(_ columns: Strata.EntityColumns, at position: Swift.Int32) throws") { w in
                w.line("switch position {")
                for (offset, column) in columns.enumerated() {
                    w.line("case \(offset + 1): \(read(offset + 1, column))")
                }
                w.line("default: self = try Self(strataColumns: columns)")
                w.line("}")
            }
            w.blankLine()
            // Values SQLite cannot store exactly (text with NUL, NaN, dates outside the years
            // 0001 to 9999) are refused here, on every write path, with
            // `Strata.InvalidValueError`.
            w.block("public func encode(to container: inout GRDB.PersistenceContainer) throws") { w in
                w.line("if \(keyMember).isSaved { container[\(keyLiteral)] = \(keyMember) }")
                for attribute in stored {
                    let name = SwiftNames.stringLiteral(attribute.name)
                    let member = "self.\(SwiftNames.member(attribute.name))"
                    switch attribute.type {
                    case .string, .double, .float:
                        w.line("container[\(name)] = try Strata.InvalidValueError.checked(\(member), \(name), of: \(entityLiteral))")
                    case .date:
                        w.line("container[\(name)] = try Strata.InvalidValueError.checkedDate(\(member), \(name), of: \(entityLiteral))")
                    case .codable:
                        w.line("container[\(name)] = try Strata.StoredJSON.encode(\(member), \(name), of: \(entityLiteral))")
                    default:
                        w.line("container[\(name)] = \(member)")
                    }
                }
                for key in keys {
                    w.line("container[\(SwiftNames.stringLiteral(key.column))] = self.\(SwiftNames.member(key.column))")
                }
            }
            w.blankLine()
            w.block("public mutating func didInsert(_ inserted: GRDB.InsertionSuccess)") { w in
                w.line("\(keyMember) = ID(rawValue: inserted.rowID)")
            }
        }

        // Decoding takes what the initializer takes: a server's JSON without the store's key
        // decodes as an unsaved object, a missing value with a default takes the default.
        // Encoding is the compiler's, with these keys.
        w.blankLine()
        w.block("extension \(type)") { w in
            w.block("enum CodingKeys: Swift.String, Swift.CodingKey") { w in
                for property in properties { w.line("case \(SwiftNames.identifier(property.name))") }
            }
            w.blankLine()
            w.line("/// Decodes the values the initializer takes; a missing key or value with a default takes it.")
            w.block("public init(from decoder: any Swift.Decoder) throws") { w in
                w.line("let container = try decoder.container(keyedBy: CodingKeys.self)")
                let arguments = properties.map { property in
                    let label = SwiftNames.label(property.name), codingKey = "." + SwiftNames.member(property.name)
                    let decode = "container.decode(\(property.type).self, forKey: \(codingKey))"
                    guard let value = property.defaultValue else { return "\(label): try \(decode)" }
                    return "\(label): try container.contains(\(codingKey)) ? \(decode) : \(value)"
                }
                w.call("self.init", arguments, "")
            }
        }

        // Static typed columns and relationships.
        w.blankLine()
        w.block("extension \(type)") { w in
            w.line("public static var \(key): Strata.TypedColumn<\(type), ID> { .init(\(keyLiteral)) }")
            // A `Codable<T>` attribute has no typed column: predicates and sorts cannot use it;
            // a transient one has no column at all.
            for attribute in entity.attributes where !attribute.type.isCodable && !attribute.isTransient {
                w.line(
                    "public static var \(SwiftNames.identifier(attribute.name)): Strata.TypedColumn<\(type), \(attributeType(attribute))> { .init(\(SwiftNames.stringLiteral(attribute.name))) }"
                )
            }
            for key in keys {
                w.line(
                    "public static var \(SwiftNames.identifier(key.column)): Strata.TypedColumn<\(type), \(key.swiftType)> { .init(\(SwiftNames.stringLiteral(key.column))) }"
                )
            }
            for key in keys {
                guard let position = layout.positionColumn(of: key.relationship, in: entity) else { continue }
                w.line("/// The place among the children of `\(key.relationship.name)` (`\(key.relationship.name).@position` in the model).")
                w.line(
                    "public static var \(SwiftNames.identifier(position)): Strata.TypedColumn<\(type), Swift.Int?> { .init(\(SwiftNames.stringLiteral(position))) }"
                )
            }
            for relationship in entity.relationships {
                let kind = relationship.isToMany ? "ToMany" : "ToOne"
                w.docComment(relationship.doc)
                w.line(
                    "public static var \(SwiftNames.identifier(relationship.name)): Strata.\(kind)<\(type), \(typeName(relationship.destination))> { .init(\(SwiftNames.stringLiteral(relationship.name))) }"
                )
            }
        }

        // The destination's columns, reached through a to-one relationship.
        w.blankLine()
        w.block("extension Strata.ToOne where Destination == \(type)") { w in
            w.line("public var \(key): Strata.TypedColumn<Root, \(type).ID?> { _column(\(keyLiteral)) }")
            for attribute in entity.attributes where !attribute.type.isCodable && !attribute.isTransient {
                w.line(
                    "public var \(SwiftNames.identifier(attribute.name)): Strata.TypedColumn<Root, \(SwiftNames.type(attribute.type))?> { _column(\(SwiftNames.stringLiteral(attribute.name))) }"
                )
            }
            for key in keys {
                w.line(
                    "public var \(SwiftNames.identifier(key.column)): Strata.TypedColumn<Root, \(key.destinationType).ID?> { _column(\(SwiftNames.stringLiteral(key.column))) }"
                )
            }
            for key in keys {
                guard let position = layout.positionColumn(of: key.relationship, in: entity) else { continue }
                w.line(
                    "public var \(SwiftNames.identifier(position)): Strata.TypedColumn<Root, Swift.Int?> { _column(\(SwiftNames.stringLiteral(position))) }"
                )
            }
            for relationship in entity.relationships where !relationship.isToMany {
                w.line(
                    "public var \(SwiftNames.identifier(relationship.name)): Strata.ToOne<Root, \(typeName(relationship.destination))> { _toOne(\(SwiftNames.stringLiteral(relationship.name))) }"
                )
            }
        }

        if !entity.relationships.isEmpty {
            w.blankLine()
            writeAssociations(of: entity, &w)
        }

        if !entity.fetches.isEmpty {
            w.blankLine()
            try writeFetches(of: entity, &w)
        }
    }

    // MARK: - Abstract entities

    /// An abstract entity is a protocol: the properties it declares (those it inherits are
    /// its parent protocol's) and their typed columns, which every entity extending it has.
    func writeAbstractEntity(_ entity: Entity, _ w: inout SwiftWriter) {
        let parent = entity.parent.map(typeName) ?? "Strata.StrataEntity"
        w.docComment(entity.doc ?? "The attributes shared by the entities that extend `\(entity.name)` (an abstract entity: no table of its own).")
        w.block("public protocol \(typeName(entity.name)): \(parent)") { w in
            let own = entity.attributes.filter { $0.inheritedFrom == nil }
            for attribute in own {
                w.docComment(attribute.doc)
                w.line("var \(SwiftNames.identifier(attribute.name)): \(attributeType(attribute)) { get set }")
            }
            // The typed columns, so that generic code can filter and sort any entity extending it.
            for attribute in own where !attribute.type.isCodable {
                w.line(
                    "static var \(SwiftNames.identifier(attribute.name)): Strata.TypedColumn<Self, \(attributeType(attribute))> { get }")
            }
        }
    }

    // MARK: - GRDB associations

    /// `Note.Associations.notebook`, `.tags`: one GRDB association per relationship, keyed by
    /// the relationship's name, with explicit foreign keys. They live in a nested enum because
    /// `Note.notebook` is already the typed `ToOne` path of the predicates.
    func writeAssociations(of entity: Entity, _ w: inout SwiftWriter) {
        let type = typeName(entity.name)
        w.block("extension \(type)") { w in
            w.line("/// GRDB associations of the relationships, keyed by relationship name, for GRDB's query")
            let first = entity.relationships[0]
            let including = first.isToMany ? "including(all:" : "including(optional:"
            w.line("/// interface: `\(type).\(including) \(type).Associations.\(SwiftNames.member(first.name)))`.")
            w.block("public enum Associations") { w in
                for relationship in entity.relationships {
                    let destination = typeName(relationship.destination)
                    let key = SwiftNames.stringLiteral(relationship.name)
                    let name = SwiftNames.identifier(relationship.name)
                    // The key a foreign key points to: the destination's for a to-one stored
                    // here, this entity's for the inverse side.
                    func foreignKey(_ column: String, to target: String) -> String {
                        let key = schema.entity(named: target)?.primaryKey ?? "id"
                        return "GRDB.ForeignKey([\(SwiftNames.stringLiteral(column))], to: [\(SwiftNames.stringLiteral(key))])"
                    }
                    switch layout.storage(of: relationship, in: entity) {
                    case .foreignKey(let column):
                        w.line("/// `\(relationship.name)`: the \(destination) this object's `\(column)` points to.")
                        w.line("public static let \(name): GRDB.BelongsToAssociation<\(type), \(destination)> =")
                        w.indent { w in
                            w.line("\(type).belongsTo(\(destination).self, key: \(key), using: \(foreignKey(column, to: relationship.destination)))")
                        }
                    case .inverseForeignKey:
                        // The destination's foreign key column, that of the inverse to-one.
                        var column = relationship.inverse + "ID"
                        if let target = schema.entity(named: relationship.destination),
                            let inverse = target.relationship(named: relationship.inverse),
                            let stored = layout.foreignKeyColumn(of: inverse, in: target)
                        {
                            column = stored
                        }
                        let kind = relationship.isToMany ? "HasMany" : "HasOne"
                        let method = relationship.isToMany ? "hasMany" : "hasOne"
                        let what = relationship.isToMany ? "the \(destination) objects" : "the \(destination)"
                        w.line("/// `\(relationship.name)`: \(what) whose `\(column)` points to this object.")
                        w.line("public static let \(name): GRDB.\(kind)Association<\(type), \(destination)> =")
                        w.indent { w in
                            w.line("\(type).\(method)(\(destination).self, key: \(key), using: \(foreignKey(column, to: entity.name)))")
                        }
                    case .joinTable(let table, let column, let inverseColumn):
                        let pivot = "GRDB.Table<GRDB.Row>(\(SwiftNames.stringLiteral(table)))"
                        w.line("/// `\(relationship.name)`: the \(destination) objects linked to this object through the join table `\(table)`.")
                        w.line("public static let \(name): GRDB.HasManyThroughAssociation<\(type), \(destination)> =")
                        w.indent { w in
                            w.line("\(type).hasMany(")
                            w.indent { w in
                                w.line("\(destination).self,")
                                w.line("through: \(type).hasMany(\(pivot), key: \(SwiftNames.stringLiteral(table)), using: \(foreignKey(column, to: entity.name))),")
                                w.line("using: \(pivot).belongsTo(\(destination).self, key: \(key), using: \(foreignKey(inverseColumn, to: relationship.destination))),")
                                w.line("key: \(key))")
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: - Defaults

    /// The Swift expression of a default value, for a property of type `type`.
    func defaultExpression(_ value: DefaultValue, type: AttributeType) -> String {
        switch value {
        case .now: return "Foundation.Date()"
        case .date(let milliseconds):
            // Whole seconds are exact as a literal. A date with milliseconds is the value a
            // fetch reads from the stored text, which may differ in its last bit from
            // milliseconds / 1000: the runtime reads the same text the column defaults to.
            let seconds = milliseconds.quotientAndRemainder(dividingBy: 1000)
            if seconds.remainder == 0 { return "Foundation.Date(timeIntervalSince1970: \(seconds.quotient))" }
            let text = DefaultValue.dateText(milliseconds: milliseconds, storage: true)
            return "Strata.StoredDate.parse(\(SwiftNames.stringLiteral(text)))"
        case .uuid: return "Foundation.UUID()"
        case .bool(let flag): return flag ? "true" : "false"
        case .enumCase(let name): return "." + SwiftNames.member(name)
        case .int(let number):
            switch type {
            case .decimal: return "Foundation.Decimal(\(number))"
            case .double, .float: return SwiftNames.doubleLiteral(Double(number))
            default: return "\(number)"
            }
        case .double(let number):
            switch type {
            case .decimal: return "Foundation.Decimal(string: \(SwiftNames.stringLiteral("\(number)")))!"
            default: return SwiftNames.doubleLiteral(number)
            }
        case .string(let text):
            return stringValueExpression(text, type: type)
        }
    }

    /// A string written in the model, as a value of `type`.
    func stringValueExpression(_ text: String, type: AttributeType) -> String {
        switch type {
        case .uuid: return "Foundation.UUID(uuidString: \(SwiftNames.stringLiteral(text)))!"
        case .url: return "Foundation.URL(string: \(SwiftNames.stringLiteral(text)))!"
        case .decimal: return "Foundation.Decimal(string: \(SwiftNames.stringLiteral(text)))!"
        case .data: return "Foundation.Data(\(SwiftNames.stringLiteral(text)).utf8)"
        case .enumeration: return "." + SwiftNames.member(text)
        default: return SwiftNames.stringLiteral(text)
        }
    }
}
