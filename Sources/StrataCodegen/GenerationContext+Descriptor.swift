import StrataSchema

extension GenerationContext {
    /// `public enum <ModelName> { public static let schema = Strata.SchemaDescriptor(...) }`.
    func writeModelNamespace(_ w: inout SwiftWriter) {
        w.line("/// The model's storage layout, which `Store` creates and migrates.")
        w.block("public enum \(SwiftNames.identifier(schema.name))") { w in
            w.line("public static let schema = Strata.SchemaDescriptor(")
            w.indent { w in
                w.line("name: \(SwiftNames.stringLiteral(schema.name)),")
                w.line("entities: [")
                w.indent { w in
                    for entity in schema.entities where !entity.isAbstract {
                        writeEntityDescriptor(entity, &w)
                    }
                }
                w.line("]")
            }
            w.line(")")
        }
    }

    private func stringArray(_ values: [String]) -> String {
        "[" + values.map(SwiftNames.stringLiteral).joined(separator: ", ") + "]"
    }

    /// Column names of a unique constraint or index: to-one relationships by their foreign key.
    private func columns(_ names: [String], of entity: Entity) -> [String] {
        names.map { name in
            if let relationship = entity.relationship(named: name),
                let column = layout.foreignKeyColumn(of: relationship, in: entity)
            {
                return column
            }
            return name
        }
    }

    /// An index: `["a", "b"]` when plain, else
    /// `.init(["a", .descending("b")], name: "byB")`.
    private func indexExpression(_ index: Index, of entity: Entity) -> String {
        let names = columns(index.columns, of: entity)
        guard index.name != nil || index.descending.contains(true) else { return stringArray(names) }
        let list = zip(names, index.descending).map { name, descending in
            descending ? ".descending(\(SwiftNames.stringLiteral(name)))" : SwiftNames.stringLiteral(name)
        }
        return ".init([" + list.joined(separator: ", ") + "]"
            + (index.name.map { ", name: " + SwiftNames.stringLiteral($0) } ?? "") + ")"
    }

    private func writeEntityDescriptor(_ entity: Entity, _ w: inout SwiftWriter) {
        w.line("Strata.EntityDescriptor(")
        w.indent { w in
            var tail: [String] = []
            if !entity.uniques.isEmpty {
                tail.append("uniques: [" + entity.uniques.map { stringArray(columns($0, of: entity)) }.joined(separator: ", ") + "]")
            }
            if !entity.indexes.isEmpty {
                tail.append("indexes: [" + entity.indexes.map { indexExpression($0, of: entity) }.joined(separator: ", ") + "]")
            }
            if let renamedFrom = entity.renamedFrom {
                tail.append("renamedFrom: \(SwiftNames.stringLiteral(renamedFrom))")
            }
            if entity.primaryKey != "id" {
                tail.append("primaryKey: \(SwiftNames.stringLiteral(entity.primaryKey))")
            }
            if let access = entity.access {
                tail.append("access: " + accessExpression(access))
            }
            let hasRelationships = !entity.relationships.isEmpty
            // Transient attributes have no column.
            let stored = entity.attributes.filter { !$0.isTransient }
            w.line("name: \(SwiftNames.stringLiteral(entity.name)),")
            if stored.isEmpty {
                w.line("attributes: []" + (hasRelationships || !tail.isEmpty ? "," : ""))
            } else {
                w.line("attributes: [")
                w.indent { w in
                    for attribute in stored {
                        w.call(".init", attributeArguments(attribute), ",")
                    }
                }
                w.line("]" + (hasRelationships || !tail.isEmpty ? "," : ""))
            }
            if hasRelationships {
                w.line("relationships: [")
                w.indent { w in
                    for relationship in entity.relationships {
                        w.call(".init", relationshipArguments(relationship, of: entity), ",")
                    }
                }
                w.line("]" + (tail.isEmpty ? "" : ","))
            }
            for (index, line) in tail.enumerated() {
                w.line(line + (index == tail.count - 1 ? "" : ","))
            }
        }
        w.line("),")
    }

    /// `.everyone`, `.users(owner: "ownerID", members: .init(relationship: "members", attribute: "userID"))`
    /// or `.through("board")`.
    private func accessExpression(_ access: Access) -> String {
        switch access {
        case .everyone:
            return ".everyone"
        case .users(let owner, let members):
            let members = members.map {
                ".init(relationship: \(SwiftNames.stringLiteral($0.relationship)), attribute: \(SwiftNames.stringLiteral($0.attribute)))"
            }
            return ".users(owner: \(owner.map(SwiftNames.stringLiteral) ?? "nil"), members: \(members ?? "nil"))"
        case .through(let relationship):
            return ".through(\(SwiftNames.stringLiteral(relationship)))"
        }
    }

    private func attributeArguments(_ attribute: Attribute) -> [String] {
        var arguments = ["name: \(SwiftNames.stringLiteral(attribute.name))"]
        if case .enumeration(let name) = attribute.type {
            let cases = schema.enumType(named: name)?.cases ?? []
            arguments.append("type: .enumeration(name: \(SwiftNames.stringLiteral(name)), cases: \(stringArray(cases)))")
        } else {
            arguments.append("type: " + SwiftNames.valueTypeCase(attribute.type))
        }
        if attribute.isOptional { arguments.append("isOptional: true") }
        if let value = attribute.defaultValue {
            arguments.append("defaultValue: " + defaultDescriptor(value, type: attribute.type))
        }
        if attribute.isIndexed { arguments.append("isIndexed: true") }
        if attribute.isUnique { arguments.append("isUnique: true") }
        if let renamedFrom = attribute.renamedFrom {
            arguments.append("renamedFrom: \(SwiftNames.stringLiteral(renamedFrom))")
        }
        if !attribute.rules.isEmpty { arguments.append("rules: " + rulesExpression(attribute.rules)) }
        return arguments
    }

    /// `Strata.ValueRules(minimum: 1.databaseValue, maxLength: 80)`.
    private func rulesExpression(_ rules: ValueRules) -> String {
        func bound(_ bound: RuleBound) -> String {
            var literal: String
            switch bound {
            case .int(let value): literal = String(value)
            case .double(let value): literal = "\(value)"
            case .date(let text): literal = SwiftNames.stringLiteral(text)
            }
            if literal.hasPrefix("-") { literal = "(" + literal + ")" }
            return literal + ".databaseValue"
        }
        var arguments: [String] = []
        if let min = rules.min { arguments.append("minimum: " + bound(min)) }
        if let max = rules.max { arguments.append("maximum: " + bound(max)) }
        if let minLength = rules.minLength { arguments.append("minLength: \(minLength)") }
        if let maxLength = rules.maxLength { arguments.append("maxLength: \(maxLength)") }
        if let pattern = rules.pattern { arguments.append("pattern: " + SwiftNames.stringLiteral(pattern)) }
        return "Strata.ValueRules(" + arguments.joined(separator: ", ") + ")"
    }

    private func defaultDescriptor(_ value: DefaultValue, type: AttributeType) -> String {
        switch value {
        case .now: return ".now"
        case .date(let milliseconds):
            return ".value(\(SwiftNames.stringLiteral(DefaultValue.dateText(milliseconds: milliseconds, storage: true))).databaseValue)"
        case .uuid: return ".uuid"
        case .enumCase(let name): return ".value(\(SwiftNames.stringLiteral(name)).databaseValue)"
        default:
            var expression = defaultExpression(value, type: type)
            if expression.hasPrefix("-") { expression = "(" + expression + ")" }
            return ".value(\(expression).databaseValue)"
        }
    }

    private func relationshipArguments(_ relationship: Relationship, of entity: Entity) -> [String] {
        var arguments = [
            "name: \(SwiftNames.stringLiteral(relationship.name))",
            "destination: \(SwiftNames.stringLiteral(relationship.destination))",
            "inverse: \(SwiftNames.stringLiteral(relationship.inverse))",
            "isToMany: \(relationship.isToMany)",
        ]
        if relationship.isRequired { arguments.append("isRequired: true") }
        if relationship.deleteRule != .nullify { arguments.append("deleteRule: .\(relationship.deleteRule.rawValue)") }
        switch layout.storage(of: relationship, in: entity) {
        case .foreignKey(let column):
            arguments.append("storage: .foreignKey(column: \(SwiftNames.stringLiteral(column)))")
        case .inverseForeignKey:
            arguments.append("storage: .inverseForeignKey")
        case .joinTable(let name, let column, let inverseColumn):
            arguments.append(
                "storage: .joinTable(name: \(SwiftNames.stringLiteral(name)), column: \(SwiftNames.stringLiteral(column)), inverseColumn: \(SwiftNames.stringLiteral(inverseColumn)))"
            )
        }
        if let renamedFrom = relationship.renamedFrom {
            arguments.append("renamedFrom: \(SwiftNames.stringLiteral(renamedFrom))")
        }
        if relationship.isOrdered { arguments.append("isOrdered: true") }
        if let position = layout.positionColumn(of: relationship, in: entity) {
            arguments.append("positionColumn: \(SwiftNames.stringLiteral(position))")
        }
        if relationship.isOrdered, !relationship.initialOrder.isEmpty, let destination = schema.entity(named: relationship.destination) {
            let keys = relationship.initialOrder.map { key in
                let path = storedPath(key.path, from: destination)
                return "Strata.SortNode(path: [\(path.map(SwiftNames.stringLiteral).joined(separator: ", "))], descending: \(key.descending))"
            }
            arguments.append("initialOrder: [\(keys.joined(separator: ", "))]")
        }
        if let minCount = relationship.minCount { arguments.append("minCount: \(minCount)") }
        if let maxCount = relationship.maxCount { arguments.append("maxCount: \(maxCount)") }
        return arguments
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
