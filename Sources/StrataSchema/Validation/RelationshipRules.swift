/// `to:` names an entity of the model.
struct RelationshipDestinationRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let names = context.schema.entities.map(\.name)
        for entity in context.schema.entities {
            for relationship in entity.relationships
            where !relationship.destination.isEmpty && context.entity(relationship.destination) == nil {
                let location = context.location(
                    .relationship(relationship.name, of: entity.name, .to), or: relationship.location)
                if context.schema.enumType(named: relationship.destination) != nil {
                    diagnostics.error(
                        "'\(relationship.destination)' is an enum; declare '\(relationship.name)' under 'attributes'",
                        at: location)
                } else {
                    diagnostics.error(
                        "unknown entity '\(relationship.destination)' in relationship '\(entity.name).\(relationship.name)'"
                            + Suggestions.didYouMean(relationship.destination, in: names),
                        at: location)
                }
            }
        }
    }
}

/// `inverse:` names a relationship of the destination that points back at this entity and
/// names this relationship as its own inverse. Every relationship checks its inverse, so the
/// pairing is checked both ways.
struct InverseRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for relationship in entity.relationships {
                // A relationship to an abstract entity is reported by `AbstractDestinationRule`.
                guard let destination = context.entity(relationship.destination), !destination.isAbstract,
                    !relationship.inverse.isEmpty
                else { continue }
                let qualified = "\(entity.name).\(relationship.name)"
                let location = context.location(
                    .relationship(relationship.name, of: entity.name, .inverse), or: relationship.location)
                guard let inverse = destination.relationship(named: relationship.inverse) else {
                    if destination.attribute(named: relationship.inverse) != nil {
                        diagnostics.error(
                            "the inverse of '\(qualified)' must be a relationship, but '\(destination.name).\(relationship.inverse)' is an attribute",
                            at: location)
                    } else {
                        diagnostics.error(
                            "'\(destination.name)' has no relationship '\(relationship.inverse)', the inverse of '\(qualified)'"
                                + Suggestions.didYouMean(relationship.inverse, in: destination.relationships.map(\.name))
                                + (destination.relationships.isEmpty
                                    ? "; add it to '\(destination.name)' with 'to: \(entity.name), inverse: \(relationship.name)'"
                                    : ""),
                            at: location)
                    }
                    continue
                }
                let inverseName = "\(destination.name).\(inverse.name)"
                // An inverse with an unknown destination or no inverse of its own is reported there.
                guard context.entity(inverse.destination) != nil, !inverse.inverse.isEmpty else { continue }
                if inverse.destination != entity.name {
                    diagnostics.error(
                        "the inverse '\(inverseName)' of '\(qualified)' points to '\(inverse.destination)', not '\(entity.name)'",
                        at: location)
                } else if inverse.inverse != relationship.name {
                    diagnostics.error(
                        "'\(inverseName)' is the inverse of '\(qualified)', but names '\(inverse.inverse)' as its own inverse; inverses must name each other",
                        at: location)
                }
            }
        }
    }
}

/// `required` is for to-one relationships.
struct RequiredToManyRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for relationship in entity.relationships where relationship.isToMany && relationship.isRequired {
                diagnostics.error(
                    "'required' applies only to to-one relationships, and '\(entity.name).\(relationship.name)' is to-many",
                    at: context.location(
                        .relationship(relationship.name, of: entity.name, .required), or: relationship.location))
            }
        }
    }
}

/// `ordered: true` is for a to-many whose inverse is to-one (the order is stored with each
/// destination, beside its foreign key); `initialOrder` only with it, its keys paths of the
/// destination; the to-one's position column must not clash with a member.
struct OrderedRelationshipRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let layout = StorageLayout(schema: context.schema)
        for entity in context.schema.entities {
            for relationship in entity.relationships {
                let qualified = "\(entity.name).\(relationship.name)"
                let orderedLocation = context.location(
                    .relationship(relationship.name, of: entity.name, .ordered), or: relationship.location)
                let inverse = context.entity(relationship.destination)?.relationship(named: relationship.inverse)
                if relationship.isOrdered {
                    if !relationship.isToMany {
                        diagnostics.error(
                            "'ordered' applies only to to-many relationships, and '\(qualified)' is to-one; "
                                + "declare 'ordered: true' on its inverse", at: orderedLocation)
                    } else if inverse?.isToMany == true {
                        diagnostics.error(
                            "'\(qualified)' is many-to-many, and ordered many-to-many relationships are not supported; "
                                + "order a to-many whose inverse is to-one (through an entity for the link, if need be)",
                            at: orderedLocation)
                    }
                }
                if !relationship.initialOrder.isEmpty {
                    let location = context.location(
                        .relationship(relationship.name, of: entity.name, .initialOrder), or: relationship.location)
                    if !relationship.isOrdered {
                        diagnostics.error(
                            "'initialOrder' applies only to ordered relationships; add 'ordered: true' to '\(qualified)'",
                            at: location)
                    } else if let destination = context.entity(relationship.destination) {
                        for key in relationship.initialOrder {
                            if case .failure(let failure) = KeyPathResolver.resolve(key.path, from: destination, in: context) {
                                diagnostics.error(
                                    "initial order key: " + failure.message,
                                    at: context.sourceMap.keyPathLocation(key.location, offset: failure.offset))
                            }
                        }
                    }
                }
                if !relationship.isToMany, let column = layout.positionColumn(of: relationship, in: entity) {
                    if let attribute = entity.attribute(named: column) {
                        diagnostics.error(
                            "the to-one relationship '\(relationship.name)' stores its position in '\(column)', which clashes with the attribute '\(column)' of '\(entity.name)'",
                            at: attribute.location)
                    } else if entity.relationship(named: column) != nil
                        || entity.relationships.contains(where: { !$0.isToMany && StorageLayout.keyColumn(of: $0) == column })
                    {
                        diagnostics.error(
                            "the to-one relationship '\(relationship.name)' stores its position in '\(column)', which clashes with another member of '\(entity.name)'",
                            at: relationship.location)
                    }
                }
            }
        }
    }
}
