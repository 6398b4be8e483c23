/// `abstract: true` and `extends:`: an abstract entity is a template. It has no table; the
/// attributes, unique constraints and indexes it declares (and those it inherits) are copied
/// into every entity that extends it, which then stores them in its own table.
///
/// `resolve` checks the hierarchy (the parent exists and is abstract, no cycle, an attribute
/// redeclared only with the same type and optionality) and copies the inherited attributes,
/// so that every later rule, the generator and the runtime see each concrete entity whole;
/// `copyConstraints`, after the rules, copies the unique constraints and indexes.
/// Abstract entities may not have relationships or fetches, and no relationship may point
/// to one: see Decisions.md, "Abstract entities are templates".
enum InheritanceRule {
    static func resolve(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        let context = ValidationContext(schema: schema, sourceMap: sourceMap)
        var valid: [String: String] = [:]  // entity → its checked parent
        for entity in schema.entities {
            if entity.isAbstract {
                checkTemplate(entity, context, &diagnostics)
            }
            guard let parentName = entity.parent else { continue }
            let location = context.location(.entity(entity.name, .extends), or: entity.location)
            guard let parent = context.entity(parentName) else {
                let abstracts = schema.entities.filter(\.isAbstract).map(\.name)
                diagnostics.error(
                    "unknown entity '\(parentName)' in 'extends' of '\(entity.name)'"
                        + Suggestions.didYouMean(parentName, in: abstracts),
                    at: location)
                continue
            }
            guard parent.isAbstract else {
                diagnostics.error(
                    "'\(entity.name)' extends '\(parentName)', which is not abstract; only an abstract entity can be "
                        + "extended: add 'abstract: true' to '\(parentName)' (it then has no table of its own)",
                    at: location)
                continue
            }
            valid[entity.name] = parentName
        }
        // Cycles: each is reported once, at its first entity in declaration order.
        var inCycle: Set<String> = []
        for entity in schema.entities where valid[entity.name] != nil && !inCycle.contains(entity.name) {
            var chain = [entity.name]
            var current = entity.name
            while let next = valid[current] {
                if next == entity.name {
                    inCycle.formUnion(chain)
                    diagnostics.error(
                        "entities extend each other in a cycle (\((chain + [entity.name]).joined(separator: " → "))); "
                            + "remove 'extends' from one of them",
                        at: context.location(.entity(entity.name, .extends), or: entity.location))
                    break
                }
                if chain.contains(next) { break }  // a cycle further up, reported from its own entity
                chain.append(next)
                current = next
            }
        }
        for name in inCycle { valid[name] = nil }

        // Copy parents into children, parents first.
        var done: Set<String> = []
        func flatten(_ name: String) {
            guard !done.contains(name), let index = schema.entities.firstIndex(where: { $0.name == name }) else {
                return
            }
            done.insert(name)
            guard let parentName = valid[name], !inCycle.contains(parentName) else { return }
            flatten(parentName)
            guard let parent = schema.entities.first(where: { $0.name == parentName }) else { return }
            var entity = schema.entities[index]
            var attributes: [Attribute] = []
            for inherited in parent.attributes {
                var copy = inherited
                copy.inheritedFrom = inherited.inheritedFrom ?? parent.name
                if let own = entity.attribute(named: inherited.name) {
                    if own.type != inherited.type || own.isOptional != inherited.isOptional {
                        diagnostics.error(
                            "attribute '\(entity.name).\(own.name)' redeclares the attribute inherited from "
                                + "'\(copy.inheritedFrom!)' as \(spelled(own)), but it is \(spelled(inherited)); "
                                + "an entity may change an inherited attribute's default, doc or index, not its type",
                            at: context.location(.attribute(own.name, of: entity.name, .type), or: own.location))
                        diagnostics.append(Diagnostic(
                            .note, "'\(inherited.name)' is declared here", at: inherited.location))
                    }
                    // The entity's own declaration replaces the inherited one, in its place.
                    attributes.append(own)
                    continue
                }
                attributes.append(copy)
            }
            let replaced = Set(attributes.map(\.name))
            entity.attributes = attributes + entity.attributes.filter { !replaced.contains($0.name) }
            schema.entities[index] = entity
        }
        for entity in schema.entities { flatten(entity.name) }
    }

    /// Appends the unique constraints and indexes of every ancestor to each entity's own,
    /// once every rule has checked them where they are written (so that a mistake in an
    /// abstract entity's lists is reported once, and the source map's positions of each
    /// entity's own lists stay right).
    static func copyConstraints(_ schema: inout Schema) {
        let byName = Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for index in schema.entities.indices {
            var seen: Set<String> = [schema.entities[index].name]
            var parentName = schema.entities[index].parent
            while let name = parentName, seen.insert(name).inserted, let parent = byName[name], parent.isAbstract {
                for unique in parent.uniques where !schema.entities[index].uniques.contains(unique) {
                    schema.entities[index].uniques.append(unique)
                }
                for list in parent.indexes where !schema.entities[index].indexes.contains(list) {
                    schema.entities[index].indexes.append(list)
                }
                parentName = parent.parent
            }
        }
    }

    /// What an abstract entity may not declare.
    private static func checkTemplate(_ entity: Entity, _ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for relationship in entity.relationships {
            diagnostics.error(
                "abstract entity '\(entity.name)' cannot declare the relationship '\(relationship.name)': its inverse "
                    + "could point back to only one entity; declare it on each entity that extends '\(entity.name)'",
                at: relationship.location)
        }
        for fetch in entity.fetches {
            diagnostics.error(
                "abstract entity '\(entity.name)' has no table to fetch from; declare the fetch '\(fetch.name)' on "
                    + "each entity that extends it",
                at: fetch.location)
        }
        if entity.renamedFrom != nil {
            diagnostics.error(
                "abstract entity '\(entity.name)' has no table to rename; remove 'renamedFrom'",
                at: entity.location)
        }
    }

    private static func spelled(_ attribute: Attribute) -> String {
        attribute.type.name + (attribute.isOptional ? " (optional)" : "")
    }
}

/// No relationship points to an abstract entity: it has no table, so no key could refer to it.
struct AbstractDestinationRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for relationship in entity.relationships {
                guard let destination = context.entity(relationship.destination), destination.isAbstract else {
                    continue
                }
                let concrete = context.schema.entities.filter { !$0.isAbstract && extends($0, destination.name, context) }
                    .map { "'\($0.name)'" }
                diagnostics.error(
                    "relationship '\(entity.name).\(relationship.name)' points to the abstract entity '\(destination.name)', "
                        + "which has no table; point it to an entity that extends it"
                        + (concrete.isEmpty ? "" : " (\(concrete.joined(separator: ", ")))"),
                    at: context.location(.relationship(relationship.name, of: entity.name, .to), or: relationship.location))
            }
        }
    }

    /// Whether `entity` extends `ancestor`, directly or through other abstract entities.
    static func extends(_ entity: Entity, _ ancestor: String, _ context: ValidationContext) -> Bool {
        var seen: Set<String> = []
        var current = entity.parent
        while let name = current, seen.insert(name).inserted {
            if name == ancestor { return true }
            current = context.entity(name)?.parent
        }
        return false
    }
}
