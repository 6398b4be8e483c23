/// Checks a decoded `Schema` against every rule of the language, collecting all diagnostics.
///
/// Each rule is a small type conforming to `SchemaRule` (in `Validation/`), in the manner of
/// swift-argument-parser's validators: a rule reads the schema and reports; it never stops
/// the others. Resolving steps also complete the schema: `DefaultValueRule` turns the raw
/// `default:` scalars into `DefaultValue`s, `InheritanceRule` copies what entities inherit
/// from abstract ones (attributes before the rules, unique constraints and indexes after
/// them), and `PredicateRule` parses and type-checks every `where:`.
public enum SchemaValidator {
    /// The rules that only read the schema, in the order they run.
    static var rules: [any SchemaRule.Type] {[
        IdentifierRule.self,
        ReservedTypeNameRule.self,
        TypeNameCollisionRule.self,
        DuplicateEnumCaseRule.self,
        EnumCaseNameRule.self,
        MemberNameRule.self,
        FetchNameRule.self,
        TableNameRule.self,
        ColumnNameRule.self,
        AttributeTypeRule.self,
        CodableAttributeRule.self,
        RelationshipDestinationRule.self,
        AbstractDestinationRule.self,
        InverseRule.self,
        RequiredToManyRule.self,
        OrderedRelationshipRule.self,
        ConstraintNamesRule.self,
        RedundantIndexRule.self,
        IndexNameRule.self,
        ForeignKeyNameRule.self,
        TransientAttributeRule.self,
        SortKeyRule.self,
        SectionsRule.self,
        AccessRule.self,
    ]}

    /// The rules that read one entity or enum at a time, never what it refers to: they still
    /// run when a model file could not be read, on the files that could.
    static var fileLocalRules: [any SchemaRule.Type] {[
        IdentifierRule.self,
        ReservedTypeNameRule.self,
        DuplicateEnumCaseRule.self,
        EnumCaseNameRule.self,
        MemberNameRule.self,
        FetchNameRule.self,
        ConstraintNamesRule.self,
        RedundantIndexRule.self,
    ]}

    /// Runs only the file-local rules: for a model one of whose files is not valid YAML,
    /// where references into that file would all look unknown.
    static func validateFileLocal(_ schema: Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        let context = ValidationContext(schema: schema, sourceMap: sourceMap)
        for rule in fileLocalRules {
            rule.check(context, &diagnostics)
        }
    }

    /// Runs every rule on `schema`, resolving defaults and predicates in place; `sourceMap`
    /// (from `SchemaDecoder`) lets diagnostics point at the exact node.
    public static func validate(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        DefaultValueRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        InheritanceRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        ValueRuleRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        ValueRuleRule.checkDefaults(schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        let context = ValidationContext(schema: schema, sourceMap: sourceMap)
        for rule in rules {
            rule.check(context, &diagnostics)
        }
        PredicateRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        FetchParametersRule.check(ValidationContext(schema: schema, sourceMap: sourceMap), &diagnostics)
        InheritanceRule.copyConstraints(&schema)
    }

    /// The diagnostics of the rules that keep generated names and SQLite names apart (members,
    /// tables, columns), without resolving anything: the generator's guard for schemas built
    /// in code that skipped validation.
    public static func nameDiagnostics(of schema: Schema) -> [Diagnostic] {
        var diagnostics = DiagnosticBag()
        let context = ValidationContext(schema: schema, sourceMap: SchemaSourceMap())
        for rule: any SchemaRule.Type in [MemberNameRule.self, TableNameRule.self, ColumnNameRule.self] {
            rule.check(context, &diagnostics)
        }
        return diagnostics.sorted
    }

    /// Validates a schema built in code (no source map: diagnostics point at declarations).
    public static func validate(_ schema: inout Schema, diagnostics: inout DiagnosticBag) {
        validate(&schema, sourceMap: SchemaSourceMap(), diagnostics: &diagnostics)
    }
}
