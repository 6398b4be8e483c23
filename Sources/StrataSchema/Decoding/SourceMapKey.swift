/// A part of the model whose place in the files `SchemaSourceMap` records: one case per kind
/// of part, so that a key naming no such part does not compile.
///
/// ```swift
/// sourceMap.location(.relationship("notebook", of: "Note", .inverse))
/// sourceMap.location(.constraintName(.unique, of: "Note", list: 0, position: 1))
/// ```
enum SourceMapKey: Hashable, Sendable {
    /// Case `index` of an enum, by position in its list.
    case enumCase(Int, of: String)
    /// A value written for an attribute of an entity.
    case attribute(String, of: String, AttributeField)
    /// A value written for a relationship of an entity.
    case relationship(String, of: String, RelationshipField)
    /// A value written for a fetch of an entity.
    case fetch(String, of: String, FetchField)
    /// Element `list` of an entity's `unique:` or `indexes:` (a list of names).
    case constraint(Constraint, of: String, list: Int)
    /// Name `position` of element `list` of an entity's `unique:` or `indexes:`.
    case constraintName(Constraint, of: String, list: Int, position: Int)
    /// The `name:` of element `list` of an entity's `indexes:`.
    case indexName(of: String, list: Int)
    /// A value written for an entity itself: `extends:`, or the key `abstract:`.
    case entity(String, EntityField)
    /// A value written in an entity's `access:`.
    case access(of: String, AccessField)

    /// What of an `access:`: the key `access:`, or the value of `owner:`, `members:` or
    /// `through:`.
    enum AccessField: Hashable, Sendable {
        case key, owner, members, through
    }

    /// What of an entity: the value of `extends:`, the key `abstract:`, the value of
    /// `primaryKey:` (the entity's own, or its file's).
    enum EntityField: Hashable, Sendable {
        case extends, abstract, primaryKey
    }

    /// What of an attribute: `type:` (or the attribute's value when it is a bare type name),
    /// `default:`, the key `transient:`.
    enum AttributeField: Hashable, Sendable {
        case type, `default`, transient, min, max, minLength, maxLength, pattern
    }

    /// What of a relationship: the value of `to:`, `inverse:`, `deleteRule:` or
    /// `foreignKey:`, or the key `required:`, `ordered:` or `initialOrder:`.
    enum RelationshipField: Hashable, Sendable {
        case to, inverse, required, deleteRule, ordered, initialOrder, foreignKey, minCount, maxCount
    }

    /// What of a fetch: `where:`, or its sections' `key:` or `where:`.
    enum FetchField: Hashable, Sendable {
        case `where`, sectionsKey, sectionsWhere
    }

    /// An entity's list of constraints: `unique:` or `indexes:`.
    enum Constraint: String, Hashable, Sendable {
        case unique, indexes
    }
}
