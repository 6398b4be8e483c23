/// One validation rule.
protocol SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag)
}

/// What rules read: the schema, where things were written, and shared lookups.
struct ValidationContext {
    let schema: Schema
    let sourceMap: SchemaSourceMap
    let entitiesByName: [String: Entity]

    init(schema: Schema, sourceMap: SchemaSourceMap) {
        self.schema = schema
        self.sourceMap = sourceMap
        var byName: [String: Entity] = [:]
        for entity in schema.entities where byName[entity.name] == nil { byName[entity.name] = entity }
        self.entitiesByName = byName
    }

    func entity(_ name: String) -> Entity? { entitiesByName[name] }

    /// The recorded location of `key`, or `fallback`.
    func location(_ key: SourceMapKey, or fallback: SourceLocation) -> SourceLocation {
        sourceMap.location(key) ?? fallback
    }
}
