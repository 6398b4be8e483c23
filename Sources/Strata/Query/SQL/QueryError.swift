/// A predicate or sort that does not fit the schema.
public enum QueryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No entity of the schema has this name.
    case unknownEntity(String)
    /// A path that does not name an attribute through to-one relationships (or a to-many
    /// relationship, for counts and quantifiers).
    case invalidPath([String], entity: String)
    /// A relationship without the inverse its storage needs.
    case invalidRelationship(entity: String, relationship: String)

    /// The message, naming the path or entity.
    public var description: String {
        switch self {
        case .unknownEntity(let name): "unknown entity '\(name)'"
        case .invalidPath(let path, let entity): "invalid key path '\(path.joined(separator: "."))' on entity '\(entity)'"
        case .invalidRelationship(let entity, let relationship):
            "relationship '\(relationship)' of entity '\(entity)' has no usable inverse"
        }
    }
}

/// `"name"`, with embedded quotes doubled.
func quoted(_ identifier: String) -> String {
    // Most names have no quote to double: then Foundation's search is skipped (it was a
    // tenth of a user's move in a list of 100,000).
    guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
