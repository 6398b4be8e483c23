import StrataSchema

extension GenerationContext {
    // MARK: - Key paths

    /// A key path resolved against the schema: the Swift expression of a typed column
    /// (or to-one relationship) and its value type.
    struct Column {
        /// `Note.title`, `Note.notebook.name`, `Note.notebookID`.
        var code: String
        /// The Swift value type without optionality (`Swift.String`, `Notebook.ID`).
        var baseType: String
        var attributeType: AttributeType?
        var isOptional: Bool
        /// Set when the path ends at a to-one relationship: its `ToOne` expression.
        var toOneCode: String?
        var swiftType: String { baseType + (isOptional ? "?" : "") }
    }

    func entity(_ name: String, at location: SourceLocation?) throws -> Entity {
        guard let entity = schema.entity(named: name) else {
            throw SchemaError(diagnostics: [.error("unknown entity '\(name)'", at: location)])
        }
        return entity
    }

    /// Resolves `path` from `root`, through to-one relationships.
    func column(_ path: [String], from root: Entity, at location: SourceLocation?) throws -> Column {
        var entity = root
        var code = typeName(root.name)
        var throughToOne = false
        for (index, name) in path.enumerated() {
            let isLast = index == path.count - 1
            if name == entity.primaryKey && isLast {
                return Column(
                    code: code + "." + SwiftNames.member(name), baseType: typeName(entity.name) + ".ID", attributeType: nil,
                    isOptional: throughToOne, toOneCode: nil)
            }
            if let attribute = entity.attribute(named: name), isLast {
                return Column(
                    code: code + "." + SwiftNames.member(name), baseType: SwiftNames.type(attribute.type),
                    attributeType: attribute.type, isOptional: throughToOne || attribute.isOptional, toOneCode: nil)
            }
            if index == path.count - 2, path[index + 1] == "@position",
               let relationship = entity.relationship(named: name), !relationship.isToMany,
               let position = layout.positionColumn(of: relationship, in: entity)
            {
                // `list.@position`: the position column stored beside the foreign key.
                return Column(
                    code: code + "." + SwiftNames.member(position), baseType: "Swift.Int", attributeType: .int,
                    isOptional: true, toOneCode: nil)
            }
            guard let relationship = entity.relationship(named: name), !relationship.isToMany else {
                throw SchemaError(diagnostics: [
                    .error("'\(path.joined(separator: "."))' is not a key path of '\(root.name)'", at: location)
                ])
            }
            if isLast {
                let toOne = code + "." + SwiftNames.member(name)
                let destination = typeName(relationship.destination)
                if let column = layout.foreignKeyColumn(of: relationship, in: entity) {
                    return Column(
                        code: code + "." + SwiftNames.member(column), baseType: destination + ".ID", attributeType: nil,
                        isOptional: throughToOne || !relationship.isRequired, toOneCode: toOne)
                }
                let key = try self.entity(relationship.destination, at: location).primaryKey
                return Column(
                    code: toOne + "." + SwiftNames.member(key), baseType: destination + ".ID", attributeType: nil, isOptional: true,
                    toOneCode: toOne)
            }
            code += "." + SwiftNames.member(name)
            throughToOne = true
            entity = try self.entity(relationship.destination, at: location)
        }
        throw SchemaError(diagnostics: [.error("empty key path", at: location)])
    }

    /// `Note.tags`, or `Strata.ToMany<Note, Note>(["notebook", "notes"])` through to-ones.
    func toMany(_ path: [String], from root: Entity, at location: SourceLocation?) throws -> (code: String, destination: Entity) {
        var entity = root
        for (index, name) in path.enumerated() {
            guard let relationship = entity.relationship(named: name),
                relationship.isToMany == (index == path.count - 1)
            else {
                throw SchemaError(diagnostics: [
                    .error("'\(path.joined(separator: "."))' is not a to-many key path of '\(root.name)'", at: location)
                ])
            }
            entity = try self.entity(relationship.destination, at: location)
        }
        if path.count == 1 {
            return (typeName(root.name) + "." + SwiftNames.member(path[0]), entity)
        }
        let literal = "[" + path.map(SwiftNames.stringLiteral).joined(separator: ", ") + "]"
        return ("Strata.ToMany<\(typeName(root.name)), \(typeName(entity.name))>(\(literal))", entity)
    }

    // MARK: - Sort keys

    func sortKeys(_ keys: [SortKey], from root: Entity) throws -> String {
        let rendered = try keys.map { key in
            try column(key.path, from: root, at: key.location).code + (key.descending ? ".descending" : ".ascending")
        }
        return "[" + rendered.joined(separator: ", ") + "]"
    }

    // MARK: - Fetches

    func writeFetches(of entity: Entity, _ w: inout SwiftWriter) throws {
        let type = typeName(entity.name)
        var declarations: [[String]] = []
        for fetch in entity.fetches {
            var sub = SwiftWriter()
            try writeFetch(fetch, of: entity, &sub)
            declarations.append(sub.lines)
        }
        w.block("extension \(type)") { w in
            w.line("/// The fetches of the model's `fetches:` entries.")
            w.block("public enum Fetches") { w in
                for (index, lines) in declarations.enumerated() {
                    if index > 0 { w.line("") }
                    for line in lines { w.line(line) }
                }
            }
        }
    }

    private func writeFetch(_ fetch: Fetch, of entity: Entity, _ w: inout SwiftWriter) throws {
        let type = typeName(entity.name)
        var parameters: [PredicateParameter] = fetch.predicate?.parameters ?? []
        var arguments: [String] = []
        var sectionType = "Strata.NoSection"
        if let predicate = fetch.predicate {
            let renderer = PredicateRenderer(context: self, parameters: parameters, location: predicate.location)
            arguments.append("where: " + (try renderer.render(predicate.expression, root: entity)))
        }
        if !fetch.sort.isEmpty {
            arguments.append("sortedBy: " + (try sortKeys(fetch.sort, from: entity)))
        }
        switch fetch.sections {
        case nil:
            break
        case .key(let path, let descending, let byFirstLetter, let location)?:
            let key = try column(path, from: entity, at: location)
            let suffix = descending ? ", descending: true" : ""
            if byFirstLetter {
                guard key.attributeType == .string else {
                    throw SchemaError(diagnostics: [
                        .error("sections 'by: firstLetter' need a String key path", at: location)
                    ])
                }
                sectionType = "Swift.String"
                arguments.append("sections: .firstLetter(of: \(key.code)\(suffix))")
            } else {
                sectionType = key.swiftType
                arguments.append("sections: .key(\(key.code)\(suffix))")
            }
        case .entity(let relationshipName, let sort, let predicate, let orphans, let location)?:
            guard let relationship = entity.relationship(named: relationshipName), !relationship.isToMany else {
                throw SchemaError(diagnostics: [
                    .error("sections 'entity: \(relationshipName)' need a to-one relationship of '\(entity.name)'", at: location)
                ])
            }
            let destination = try self.entity(relationship.destination, at: location)
            sectionType = typeName(destination.name)
            var sectionArguments = ["\(type).\(SwiftNames.member(relationshipName))"]
            if !sort.isEmpty { sectionArguments.append("sortedBy: " + (try sortKeys(sort, from: destination))) }
            if let predicate {
                for parameter in predicate.parameters where !parameters.contains(where: { $0.name == parameter.name }) {
                    parameters.append(parameter)
                }
                let renderer = PredicateRenderer(context: self, parameters: parameters, location: predicate.location)
                sectionArguments.append("where: " + (try renderer.render(predicate.expression, root: destination)))
            }
            if orphans { sectionArguments.append("orphans: true") }
            arguments.append("sections: .entity(" + sectionArguments.joined(separator: ", ") + ")")
        }

        let resultType = "Strata.ResultsRequest<\(type), \(sectionType)>"
        w.docComment(fetch.doc)
        let name = SwiftNames.identifier(fetch.name)
        if parameters.isEmpty {
            w.block("public static var \(name): \(resultType)") { w in w.call(".init", arguments) }
        } else {
            let signature = parameters.map { parameter in
                "\(SwiftNames.identifier(parameter.name)): \(PredicateRenderer.swiftType(of: parameter))"
            }
            w.call("public static func \(name)", signature, " -> \(resultType) {")
            w.indent { w in w.call(".init", arguments) }
            w.line("}")
        }
    }
}
