/// Resolves `notebook.name`-style key paths for `sort:` and section keys: through to-one
/// relationships, ending at an attribute or at the primary key (`id` unless `primaryKey:` names it).
enum KeyPathResolver {
    static func resolve(_ path: [String], from entity: Entity, in context: ValidationContext)
        -> Result<Attribute, SchemaProblem>
    {
        var current = entity
        let spelled = path.joined(separator: ".")
        guard !path.isEmpty, !path.contains(where: \.isEmpty) else {
            return .failure(SchemaProblem("'\(spelled)' is not a key path; write names separated by '.'"))
        }
        for (index, segment) in path.enumerated() {
            let isLast = index == path.count - 1
            // Where this segment starts in the spelled path.
            let offset = path[..<index].reduce(0) { $0 + $1.unicodeScalars.count + 1 }
            if segment == Self.positionSegment {
                return resolvePosition(path, at: index, root: entity, in: context)
            }
            if isLast, segment == current.primaryKey {
                return .success(Attribute(name: segment, type: .int, location: current.location))
            }
            if let attribute = current.attribute(named: segment) {
                if isLast, attribute.isTransient {
                    return .failure(SchemaProblem(
                        "'\(spelled)' is transient: it is not stored, so it cannot order or group objects",
                        offset: offset))
                }
                if isLast, attribute.type.isCodable {
                    return .failure(SchemaProblem(
                        "'\(spelled)' is a Codable attribute, stored as JSON text; it cannot be sorted or sectioned",
                        offset: offset))
                }
                if isLast { return .success(attribute) }
                return .failure(SchemaProblem(
                    "'\(segment)' in '\(spelled)' is an attribute of '\(current.name)' and has no member '\(path[index + 1])'",
                    offset: offset + segment.unicodeScalars.count + 1))
            }
            guard let relationship = current.relationship(named: segment) else {
                if segment == "id" {
                    return .failure(SchemaProblem(
                        "unknown attribute or relationship 'id' in '\(current.name)'; its primary key is named '\(current.primaryKey)' ('primaryKey:')",
                        offset: offset))
                }
                let members = [current.primaryKey] + current.attributes.map(\.name) + current.relationships.map(\.name)
                return .failure(SchemaProblem(
                    "unknown attribute or relationship '\(segment)' in '\(current.name)'"
                        + Suggestions.didYouMean(segment, in: members), offset: offset))
            }
            if relationship.isToMany {
                return .failure(SchemaProblem(
                    "'\(segment)' in '\(spelled)' is a to-many relationship; key paths may only go through to-one relationships",
                    offset: offset))
            }
            if isLast {
                let example = context.entity(relationship.destination)?.attributes.first.map { "'\(spelled).\($0.name)'" }
                return .failure(SchemaProblem(
                    "'\(spelled)' ends at the relationship '\(segment)'; add one of its attributes"
                        + (example.map { ", e.g. \($0)" } ?? ""), offset: offset))
            }
            guard let destination = context.entity(relationship.destination) else {
                return .failure(SchemaProblem("unknown entity '\(relationship.destination)'"))
            }
            current = destination
        }
        return .failure(SchemaProblem("'\(spelled)' is not a key path"))
    }

    /// The segment that names a child's place in its parent's ordered to-many relationship:
    /// `list.@position` orders tasks as their list orders them.
    static let positionSegment = "@position"

    /// `<to-one>.@position`: the position column of the to-one before it, whose inverse must
    /// be an ordered to-many. Resolves to an optional `Int` named like the column
    /// (`listPosition`).
    private static func resolvePosition(_ path: [String], at index: Int, root: Entity, in context: ValidationContext)
        -> Result<Attribute, SchemaProblem>
    {
        let spelled = path.joined(separator: ".")
        let offset = path[..<index].reduce(0) { $0 + $1.unicodeScalars.count + 1 }
        guard index == path.count - 1 else {
            return .failure(SchemaProblem("'@position' must end the key path '\(spelled)'", offset: offset))
        }
        guard index > 0 else {
            return .failure(SchemaProblem(
                "'@position' follows the to-one relationship whose inverse is ordered, e.g. 'list.@position'",
                offset: offset))
        }
        // The entity that holds the relationship before '@position'.
        var owner: Entity? = root
        for segment in path[..<(index - 1)] {
            guard let relationship = owner?.relationship(named: segment) else { break }
            owner = context.entity(relationship.destination)
        }
        let name = path[index - 1]
        guard let owner, let relationship = owner.relationship(named: name), !relationship.isToMany,
              let inverse = context.entity(relationship.destination)?.relationship(named: relationship.inverse)
        else {
            return .failure(SchemaProblem(
                "'@position' follows the to-one relationship whose inverse is ordered, e.g. 'list.@position'",
                offset: offset))
        }
        guard inverse.isOrdered else {
            return .failure(SchemaProblem(
                "'\(spelled)' needs an ordered inverse, but '\(relationship.destination).\(inverse.name)' is not "
                    + "'ordered: true'", offset: offset))
        }
        return .success(Attribute(
            name: name + "Position", type: .int, isOptional: true, location: relationship.location))
    }
}
