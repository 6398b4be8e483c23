import Foundation
/// YAML trees → `Schema`: the structure of the schema language, version 1.
///
/// The decoder checks shapes and keys (unknown keys get a "did you mean"), and records in a
/// `SchemaSourceMap` where things were written. Cross-references, names, defaults and
/// predicates are checked afterwards by `SchemaValidator`, once every file is decoded.
public struct SchemaDecoder {
    /// `written` when it could be a member's name (the element written without its list),
    /// else `name`: an example that is itself invalid would mislead.
    static func exampleName(_ written: String?) -> String {
        guard let written, let first = written.unicodeScalars.first,
              first == "_" || CharacterSet.letters.contains(first),
              written.unicodeScalars.allSatisfy({ $0 == "_" || CharacterSet.alphanumerics.contains($0) })
        else { return "name" }
        return written
    }

    static let rootKeys = ["version", "primaryKey", "enums", "entities"]
    static let entityKeys = [
        "doc", "abstract", "extends", "primaryKey", "attributes", "relationships", "unique", "indexes", "fetches", "renamedFrom",
        "access",
    ]
    static let attributeKeys = [
        "type", "optional", "default", "indexed", "unique", "transient", "doc", "renamedFrom",
        "min", "max", "minLength", "maxLength", "pattern",
    ]
    static let relationshipKeys = [
        "to", "many", "inverse", "required", "deleteRule", "ordered", "initialOrder", "foreignKey", "doc",
        "renamedFrom", "minCount", "maxCount",
    ]
    static let indexKeys = ["name", "columns"]
    static let accessKeys = ["owner", "members", "through"]
    static let fetchKeys = ["where", "sort", "sections", "doc"]
    static let keySectionsKeys = ["key", "descending", "by"]
    static let entitySectionsKeys = ["entity", "sort", "where", "orphans"]

    var diagnostics: DiagnosticBag
    var sourceMap = SchemaSourceMap()
    /// The keys suggested for unknown keys by the last `fields(of:)`: a missing required key
    /// that was suggested is not reported again.
    var suggestedKeys: Set<String> = []

    /// Decodes the roots of every file of one model into one schema.
    public static func decode(_ roots: [YAMLNode], modelName: String, diagnostics: inout DiagnosticBag) -> Schema {
        var sourceMap = SchemaSourceMap()
        return decode(roots, modelName: modelName, sourceMap: &sourceMap, diagnostics: &diagnostics)
    }

    /// Decodes the roots of every file of one model into one schema, recording locations.
    public static func decode(
        _ roots: [YAMLNode], modelName: String, sourceMap: inout SchemaSourceMap, diagnostics: inout DiagnosticBag
    ) -> Schema {
        var decoder = SchemaDecoder(diagnostics: diagnostics)
        var schema = Schema(name: modelName)
        for root in roots {
            decoder.decodeFile(root, into: &schema)
        }
        diagnostics = decoder.diagnostics
        sourceMap = decoder.sourceMap
        return schema
    }

    // MARK: - Files

    mutating func decodeFile(_ root: YAMLNode, into schema: inout Schema) {
        guard let entries = root.mapping else {
            if root.scalar?.isNull == true { return }
            error("a model file must be a mapping with 'version', 'enums' and 'entities', not \(root.kindName)",
                  at: root.location)
            return
        }
        let fields = fields(of: entries, allowed: Self.rootKeys, in: "the model file")
        if let version = fields["version"] {
            if let scalar = version.value.scalar, scalar.style != .plain, scalar.value == "1" {
                error("'version' must be the integer 1, not the string \"1\"; remove the quotes", at: version.value.location)
            } else if version.value.scalar?.style != .plain || version.value.scalar?.value != "1" {
                let text = version.value.scalar?.value ?? version.value.kindName
                error("unsupported schema version '\(text)'; this version of Strata reads version 1",
                      at: version.value.location)
            }
        }
        if let enums = fields["enums"] {
            for entry in mappingEntries(enums.value, what: "'enums'") {
                guard let name = nameValue(of: entry.key) else { continue }
                if let first = schema.enums.first(where: { $0.name == name }) {
                    duplicate("enum", name, at: entry.key.location, first: first.location)
                    continue
                }
                schema.enums.append(decodeEnum(name, entry))
            }
        }
        // `primaryKey:` at the top of a file names the key of every entity of that file that
        // does not name its own.
        let fileKey = fields["primaryKey"].flatMap { field in
            string(field, "primaryKey").map { ($0, field.value.location) }
        }
        if let entities = fields["entities"] {
            for entry in mappingEntries(entities.value, what: "'entities'") {
                guard let name = nameValue(of: entry.key) else { continue }
                if let first = schema.entities.first(where: { $0.name == name }) {
                    duplicate("entity", name, at: entry.key.location, first: first.location)
                    continue
                }
                var entity = decodeEntity(name, entry)
                if let (key, location) = fileKey, !entity.isAbstract, sourceMap.locations[.entity(name, .primaryKey)] == nil {
                    entity.primaryKey = key
                    sourceMap.locations[.entity(name, .primaryKey)] = location
                }
                schema.entities.append(entity)
            }
        }
    }

    mutating func decodeEnum(_ name: String, _ entry: YAMLMappingEntry) -> EnumType {
        var enumType = EnumType(name: name, cases: [], location: entry.key.location)
        guard let items = entry.value.sequence else {
            error("enum '\(name)' must be a list of case names, e.g. [low, normal, high]", at: entry.value.location)
            return enumType
        }
        if items.isEmpty {
            error("enum '\(name)' has no cases", at: entry.value.location)
        }
        for item in items {
            guard let caseName = nameValue(of: item) else { continue }
            enumType.cases.append(caseName)
            sourceMap.locations[.enumCase(enumType.cases.count - 1, of: name)] = item.location
        }
        return enumType
    }

    // MARK: - Entities

    mutating func decodeEntity(_ name: String, _ entry: YAMLMappingEntry) -> Entity {
        var entity = Entity(name: name, location: entry.key.location)
        if entry.value.scalar?.isNull == true { return entity }
        guard let entries = entry.value.mapping else {
            error("entity '\(name)' must be a mapping with 'attributes', 'relationships', …, not \(entry.value.kindName)",
                  at: entry.value.location)
            return entity
        }
        let fields = fields(of: entries, allowed: Self.entityKeys, in: "entity '\(name)'")
        entity.doc = fields["doc"].flatMap { string($0, "doc") }
        entity.renamedFrom = fields["renamedFrom"].flatMap { string($0, "renamedFrom") }
        if let abstract = fields["abstract"] {
            entity.isAbstract = bool(abstract, "abstract") ?? false
            sourceMap.locations[.entity(name, .abstract)] = abstract.key.location
        }
        if let primaryKey = fields["primaryKey"], let key = string(primaryKey, "primaryKey") {
            if entity.isAbstract {
                error(
                    "abstract entity '\(name)' has no table and so no primary key; set 'primaryKey:' on the entities that extend it, or at the top of the file",
                    at: primaryKey.key.location)
            } else {
                entity.primaryKey = key
                sourceMap.locations[.entity(name, .primaryKey)] = primaryKey.value.location
            }
        }
        if let extends = fields["extends"] {
            entity.parent = string(extends, "extends")
            sourceMap.locations[.entity(name, .extends)] = extends.value.location
        }
        if let attributes = fields["attributes"] {
            for attribute in mappingEntries(attributes.value, what: "'attributes' of '\(name)'") {
                if let decoded = decodeAttribute(attribute, entity: name) { entity.attributes.append(decoded) }
            }
        }
        if let relationships = fields["relationships"] {
            for relationship in mappingEntries(relationships.value, what: "'relationships' of '\(name)'") {
                if let decoded = decodeRelationship(relationship, entity: name) {
                    entity.relationships.append(decoded)
                }
            }
        }
        if let unique = fields["unique"] {
            entity.uniques = nameLists(unique, entity: name, constraint: .unique)
        }
        if let indexes = fields["indexes"] {
            entity.indexes = indexList(indexes, entity: name)
        }
        if let fetches = fields["fetches"] {
            for fetch in mappingEntries(fetches.value, what: "'fetches' of '\(name)'") {
                if let decoded = decodeFetch(fetch, entity: name) { entity.fetches.append(decoded) }
            }
        }
        if let access = fields["access"] {
            sourceMap.locations[.access(of: name, .key)] = access.key.location
            entity.access = decodeAccess(access, entity: name)
        }
        return entity
    }

    /// `access: everyone`, or `access: { owner: a, members: r.a }`, or `access: { through: r }`.
    mutating func decodeAccess(_ field: YAMLMappingEntry, entity name: String) -> Access? {
        let example = "'everyone', or a mapping such as { owner: ownerID }, { members: members.userID } or { through: board }"
        if let scalar = field.value.scalar {
            guard !scalar.isNull, scalar.value == "everyone" else {
                error("'access' of '\(name)' must be \(example)", at: field.value.location)
                return nil
            }
            return .everyone
        }
        guard let entries = field.value.mapping else {
            error("'access' of '\(name)' must be \(example), not \(field.value.kindName)", at: field.value.location)
            return nil
        }
        let fields = fields(of: entries, allowed: Self.accessKeys, in: "'access' of '\(name)'")
        var owner: String?
        var members: AccessMembers?
        var through: String?
        if let field = fields["owner"], let value = string(field, "owner") {
            owner = value
            sourceMap.locations[.access(of: name, .owner)] = field.value.location
        }
        if let field = fields["members"], let value = string(field, "members") {
            sourceMap.locations[.access(of: name, .members)] = field.value.location
            let parts = value.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty {
                members = AccessMembers(relationship: parts[0], attribute: parts[1])
            } else {
                error(
                    "'members' of '\(name)' names a to-many relationship and the attribute of its objects that holds a user id, e.g. members.userID",
                    at: field.value.location)
                return nil
            }
        }
        if let field = fields["through"], let value = string(field, "through") {
            through = value
            sourceMap.locations[.access(of: name, .through)] = field.value.location
        }
        if let through {
            if owner != nil || members != nil {
                error(
                    "'access' of '\(name)' has 'through' beside 'owner' or 'members': an object reached through '\(through)' is in the data of whoever may read that object; give the owner or members to that entity",
                    at: field.key.location)
                return nil
            }
            return .through(through)
        }
        guard owner != nil || members != nil else {
            if fields.isEmpty, entries.isEmpty {
                error("'access' of '\(name)' is empty; it must be \(example)", at: field.value.location)
            }
            return nil
        }
        return .users(owner: owner, members: members)
    }

    /// `unique: [[a, b], [c]]` and `indexes: [[a, b]]`.
    mutating func nameLists(_ field: YAMLMappingEntry, entity: String, constraint: SourceMapKey.Constraint)
        -> [[String]]
    {
        let key = constraint.rawValue
        if field.value.scalar?.isNull == true { return [] }
        guard let lists = field.value.sequence else {
            error("'\(key)' of '\(entity)' must be a list of name lists, e.g. [[name]]", at: field.value.location)
            return []
        }
        var result: [[String]] = []
        for (i, list) in lists.enumerated() {
            guard let names = list.sequence else {
                error("each element of '\(key)' is a list of names, e.g. [[\(Self.exampleName(list.scalar?.value))]]",
                      at: list.location)
                continue
            }
            if names.isEmpty {
                error("an element of '\(key)' of '\(entity)' is empty", at: list.location)
                continue
            }
            var decoded: [String] = []
            for (j, nameNode) in names.enumerated() {
                guard let name = nameValue(of: nameNode) else { continue }
                if constraint == .unique, name.hasPrefix("-"), name.count > 1 {
                    error("a unique constraint has no direction; write '\(name.dropFirst())' without '-' (only 'indexes' columns can be descending)",
                          at: nameNode.location)
                    continue
                }
                sourceMap.locations[.constraintName(constraint, of: entity, list: i, position: j)] = nameNode.location
                decoded.append(name)
            }
            sourceMap.locations[.constraint(constraint, of: entity, list: i)] = list.location
            result.append(decoded)
        }
        return result
    }

    /// `indexes: [[a, -b], { name: byB, columns: [-b] }]`: each element a list of names (a
    /// `-` prefix makes the column descending) or a mapping with `columns` and `name`.
    mutating func indexList(_ field: YAMLMappingEntry, entity: String) -> [Index] {
        if field.value.scalar?.isNull == true { return [] }
        guard let elements = field.value.sequence else {
            error("'indexes' of '\(entity)' must be a list of name lists, e.g. [[name]]", at: field.value.location)
            return []
        }
        var result: [Index] = []
        for element in elements {
            // Source-map keys by position in `Entity.indexes`.
            let i = result.count
            var columnsNode = element
            var indexName: String?
            if let entries = element.mapping {
                let fields = fields(of: entries, allowed: Self.indexKeys, in: "an index of '\(entity)'")
                if let nameField = fields["name"], let text = string(nameField, "name") {
                    indexName = text
                    sourceMap.locations[.indexName(of: entity, list: i)] = nameField.value.location
                }
                guard let columns = fields["columns"] else {
                    if !suggestedKeys.contains("columns") {
                        error("an index of '\(entity)' needs 'columns', e.g. { name: \(indexName ?? "byDate"), columns: [date] }",
                              at: element.location)
                    }
                    continue
                }
                columnsNode = columns.value
            }
            guard let names = columnsNode.sequence else {
                error("each element of 'indexes' is a list of names, e.g. [[\(Self.exampleName(columnsNode.scalar?.value))]], or a mapping { name: …, columns: […] }",
                      at: columnsNode.location)
                continue
            }
            if names.isEmpty {
                error("an element of 'indexes' of '\(entity)' is empty", at: columnsNode.location)
                continue
            }
            var index = Index(columns: [], name: indexName)
            for (j, nameNode) in names.enumerated() {
                guard var name = nameValue(of: nameNode) else { continue }
                var descending = false
                if name.hasPrefix("-") {
                    descending = true
                    name.removeFirst()
                } else if name.hasPrefix("+") {
                    name.removeFirst()
                }
                sourceMap.locations[.constraintName(.indexes, of: entity, list: i, position: j)] = nameNode.location
                index.columns.append(name)
                index.descending.append(descending)
            }
            sourceMap.locations[.constraint(.indexes, of: entity, list: i)] = columnsNode.location
            result.append(index)
        }
        return result
    }

    // MARK: - Attributes

    mutating func decodeAttribute(_ entry: YAMLMappingEntry, entity: String) -> Attribute? {
        guard let name = nameValue(of: entry.key) else { return nil }
        let qualified = "\(entity).\(name)"
        if let scalar = entry.value.scalar {
            guard let type = attributeType(scalar, at: entry.value.location, attribute: name) else { return nil }
            sourceMap.locations[.attribute(name, of: entity, .type)] = entry.value.location
            return Attribute(name: name, type: type, location: entry.key.location)
        }
        guard let entries = entry.value.mapping else {
            error("attribute '\(qualified)' must be a type name or a mapping with 'type', not \(entry.value.kindName)",
                  at: entry.value.location)
            return nil
        }
        let fields = fields(of: entries, allowed: Self.attributeKeys, in: "attribute '\(qualified)'")
        guard let typeField = fields["type"] else {
            if suggestedKeys.contains("type") { return nil }
            error("attribute '\(qualified)' needs a 'type'", at: entry.value.location)
            return nil
        }
        guard let typeScalar = scalar(typeField, "type"),
            let type = attributeType(typeScalar, at: typeField.value.location, attribute: name)
        else { return nil }
        sourceMap.locations[.attribute(name, of: entity, .type)] = typeField.value.location
        var attribute = Attribute(name: name, type: type, location: entry.key.location)
        attribute.isOptional = fields["optional"].flatMap { bool($0, "optional") } ?? false
        attribute.isIndexed = fields["indexed"].flatMap { bool($0, "indexed") } ?? false
        attribute.isUnique = fields["unique"].flatMap { bool($0, "unique") } ?? false
        if let transient = fields["transient"] {
            attribute.isTransient = bool(transient, "transient") ?? false
            sourceMap.locations[.attribute(name, of: entity, .transient)] = transient.key.location
        }
        attribute.doc = fields["doc"].flatMap { string($0, "doc") }
        attribute.renamedFrom = fields["renamedFrom"].flatMap { string($0, "renamedFrom") }
        if let defaultField = fields["default"] {
            if defaultField.value.scalar == nil {
                error("the default of '\(qualified)' must be a scalar, not \(defaultField.value.kindName)",
                      at: defaultField.value.location)
            } else {
                sourceMap.defaults[.attribute(name, of: entity, .default)] = defaultField.value
                sourceMap.locations[.attribute(name, of: entity, .default)] = defaultField.value.location
            }
        }
        decodeRules(fields, into: &attribute, entity: entity)
        return attribute
    }

    /// `min`/`max` (kept as scalars for the validator, which knows the type), `minLength`,
    /// `maxLength` and `pattern`.
    mutating func decodeRules(_ fields: [String: YAMLMappingEntry], into attribute: inout Attribute, entity: String) {
        for (key, field) in [("min", SourceMapKey.AttributeField.min), ("max", .max)] {
            guard let entry = fields[key], let value = scalar(entry, key) else { continue }
            if value.isNull {
                error("'\(key)' needs a value", at: entry.value.location)
                continue
            }
            sourceMap.ruleBounds[.attribute(attribute.name, of: entity, field)] = entry.value
            sourceMap.locations[.attribute(attribute.name, of: entity, field)] = entry.value.location
        }
        if let entry = fields["minLength"] {
            attribute.rules.minLength = count(entry, "minLength")
            sourceMap.locations[.attribute(attribute.name, of: entity, .minLength)] = entry.value.location
        }
        if let entry = fields["maxLength"] {
            attribute.rules.maxLength = count(entry, "maxLength")
            sourceMap.locations[.attribute(attribute.name, of: entity, .maxLength)] = entry.value.location
        }
        if let entry = fields["pattern"] {
            attribute.rules.pattern = string(entry, "pattern")
            sourceMap.locations[.attribute(attribute.name, of: entity, .pattern)] = entry.value.location
        }
    }

    mutating func attributeType(_ scalar: YAMLScalar, at location: SourceLocation, attribute: String)
        -> AttributeType?
    {
        let text = scalar.value
        if text.hasSuffix("?") {
            error("'\(text)' is not a type; write { type: \(text.dropLast()), optional: true } for an optional attribute",
                  at: location)
            return nil
        }
        if scalar.isNull {
            error("attribute '\(attribute)' needs a type", at: location)
            return nil
        }
        if text.hasPrefix("Codable<") || text == "Codable" {
            guard text.hasSuffix(">"), text.count > "Codable<>".count else {
                error("'Codable' needs the Swift type it stores, e.g. Codable<Address>", at: location)
                return nil
            }
            let swiftType = String(text.dropFirst("Codable<".count).dropLast())
            guard SwiftTypeSyntax.isValid(swiftType) else {
                error("'\(swiftType)' in '\(text)' is not a Swift type name; write a type such as Address, "
                      + "MyKit.Address, [String] or [String: Int]", at: location)
                return nil
            }
            return .codable(SwiftTypeSyntax.normalized(swiftType))
        }
        return AttributeType.builtins[text] ?? .enumeration(text)
    }

    // MARK: - Relationships

    mutating func decodeRelationship(_ entry: YAMLMappingEntry, entity: String) -> Relationship? {
        guard let name = nameValue(of: entry.key) else { return nil }
        let qualified = "\(entity).\(name)"
        guard let entries = entry.value.mapping else {
            error("relationship '\(qualified)' must be a mapping with 'to' and 'inverse', not \(entry.value.kindName)",
                  at: entry.value.location)
            return nil
        }
        let fields = fields(of: entries, allowed: Self.relationshipKeys, in: "relationship '\(qualified)'")
        // A missing `to` or `inverse` leaves an empty name, which the validator skips, so the
        // other side of the pair doesn't report a second, derived error.
        var destination = ""
        if let to = fields["to"] {
            destination = string(to, "to") ?? ""
            sourceMap.locations[.relationship(name, of: entity, .to)] = to.value.location
        } else if !suggestedKeys.contains("to") {
            error("relationship '\(qualified)' needs 'to', its destination entity", at: entry.value.location)
        }
        var inverse = ""
        if let inverseField = fields["inverse"] {
            inverse = string(inverseField, "inverse") ?? ""
            sourceMap.locations[.relationship(name, of: entity, .inverse)] = inverseField.value.location
        } else if !suggestedKeys.contains("inverse") {
            error("relationship '\(qualified)' needs an 'inverse': the relationship of '\(destination)' that points back",
                  at: entry.key.location)
        }
        var relationship = Relationship(
            name: name, destination: destination, inverse: inverse, location: entry.key.location)
        relationship.isToMany = fields["many"].flatMap { bool($0, "many") } ?? false
        if let required = fields["required"] {
            relationship.isRequired = bool(required, "required") ?? false
            sourceMap.locations[.relationship(name, of: entity, .required)] = required.key.location
        }
        if let rule = fields["deleteRule"], let text = string(rule, "deleteRule") {
            sourceMap.locations[.relationship(name, of: entity, .deleteRule)] = rule.value.location
            if let deleteRule = DeleteRule(rawValue: text) {
                relationship.deleteRule = deleteRule
            } else {
                error("unknown delete rule '\(text)'; expected nullify, cascade, deny or noAction"
                      + Suggestions.didYouMean(text, in: DeleteRule.allCases.map(\.rawValue)),
                      at: rule.value.location)
            }
        }
        if let ordered = fields["ordered"] {
            relationship.isOrdered = bool(ordered, "ordered") ?? false
            sourceMap.locations[.relationship(name, of: entity, .ordered)] = ordered.key.location
        }
        if let initialOrder = fields["initialOrder"] {
            relationship.initialOrder = sortKeys(initialOrder)
            sourceMap.locations[.relationship(name, of: entity, .initialOrder)] = initialOrder.key.location
        }
        if let minCount = fields["minCount"] {
            relationship.minCount = count(minCount, "minCount")
            sourceMap.locations[.relationship(name, of: entity, .minCount)] = minCount.value.location
        }
        if let maxCount = fields["maxCount"] {
            relationship.maxCount = count(maxCount, "maxCount")
            sourceMap.locations[.relationship(name, of: entity, .maxCount)] = maxCount.value.location
        }
        if let foreignKey = fields["foreignKey"], let text = string(foreignKey, "foreignKey") {
            relationship.foreignKey = text
            sourceMap.locations[.relationship(name, of: entity, .foreignKey)] = foreignKey.value.location
        }
        relationship.doc = fields["doc"].flatMap { string($0, "doc") }
        relationship.renamedFrom = fields["renamedFrom"].flatMap { string($0, "renamedFrom") }
        return relationship
    }

    // MARK: - Fetches

    mutating func decodeFetch(_ entry: YAMLMappingEntry, entity: String) -> Fetch? {
        guard let name = nameValue(of: entry.key) else { return nil }
        var fetch = Fetch(name: name, location: entry.key.location)
        if entry.value.scalar?.isNull == true { return fetch }
        guard let entries = entry.value.mapping else {
            error("fetch '\(entity).\(name)' must be a mapping with 'where', 'sort', 'sections', not \(entry.value.kindName)",
                  at: entry.value.location)
            return nil
        }
        let fields = fields(of: entries, allowed: Self.fetchKeys, in: "fetch '\(entity).\(name)'")
        fetch.doc = fields["doc"].flatMap { string($0, "doc") }
        if let predicate = fields["where"] {
            fetch.predicate = predicateSource(predicate, key: .fetch(name, of: entity, .where))
        }
        if let sort = fields["sort"] {
            fetch.sort = sortKeys(sort)
        }
        if let sections = fields["sections"] {
            fetch.sections = decodeSections(sections, fetch: name, of: entity)
        }
        return fetch
    }

    mutating func decodeSections(_ field: YAMLMappingEntry, fetch name: String, of entity: String) -> Sections? {
        let fetch = "\(entity).\(name)"
        guard let entries = field.value.mapping else {
            error("'sections' of '\(fetch)' must be a mapping: { key: … } or { entity: … }", at: field.value.location)
            return nil
        }
        let names = entries.compactMap { $0.key.scalar?.value }
        let isKey = names.contains("key")
        let isEntity = names.contains("entity")
        if isKey && isEntity {
            error("'sections' of '\(fetch)' has both 'key' and 'entity'; use one", at: field.value.location)
            return nil
        }
        if !isKey && !isEntity {
            _ = fields(of: entries, allowed: Self.keySectionsKeys + Self.entitySectionsKeys, in: "'sections'")
            error("'sections' of '\(fetch)' needs 'key' (sections by value) or 'entity' (sections by a to-one relationship)",
                  at: field.value.location)
            return nil
        }
        if isKey {
            let fields = fields(of: entries, allowed: Self.keySectionsKeys, in: "'sections' of '\(fetch)'")
            guard let keyField = fields["key"], let path = string(keyField, "key") else { return nil }
            sourceMap.locations[.fetch(name, of: entity, .sectionsKey)] = keyField.value.location
            sourceMap.keyPathNodes[keyField.value.location] = keyField.value
            var byFirstLetter = false
            if let by = fields["by"], let text = string(by, "by") {
                if text == "firstLetter" {
                    byFirstLetter = true
                } else {
                    error("unknown value '\(text)' for 'by'; the only grouping is 'firstLetter'", at: by.value.location)
                }
            }
            let descending = fields["descending"].flatMap { bool($0, "descending") } ?? false
            return .key(
                path: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init),
                descending: descending, byFirstLetter: byFirstLetter, location: keyField.value.location)
        }
        let fields = fields(of: entries, allowed: Self.entitySectionsKeys, in: "'sections' of '\(fetch)'")
        guard let entityField = fields["entity"], let relationship = string(entityField, "entity") else { return nil }
        let sort = fields["sort"].map { sortKeys($0) } ?? []
        let predicate = fields["where"].flatMap { predicateSource($0, key: .fetch(name, of: entity, .sectionsWhere)) }
        let orphans = fields["orphans"].flatMap { bool($0, "orphans") } ?? false
        return .entity(
            relationship: relationship, sort: sort, predicate: predicate, orphans: orphans,
            location: entityField.value.location)
    }

    mutating func sortKeys(_ field: YAMLMappingEntry) -> [SortKey] {
        let items: [YAMLNode]
        if let sequence = field.value.sequence {
            items = sequence
        } else if let scalar = field.value.scalar, !scalar.isNull {
            items = [field.value]
        } else {
            error("'sort' must be a list of key paths, e.g. [-updatedAt, title]", at: field.value.location)
            return []
        }
        var keys: [SortKey] = []
        for item in items {
            guard let scalar = item.scalar, !scalar.isNull else {
                error("a sort key must be a key path such as 'title' or '-notebook.name', not \(item.kindName)",
                      at: item.location)
                continue
            }
            var text = Substring(scalar.value)
            var descending = false
            if text.hasPrefix("-") {
                descending = true
                text = text.dropFirst()
            } else if text.hasPrefix("+") {
                text = text.dropFirst()
            }
            let path = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            sourceMap.keyPathNodes[item.location] = item
            keys.append(SortKey(path: path, descending: descending, location: item.location))
        }
        return keys
    }

    mutating func predicateSource(_ field: YAMLMappingEntry, key: SourceMapKey) -> PredicateSource? {
        guard let scalar = field.value.scalar, !scalar.isNull else {
            error("'where' must be a predicate string, e.g. \"pinned == true\"", at: field.value.location)
            return nil
        }
        sourceMap.predicateNodes[key] = field.value
        return PredicateSource(
            text: scalar.value, location: field.value.location(ofValueOffset: 0) ?? field.value.location,
            expression: .constant(true))
    }

    // MARK: - Helpers

    /// The entries of a mapping by key, with an error for each key not in `allowed`.
    mutating func fields(of entries: [YAMLMappingEntry], allowed: [String], in context: String)
        -> [String: YAMLMappingEntry]
    {
        var result: [String: YAMLMappingEntry] = [:]
        suggestedKeys = []
        for entry in entries {
            guard let key = entry.key.scalar?.value else {
                error("keys of \(context) must be names, not \(entry.key.kindName)", at: entry.key.location)
                continue
            }
            guard allowed.contains(key) else {
                if let suggestion = Suggestions.closest(to: key, in: allowed) { suggestedKeys.insert(suggestion) }
                error("unknown key '\(key)' in \(context)" + Suggestions.didYouMean(key, in: allowed)
                      + (Suggestions.closest(to: key, in: allowed) == nil
                         ? "; expected one of: " + allowed.joined(separator: ", ") : ""),
                      at: entry.key.location)
                continue
            }
            result[key] = entry
        }
        return result
    }

    /// The entries of a mapping value (null is an empty mapping).
    mutating func mappingEntries(_ node: YAMLNode, what: String) -> [YAMLMappingEntry] {
        if let entries = node.mapping { return entries }
        if node.scalar?.isNull == true { return [] }
        error("\(what) must be a mapping of names, not \(node.kindName)", at: node.location)
        return []
    }

    /// A name written as a key or a list element: a non-empty scalar.
    mutating func nameValue(of node: YAMLNode) -> String? {
        guard let scalar = node.scalar else {
            error("expected a name, not \(node.kindName)", at: node.location)
            return nil
        }
        return scalar.value
    }

    mutating func scalar(_ field: YAMLMappingEntry, _ key: String) -> YAMLScalar? {
        guard let scalar = field.value.scalar else {
            error("'\(key)' must be a scalar, not \(field.value.kindName)", at: field.value.location)
            return nil
        }
        return scalar
    }

    mutating func string(_ field: YAMLMappingEntry, _ key: String) -> String? {
        guard let scalar = scalar(field, key) else { return nil }
        if scalar.isNull {
            error("'\(key)' needs a value", at: field.value.location)
            return nil
        }
        return scalar.value
    }

    /// A plain, non-negative integer: a length or a count.
    mutating func count(_ field: YAMLMappingEntry, _ key: String) -> Int? {
        guard let scalar = scalar(field, key) else { return nil }
        guard scalar.style == .plain, let value = Int(scalar.value), value >= 0, value <= Int(Int32.max) else {
            error("'\(key)' must be a whole number of 0 or more, not '\(scalar.value)'", at: field.value.location)
            return nil
        }
        return value
    }

    mutating func bool(_ field: YAMLMappingEntry, _ key: String) -> Bool? {
        guard let scalar = scalar(field, key) else { return nil }
        switch scalar.value {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default:
            error("'\(key)' must be true or false, not '\(scalar.value)'", at: field.value.location)
            return nil
        }
    }

    mutating func duplicate(_ kind: String, _ name: String, at location: SourceLocation, first: SourceLocation) {
        error("duplicate \(kind) '\(name)'", at: location)
        diagnostics.append(Diagnostic(.note, "'\(name)' is first defined here", at: first))
    }

    mutating func error(_ message: String, at location: SourceLocation) {
        diagnostics.error(message, at: location)
    }
}
