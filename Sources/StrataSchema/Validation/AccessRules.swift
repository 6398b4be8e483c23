/// `access:` (per-user data): once one entity of the model declares who may read and write its
/// objects, every entity does; `owner:` names an attribute holding a user id (`String` or
/// `UUID`); `members:` a to-many relationship (its destination holds the key back) and an
/// attribute of its destination holding a user id; `through:` a to-one relationship that
/// holds its key, to an entity whose own `access:` applies, never leading back to the entity.
struct AccessRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let schema = context.schema
        let layout = StorageLayout(schema: schema)
        let declared = schema.entities.contains { $0.access != nil }
        for entity in schema.entities {
            let at = context.location(.access(of: entity.name, .key), or: entity.location)
            if entity.isAbstract {
                if entity.access != nil {
                    diagnostics.error(
                        "abstract entity '\(entity.name)' has no objects of its own; set 'access' on the entities that extend it", at: at)
                }
                continue
            }
            guard let access = entity.access else {
                // A key written with a value that could not be decoded was reported already.
                if declared, context.sourceMap.location(.access(of: entity.name, .key)) == nil {
                    let first = schema.entities.first { $0.access != nil }!.name
                    diagnostics.error(
                        "entity '\(entity.name)' has no 'access': the model declares per-user data ('\(first)'), so every entity says who may read and write its objects; write 'access: everyone' to share them with every user",
                        at: entity.location)
                }
                continue
            }
            switch access {
            case .everyone:
                break
            case .users(let owner, let members):
                if let owner {
                    checkUserAttribute(
                        owner, of: entity, what: "the owner of '\(entity.name)'",
                        at: context.location(.access(of: entity.name, .owner), or: at), &diagnostics)
                }
                if let members {
                    let location = context.location(.access(of: entity.name, .members), or: at)
                    guard let relationship = entity.relationship(named: members.relationship) else {
                        diagnostics.error(
                            "'\(entity.name)' has no relationship '\(members.relationship)' (the 'members' of its access)"
                                + Suggestions.didYouMean(members.relationship, in: entity.relationships.map(\.name)),
                            at: location)
                        break
                    }
                    guard relationship.isToMany, layout.storage(of: relationship, in: entity) == .inverseForeignKey,
                        let destination = context.entity(relationship.destination)
                    else {
                        diagnostics.error(
                            "the members of '\(entity.name)' must be a one-to-many relationship (each member belongs to one \(entity.name)), but '\(entity.name).\(relationship.name)' is "
                                + (relationship.isToMany ? "many-to-many" : "to-one"),
                            at: location)
                        break
                    }
                    checkUserAttribute(
                        members.attribute, of: destination, what: "the member of '\(entity.name)'", at: location, &diagnostics)
                }
            case .through(let name):
                let location = context.location(.access(of: entity.name, .through), or: at)
                guard let relationship = entity.relationship(named: name) else {
                    let attribute = entity.attribute(named: name) != nil
                    diagnostics.error(
                        attribute
                            ? "'through' names a to-one relationship, but '\(entity.name).\(name)' is an attribute; to name the attribute that holds the owner's user id write 'owner: \(name)'"
                            : "'\(entity.name)' has no relationship '\(name)' (the 'through' of its access)"
                                + Suggestions.didYouMean(name, in: entity.relationships.map(\.name)),
                        at: location)
                    break
                }
                guard !relationship.isToMany else {
                    diagnostics.error(
                        "'through' must be a to-one relationship (the one object whose users may read this one), but '\(entity.name).\(name)' is to-many",
                        at: location)
                    break
                }
                guard layout.foreignKeyColumn(of: relationship, in: entity) != nil else {
                    diagnostics.error(
                        "'through: \(name)' must be a to-one that holds its key, but '\(entity.name).\(name)' is the side of a one-to-one whose key '\(relationship.destination).\(relationship.inverse)' holds; use 'through' on '\(relationship.destination)' instead",
                        at: location)
                    break
                }
                // The chain of `through` from here must end at an entity of its own access.
                var seen = [entity.name]
                var current = relationship.destination
                while let next = context.entity(current), case .through(let step)? = next.access,
                    let nextRelationship = next.relationship(named: step), !nextRelationship.isToMany
                {
                    if seen.contains(current) {
                        diagnostics.error(
                            "the access of '\(entity.name)' goes through "
                                + (seen + [current]).dropFirst().map { "'\($0)'" }.joined(separator: ", ")
                                + " and never reaches an entity with an owner, members or 'everyone': a cycle",
                            at: location)
                        break
                    }
                    seen.append(current)
                    current = nextRelationship.destination
                }
            }
        }
    }

    /// `name` is an attribute of `entity` of type `String` or `UUID`.
    static func checkUserAttribute(
        _ name: String, of entity: Entity, what: String, at location: SourceLocation, _ diagnostics: inout DiagnosticBag
    ) {
        guard let attribute = entity.attribute(named: name) else {
            let isRelationship = entity.relationship(named: name) != nil
            diagnostics.error(
                isRelationship
                    ? "\(what) must be an attribute holding a user id, but '\(entity.name).\(name)' is a relationship; to reach an object with an owner write 'through: \(name)'"
                    : "'\(entity.name)' has no attribute '\(name)' (\(what))"
                        + Suggestions.didYouMean(name, in: entity.attributes.map(\.name)),
                at: location)
            return
        }
        guard attribute.type == .string || attribute.type == .uuid, !attribute.isTransient else {
            diagnostics.error(
                "\(what), '\(entity.name).\(name)', must hold a user id: a String or UUID attribute that is stored, not "
                    + (attribute.isTransient ? "a transient one" : attribute.type.name),
                at: location)
            return
        }
    }
}
