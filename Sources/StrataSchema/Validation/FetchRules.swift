/// `sort:` key paths end at attributes, through to-one relationships only.
struct SortKeyRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for fetch in entity.fetches {
                check(fetch.sort, from: entity, context, &diagnostics)
            }
        }
    }

    static func check(_ keys: [SortKey], from entity: Entity, _ context: ValidationContext,
                      _ diagnostics: inout DiagnosticBag) {
        for key in keys {
            if case .failure(let failure) = KeyPathResolver.resolve(key.path, from: entity, in: context) {
                diagnostics.error(
                    "sort key: " + failure.message,
                    at: context.sourceMap.keyPathLocation(key.location, offset: failure.offset))
            }
        }
    }
}

/// Section keys are attribute key paths (`by: firstLetter` only on Strings); entity sections
/// name a to-one relationship, and their sort applies to its destination.
struct SectionsRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for fetch in entity.fetches {
                switch fetch.sections {
                case .key(let path, let descending, let byFirstLetter, let location):
                    switch KeyPathResolver.resolve(path, from: entity, in: context) {
                    case .failure(let failure):
                        diagnostics.error(
                            "section key: " + failure.message,
                            at: context.sourceMap.keyPathLocation(location, offset: failure.offset))
                    case .success(let attribute):
                        if byFirstLetter && attribute.type != .string {
                            diagnostics.error(
                                "'by: firstLetter' needs a String key, but '\(path.joined(separator: "."))' is \(attribute.type.name)",
                                at: location)
                        }
                        if let first = fetch.sort.first, first.path == path, first.descending != descending {
                            diagnostics.warning(
                                "sections follow '\(path.joined(separator: "."))' \(descending ? "descending" : "ascending"), so sorting by it \(first.descending ? "descending" : "ascending") has no effect; set 'descending' on the sections instead",
                                at: first.location)
                        }
                    }
                case .entity(let name, let sort, _, let orphans, let location):
                    guard let destination = sectionDestination(name, of: entity, at: location, context, &diagnostics)
                    else { continue }
                    if orphans, entity.relationship(named: name)?.isRequired == true {
                        diagnostics.warning(
                            "'orphans: true' has no effect: '\(entity.name).\(name)' is required, so no item is without a section",
                            at: location)
                    }
                    SortKeyRule.check(sort, from: destination, context, &diagnostics)
                case nil:
                    break
                }
            }
        }
    }

    /// The destination of an entity-sections relationship, or nil after reporting why not.
    static func sectionDestination(
        _ name: String, of entity: Entity, at location: SourceLocation, _ context: ValidationContext,
        _ diagnostics: inout DiagnosticBag
    ) -> Entity? {
        guard let relationship = entity.relationship(named: name) else {
            if entity.attribute(named: name) != nil {
                diagnostics.error(
                    "'\(name)' is an attribute; entity sections need a to-one relationship (for sections by value, use 'key: \(name)')",
                    at: location)
            } else {
                let toOnes = entity.relationships.filter { !$0.isToMany }.map(\.name)
                diagnostics.error(
                    "unknown relationship '\(name)' in '\(entity.name)' for entity sections"
                        + Suggestions.didYouMean(name, in: toOnes),
                    at: location)
            }
            return nil
        }
        if relationship.isToMany {
            diagnostics.error(
                "entity sections need a to-one relationship, but '\(entity.name).\(name)' is to-many", at: location)
            return nil
        }
        return context.entity(relationship.destination)
    }
}

/// Parses and type-checks every `where:`, storing the tree and the inferred parameters.
enum PredicateRule {
    static func resolve(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        let snapshot = schema
        for entityIndex in schema.entities.indices {
            let entity = schema.entities[entityIndex]
            for fetchIndex in entity.fetches.indices {
                let fetch = entity.fetches[fetchIndex]
                if let predicate = fetch.predicate {
                    let checked = check(
                        predicate, in: entity, snapshot, key: .fetch(fetch.name, of: entity.name, .where), sourceMap,
                        &diagnostics)
                    schema.entities[entityIndex].fetches[fetchIndex].predicate = checked
                }
                if case .entity(let name, let sort, let predicate?, let orphans, let location) = fetch.sections,
                    let relationship = entity.relationship(named: name), !relationship.isToMany,
                    let destination = snapshot.entity(named: relationship.destination)
                {
                    let checked = check(
                        predicate, in: destination, snapshot, key: .fetch(fetch.name, of: entity.name, .sectionsWhere),
                        sourceMap, &diagnostics)
                    schema.entities[entityIndex].fetches[fetchIndex].sections = .entity(
                        relationship: name, sort: sort, predicate: checked, orphans: orphans, location: location)
                }
            }
        }
    }

    static func check(
        _ source: PredicateSource, in entity: Entity, _ schema: Schema, key: SourceMapKey, _ sourceMap: SchemaSourceMap,
        _ diagnostics: inout DiagnosticBag
    ) -> PredicateSource {
        let result = PredicateParser.check(source.text, in: entity, schema: schema)
        for failure in result.failures {
            // The exact column where the scalar's style allows it, else the scalar's start.
            let location = sourceMap.predicateLocation(key, offset: failure.offset) ?? source.location
            diagnostics.error(failure.message, at: location)
        }
        var checked = source
        if let expression = result.expression {
            checked.expression = expression
            checked.parameters = result.parameters
        }
        return checked
    }
}

/// A fetch's `where` and its sections' `where` become one Swift function: a `$name` used in
/// both must have one type.
struct FetchParametersRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for fetch in entity.fetches {
                guard let main = fetch.predicate,
                    case .entity(_, _, let sectionsPredicate?, _, _) = fetch.sections
                else { continue }
                let key = SourceMapKey.fetch(fetch.name, of: entity.name, .sectionsWhere)
                for parameter in sectionsPredicate.parameters {
                    guard let first = main.parameters.first(where: { $0.name == parameter.name }),
                        first.type != parameter.type || first.isList != parameter.isList
                            || first.objectIDOf != parameter.objectIDOf
                    else { continue }
                    var location = sectionsPredicate.location
                    if let offset = offset(of: parameter.name, in: sectionsPredicate.text),
                        let exact = context.sourceMap.predicateLocation(key, offset: offset)
                    {
                        location = exact
                    }
                    diagnostics.error(
                        "parameter '$\(parameter.name)' is \(spelled(parameter)) in the sections' 'where' but \(spelled(first)) in the fetch's 'where'",
                        at: location)
                }
            }
        }
    }

    static func spelled(_ parameter: PredicateParameter) -> String {
        let base = parameter.objectIDOf.map { "\($0).ID" } ?? parameter.type.name
        return parameter.isList ? "[\(base)]" : base
    }

    /// The offset, in Unicode scalars, of the first `$name` in `text`.
    static func offset(of name: String, in text: String) -> Int? {
        let scalars = Array(text.unicodeScalars)
        let needle = Array(("$" + name).unicodeScalars)
        guard scalars.count >= needle.count else { return nil }
        for start in 0...(scalars.count - needle.count) where Array(scalars[start..<start + needle.count]) == needle {
            let end = start + needle.count
            if end == scalars.count || !(scalars[end] == "_" || scalars[end].properties.isAlphabetic
                || ("0"..."9").contains(scalars[end]))
            {
                return start
            }
        }
        return nil
    }
}
