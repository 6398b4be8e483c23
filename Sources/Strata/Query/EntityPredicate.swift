import GRDB

/// A typed predicate on entity `Root`. It renders to SQL with bound parameters, and can be
/// evaluated in memory with the same answer.
///
/// Build predicates from generated columns:
///
/// ```swift
/// let predicate = Note.title.contains("x", .caseInsensitive) && Note.notebook.name == "Work"
/// ```
public struct EntityPredicate<Root>: Hashable, Sendable {
    /// The untyped tree that renders to SQL and evaluates in memory.
    public let node: PredicateNode

    /// A predicate from its untyped tree (generated code and `fetches:` use it).
    public init(_ node: PredicateNode) { self.node = node }

    /// The predicate that every object satisfies.
    public static var all: EntityPredicate { EntityPredicate(.constant(true)) }

    /// Both predicates hold.
    public static func && (lhs: EntityPredicate, rhs: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.and([lhs.node, rhs.node]))
    }

    /// At least one predicate holds.
    public static func || (lhs: EntityPredicate, rhs: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.or([lhs.node, rhs.node]))
    }

    /// The predicate does not hold.
    public static prefix func ! (operand: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.not(operand.node))
    }
}

// MARK: - Comparisons with values

extension TypedColumn where Value: DatabaseValueConvertible {
    private func compare(_ op: ComparisonOperator, _ value: Value) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, .value(value.databaseValue)))
    }

    /// The column equals `rhs` (SQL `IS`: nil equals nil).
    public static func == (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    /// The column differs from `rhs` (SQL `IS NOT`).
    public static func != (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.notEqual, rhs) }
    /// The column is less than `rhs` (false when either is nil).
    public static func < (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    /// The column is at most `rhs` (false when either is nil).
    public static func <= (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.lessOrEqual, rhs) }
    /// The column is greater than `rhs` (false when either is nil).
    public static func > (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
    /// The column is at least `rhs` (false when either is nil).
    public static func >= (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs)
    }

    /// The value is one of `values`.
    public func `in`(_ values: some Sequence<Value>) -> EntityPredicate<Root> {
        EntityPredicate(.isIn(node, values.map(\.databaseValue)))
    }

    /// `low <= value <= high`.
    public func between(_ low: Value, _ high: Value) -> EntityPredicate<Root> {
        EntityPredicate(.between(node, low.databaseValue, high.databaseValue))
    }
}

// MARK: - Comparisons between columns

extension TypedColumn {
    private func compare(_ op: ComparisonOperator, _ other: TypedColumn) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, other.node))
    }

    /// The two columns are equal (SQL `IS`: nil equals nil).
    public static func == (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    /// The two columns differ (SQL `IS NOT`).
    public static func != (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.notEqual, rhs)
    }
    /// The left column is less than the right one (false when either is nil).
    public static func < (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    /// The left column is at most the right one (false when either is nil).
    public static func <= (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.lessOrEqual, rhs)
    }
    /// The left column is greater than the right one (false when either is nil).
    public static func > (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
    /// The left column is at least the right one (false when either is nil).
    public static func >= (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs)
    }
}

// MARK: - Counts

extension CountExpression {
    private func compare(_ op: ComparisonOperator, _ value: Int) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, .value(value.databaseValue)))
    }

    /// The relationship has exactly `rhs` objects.
    public static func == (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    /// The relationship does not have exactly `rhs` objects.
    public static func != (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.notEqual, rhs) }
    /// The relationship has fewer than `rhs` objects.
    public static func < (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    /// The relationship has at most `rhs` objects.
    public static func <= (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.lessOrEqual, rhs) }
    /// The relationship has more than `rhs` objects.
    public static func > (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
    /// The relationship has at least `rhs` objects.
    public static func >= (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs)
    }
}

// MARK: - String matching

/// A column whose values are strings (`String` or `String?`).
public protocol StringValue {}
extension String: StringValue {}
extension Optional: StringValue where Wrapped == String {}

extension TypedColumn where Value: StringValue {
    private func match(_ op: StringOperator, _ text: String, _ options: StringOptions) -> EntityPredicate<Root> {
        EntityPredicate(.match(node, op, .value(text.databaseValue), options))
    }

    /// `CONTAINS`: the value contains `text`.
    public func contains(_ text: String, _ options: StringOptions = []) -> EntityPredicate<Root> {
        match(.contains, text, options)
    }

    /// `BEGINSWITH`.
    public func beginsWith(_ text: String, _ options: StringOptions = []) -> EntityPredicate<Root> {
        match(.beginsWith, text, options)
    }

    /// `ENDSWITH`.
    public func endsWith(_ text: String, _ options: StringOptions = []) -> EntityPredicate<Root> {
        match(.endsWith, text, options)
    }

    /// `LIKE`: `*` matches any run of characters, `?` exactly one.
    public func like(_ pattern: String, _ options: StringOptions = []) -> EntityPredicate<Root> {
        match(.like, pattern, options)
    }
}
