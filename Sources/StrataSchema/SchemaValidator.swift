/// Checks a decoded `Schema` against every rule of the language, collecting all diagnostics.
///
/// Each rule is a small type conforming to `SchemaRule` (in `Validation/`), in the manner of
/// swift-argument-parser's validators: a rule reads the schema and reports; it never stops
/// the others. Two resolving steps also complete the schema: `DefaultValueRule` turns the
/// raw `default:` scalars into `DefaultValue`s and `PredicateRule` parses and type-checks
/// every `where:`.
public enum SchemaValidator {
    /// The rules that only read the schema, in the order they run.
    static var rules: [any SchemaRule.Type] {[
        IdentifierRule.self,
        ReservedTypeNameRule.self,
        TypeNameCollisionRule.self,
        DuplicateEnumCaseRule.self,
        MemberNameRule.self,
        AttributeTypeRule.self,
        RelationshipDestinationRule.self,
        InverseRule.self,
        RequiredToManyRule.self,
        NullifyRequiredInverseRule.self,
        RequiredCycleRule.self,
        ConstraintNamesRule.self,
        RedundantIndexRule.self,
        SortKeyRule.self,
        SectionsRule.self,
    ]}

    /// Runs every rule on `schema`, resolving defaults and predicates in place; `sourceMap`
    /// (from `SchemaDecoder`) lets diagnostics point at the exact node.
    public static func validate(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        DefaultValueRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
        let context = ValidationContext(schema: schema, sourceMap: sourceMap)
        for rule in rules {
            rule.check(context, &diagnostics)
        }
        PredicateRule.resolve(&schema, sourceMap: sourceMap, diagnostics: &diagnostics)
    }

    /// Validates a schema built in code (no source map: diagnostics point at declarations).
    public static func validate(_ schema: inout Schema, diagnostics: inout DiagnosticBag) {
        validate(&schema, sourceMap: SchemaSourceMap(), diagnostics: &diagnostics)
    }
}

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
    func location(_ key: String, or fallback: SourceLocation) -> SourceLocation {
        sourceMap.location(key) ?? fallback
    }
}

/// Resolves `notebook.name`-style key paths for `sort:` and section keys: through to-one
/// relationships, ending at an attribute.
enum KeyPathResolver {
    static func resolve(_ path: [String], from entity: Entity, in context: ValidationContext)
        -> Result<Attribute, DefaultValueError>
    {
        var current = entity
        let spelled = path.joined(separator: ".")
        guard !path.isEmpty, !path.contains(where: \.isEmpty) else {
            return .failure(DefaultValueError("'\(spelled)' is not a key path; write names separated by '.'"))
        }
        for (index, segment) in path.enumerated() {
            let isLast = index == path.count - 1
            if let attribute = current.attribute(named: segment) {
                if isLast { return .success(attribute) }
                return .failure(DefaultValueError(
                    "'\(segment)' in '\(spelled)' is an attribute of '\(current.name)' and has no member '\(path[index + 1])'"))
            }
            guard let relationship = current.relationship(named: segment) else {
                let members = current.attributes.map(\.name) + current.relationships.map(\.name)
                return .failure(DefaultValueError(
                    "unknown attribute or relationship '\(segment)' in '\(current.name)'"
                        + Suggestions.didYouMean(segment, in: members)))
            }
            if relationship.isToMany {
                return .failure(DefaultValueError(
                    "'\(segment)' in '\(spelled)' is a to-many relationship; key paths may only go through to-one relationships"))
            }
            if isLast {
                let example = context.entity(relationship.destination)?.attributes.first.map { "'\(spelled).\($0.name)'" }
                return .failure(DefaultValueError(
                    "'\(spelled)' ends at the relationship '\(segment)'; add one of its attributes"
                        + (example.map { ", e.g. \($0)" } ?? "")))
            }
            guard let destination = context.entity(relationship.destination) else {
                return .failure(DefaultValueError("unknown entity '\(relationship.destination)'"))
            }
            current = destination
        }
        return .failure(DefaultValueError("'\(spelled)' is not a key path"))
    }
}
