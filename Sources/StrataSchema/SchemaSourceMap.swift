/// Where the parts of a decoded schema that have no location of their own were written:
/// `to:` and `inverse:` values, attribute types, defaults, unique and index names.
///
/// `SchemaDecoder` fills it, `SchemaValidator` reads it to point diagnostics at the exact
/// node. Keys are dotted paths: `Note.notebook.to`, `Note.title.type`, `Note.unique.0.1`.
public struct SchemaSourceMap: Hashable, Sendable {
    var locations: [String: SourceLocation] = [:]
    /// The raw `default:` scalars by `Entity.attribute`: the validator turns them into
    /// `DefaultValue`s once every enum is known.
    var defaults: [String: YAMLNode] = [:]
    /// Predicates whose characters don't map one-to-one onto columns (block scalars,
    /// escapes, several lines): their diagnostics point at the scalar's start.
    var inexactPredicates: Set<String> = []

    /// An empty map: diagnostics then point at the declarations.
    public init() {}

    func location(_ key: String) -> SourceLocation? { locations[key] }
}
