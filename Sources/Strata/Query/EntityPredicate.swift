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
    public let node: PredicateNode

    public init(_ node: PredicateNode) { self.node = node }

    /// The predicate that every object satisfies.
    public static var all: EntityPredicate { EntityPredicate(.constant(true)) }

    public static func && (lhs: EntityPredicate, rhs: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.and([lhs.node, rhs.node]))
    }

    public static func || (lhs: EntityPredicate, rhs: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.or([lhs.node, rhs.node]))
    }

    public static prefix func ! (operand: EntityPredicate) -> EntityPredicate {
        EntityPredicate(.not(operand.node))
    }
}

// MARK: - Comparisons with values

extension TypedColumn where Value: DatabaseValueConvertible {
    private func compare(_ op: ComparisonOperator, _ value: Value) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, .value(value.databaseValue)))
    }

    public static func == (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    public static func != (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.notEqual, rhs) }
    public static func < (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    public static func <= (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.lessOrEqual, rhs) }
    public static func > (lhs: TypedColumn, rhs: Value) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
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

    public static func == (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    public static func != (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.notEqual, rhs)
    }
    public static func < (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    public static func <= (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.lessOrEqual, rhs)
    }
    public static func > (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
    public static func >= (lhs: TypedColumn, rhs: TypedColumn) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs)
    }
}

// MARK: - Counts

extension CountExpression {
    private func compare(_ op: ComparisonOperator, _ value: Int) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, .value(value.databaseValue)))
    }

    public static func == (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.equal, rhs) }
    public static func != (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.notEqual, rhs) }
    public static func < (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.less, rhs) }
    public static func <= (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.lessOrEqual, rhs) }
    public static func > (lhs: CountExpression, rhs: Int) -> EntityPredicate<Root> { lhs.compare(.greater, rhs) }
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
