/// Where the parts of a decoded schema that have no location of their own were written:
/// `to:` and `inverse:` values, attribute types, defaults, unique and index names.
///
/// `SchemaDecoder` fills it, `SchemaValidator` reads it to point diagnostics at the exact
/// node. Keys are `SourceMapKey`s: `.relationship("notebook", of: "Note", .to)`,
/// `.attribute("title", of: "Note", .type)`, `.constraintName(.unique, of: "Note", list: 0, position: 1)`.
public struct SchemaSourceMap: Hashable, Sendable {
    var locations: [SourceMapKey: SourceLocation] = [:]
    /// The raw `default:` scalars, by `.attribute(_, of: _, .default)`: the validator turns
    /// them into `DefaultValue`s once every enum is known.
    var defaults: [SourceMapKey: YAMLNode] = [:]
    /// The raw `min:` and `max:` scalars, by `.attribute(_, of: _, .min)` (or `.max`): the
    /// validator reads them against the attribute's type.
    var ruleBounds: [SourceMapKey: YAMLNode] = [:]
    /// The scalar of each `where:`, by `.fetch(_, of: _, .where)` (or `.sectionsWhere`), to
    /// map a predicate error's offset back to its line and column.
    var predicateNodes: [SourceMapKey: YAMLNode] = [:]

    /// The scalars of sort keys and section keys, by their location, to point a key path's
    /// error at the segment at fault.
    var keyPathNodes: [SourceLocation: YAMLNode] = [:]

    /// The location of a key path error: the character `offset` of the key path scalar that
    /// starts at `location` (a sort key's `-` or `+` counted), or `location` itself.
    func keyPathLocation(_ location: SourceLocation, offset: Int?) -> SourceLocation {
        guard let offset, let node = keyPathNodes[location], let value = node.scalar?.value else { return location }
        let prefix = value.hasPrefix("-") || value.hasPrefix("+") ? 1 : 0
        return node.location(ofValueOffset: prefix + offset) ?? location
    }

    /// The file location of character `offset` of the predicate stored under `key`.
    func predicateLocation(_ key: SourceMapKey, offset: Int) -> SourceLocation? {
        predicateNodes[key]?.location(ofValueOffset: offset)
    }

    /// An empty map: diagnostics then point at the declarations.
    public init() {}

    func location(_ key: SourceMapKey) -> SourceLocation? { locations[key] }
}
