import GRDB

/// A typed path from entity `Root` to a value of type `Value`: an attribute of `Root`, or
/// of an object reached through to-one relationships (`Note.notebook.name`).
///
/// Generated code declares one static column per attribute (`Note.title`) and one per
/// to-one foreign key (`Note.notebookID`). Columns build predicates and sort keys:
///
/// ```swift
/// let request = Note.all
///     .filter(Note.title.contains("milk", .caseInsensitive) && Note.pinned == true)
///     .sorted(by: Note.updatedAt.descending)
/// ```
public struct TypedColumn<Root, Value>: Hashable, Sendable {
    /// The names from `Root`, through to-one relationships, to the attribute.
    public let path: [String]

    /// A column at the end of `path` (generated code declares them).
    public init(_ path: [String]) { self.path = path }
    /// The column `name` of `Root` itself.
    public init(_ name: String) { self.path = [name] }

    var node: ValueNode { .path(path) }

    /// Ascending order (nil first, as in SQLite).
    public var ascending: SortKey<Root> { SortKey(SortNode(path: path, descending: false)) }
    /// Descending order (nil last, as in SQLite).
    public var descending: SortKey<Root> { SortKey(SortNode(path: path, descending: true)) }
}

/// A to-one relationship from `Root` to `Destination`, as a path. Generated code adds the
/// destination's columns to it, so `Note.notebook.name` is a `TypedColumn<Note, String>`.
public struct ToOne<Root, Destination>: Hashable, Sendable {
    /// The names of the relationships from `Root`, the last one being this one.
    public let path: [String]

    /// The relationship at the end of `path` (generated code declares them).
    public init(_ path: [String]) { self.path = path }
    /// The relationship `name` of `Root` itself.
    public init(_ name: String) { self.path = [name] }

    /// The column `name` of the destination, reached through this relationship.
    public func _column<Value>(_ name: String) -> TypedColumn<Root, Value> { TypedColumn(path + [name]) }

    /// The to-one relationship `name` of the destination, reached through this relationship.
    public func _toOne<Next>(_ name: String) -> ToOne<Root, Next> { ToOne<Root, Next>(path + [name]) }

}

extension ToOne where Destination: StrataEntity {
    /// True when the relationship points at no object.
    public var isNil: EntityPredicate<Root> {
        EntityPredicate(.compare(.path(path + [Destination.entityDescriptor.primaryKey]), .equal, .value(.null)))
    }
}

/// A to-many relationship from `Root` to `Destination`: counts and quantified predicates.
///
/// ```swift
/// Note.tags.any(Tag.name == "home")
/// Note.tags.count > 2
/// ```
public struct ToMany<Root, Destination>: Hashable, Sendable {
    /// The names of the relationships from `Root`, the last one being this one.
    public let path: [String]

    /// The relationship at the end of `path` (generated code declares them).
    public init(_ path: [String]) { self.path = path }
    /// The relationship `name` of `Root` itself.
    public init(_ name: String) { self.path = [name] }

    /// The number of destination objects.
    public var count: CountExpression<Root> { CountExpression(path: path) }

    /// At least one destination object satisfies `predicate`.
    public func any(_ predicate: EntityPredicate<Destination>) -> EntityPredicate<Root> {
        EntityPredicate(.quantified(.any, relationship: path, predicate.node))
    }

    /// Every destination object satisfies `predicate` (true when there are none).
    public func all(_ predicate: EntityPredicate<Destination>) -> EntityPredicate<Root> {
        EntityPredicate(.quantified(.all, relationship: path, predicate.node))
    }

    /// No destination object satisfies `predicate`.
    public func none(_ predicate: EntityPredicate<Destination>) -> EntityPredicate<Root> {
        EntityPredicate(.quantified(.none, relationship: path, predicate.node))
    }
}

/// `relationship.@count`, compared with integers.
public struct CountExpression<Root>: Hashable, Sendable {
    /// The path of the to-many relationship whose objects are counted.
    public let path: [String]
    var node: ValueNode { .count(path) }
}

/// A sort key of entity `Root`: a column and a direction. Every order Strata uses ends with
/// the primary key, so it is total and stable.
public struct SortKey<Root>: Hashable, Sendable {
    /// The untyped sort key.
    public let node: SortNode
    /// A sort key from its untyped form.
    public init(_ node: SortNode) { self.node = node }
}
