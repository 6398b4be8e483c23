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

/// A column a count can be compared with: `Int` or `Int?`. (Generated code views columns of
/// other numeric types as `Int` columns; SQLite compares the stored numbers exactly.)
public protocol IntValue {}
extension Int: IntValue {}
extension Optional: IntValue where Wrapped == Int {}

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

    /// The number of objects is one of `values`.
    public func `in`(_ values: some Sequence<Int>) -> EntityPredicate<Root> {
        EntityPredicate(.isIn(node, values.map(\.databaseValue)))
    }

    /// `low <= count <= high`.
    public func between(_ low: Int, _ high: Int) -> EntityPredicate<Root> {
        EntityPredicate(.between(node, low.databaseValue, high.databaseValue))
    }
}

extension CountExpression {
    private func compare(_ op: ComparisonOperator, _ other: ValueNode) -> EntityPredicate<Root> {
        EntityPredicate(.compare(node, op, other))
    }

    /// The number of objects equals the column (false when it is nil):
    /// `Note.tags.count == Note.limit`.
    public static func == (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.equal, rhs.node)
    }
    /// The number of objects differs from the column (true when it is nil).
    public static func != (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.notEqual, rhs.node)
    }
    /// The number of objects is less than the column (false when it is nil).
    public static func < (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.less, rhs.node)
    }
    /// The number of objects is at most the column (false when it is nil).
    public static func <= (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.lessOrEqual, rhs.node)
    }
    /// The number of objects is greater than the column (false when it is nil).
    public static func > (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.greater, rhs.node)
    }
    /// The number of objects is at least the column (false when it is nil).
    public static func >= (lhs: CountExpression, rhs: TypedColumn<Root, some IntValue>) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs.node)
    }

    /// The two relationships have as many objects: `Note.tags.count == Note.links.count`.
    public static func == (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.equal, rhs.node)
    }
    /// The two relationships have different numbers of objects.
    public static func != (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.notEqual, rhs.node)
    }
    /// The left relationship has fewer objects.
    public static func < (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.less, rhs.node)
    }
    /// The left relationship has at most as many objects.
    public static func <= (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.lessOrEqual, rhs.node)
    }
    /// The left relationship has more objects.
    public static func > (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.greater, rhs.node)
    }
    /// The left relationship has at least as many objects.
    public static func >= (lhs: CountExpression, rhs: CountExpression) -> EntityPredicate<Root> {
        lhs.compare(.greaterOrEqual, rhs.node)
    }
}

// MARK: - String matching

/// A column whose values are strings (`String` or `String?`).
public protocol StringValue {}
extension String: StringValue {}
extension Optional: StringValue where Wrapped == String {}

/// String operators compare Characters of strings folded as `options` say; see
/// ``StringMatching`` for the exact semantics, the same in SQL and in memory.
extension TypedColumn where Value: StringValue {
    private func match(_ op: StringOperator, _ text: String, _ options: StringOptions) -> EntityPredicate<Root> {
        EntityPredicate(.match(node, op, .value(text.databaseValue), options))
    }

    private func match<Other>(
        _ op: StringOperator, _ other: TypedColumn<Root, Other>, _ options: StringOptions
    ) -> EntityPredicate<Root> {
        EntityPredicate(.match(node, op, other.node, options))
    }

    /// `==[c]`, `==[d]`, `==[cd]`: the value equals `text` once both are folded as
    /// `options` say; nil equals nil. Negate it for `!=[c]`:
    ///
    /// ```swift
    /// Note.title.equals("straße", .caseInsensitive)    // "STRASSE", "Straße", "strasse"…
    /// !Note.title.equals("resume", .diacriticInsensitive)  // not "résumé", "resume"…
    /// ```
    ///
    /// Unlike `==`, which compares bytes, it compares Characters, so canonically equivalent
    /// strings are equal even without options.
    public func equals(_ text: Value, _ options: StringOptions = []) -> EntityPredicate<Root>
    where Value: DatabaseValueConvertible {
        EntityPredicate(.match(node, .equal, .value(text.databaseValue), options))
    }

    /// `==[c]` between two columns: `Note.title.equals(Note.subtitle, .caseInsensitive)`.
    public func equals(
        _ other: TypedColumn<Root, some StringValue>, _ options: StringOptions = []
    ) -> EntityPredicate<Root> {
        match(.equal, other, options)
    }

    /// `CONTAINS` between two columns: the value contains the other column's value.
    public func contains(
        _ other: TypedColumn<Root, some StringValue>, _ options: StringOptions = []
    ) -> EntityPredicate<Root> {
        match(.contains, other, options)
    }

    /// `BEGINSWITH` between two columns.
    public func beginsWith(
        _ other: TypedColumn<Root, some StringValue>, _ options: StringOptions = []
    ) -> EntityPredicate<Root> {
        match(.beginsWith, other, options)
    }

    /// `ENDSWITH` between two columns.
    public func endsWith(
        _ other: TypedColumn<Root, some StringValue>, _ options: StringOptions = []
    ) -> EntityPredicate<Root> {
        match(.endsWith, other, options)
    }

    /// `LIKE` between two columns: the other column's value is the pattern.
    public func like(
        _ other: TypedColumn<Root, some StringValue>, _ options: StringOptions = []
    ) -> EntityPredicate<Root> {
        match(.like, other, options)
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

    /// `LIKE`: `*` matches any run of characters, `?` exactly one, and a backslash makes the
    /// character after it literal (`\\*`, `\\?`, `\\\\` in a Swift literal). Escape a literal
    /// text with ``StringMatching/likeEscaped(_:)``:
    ///
    /// ```swift
    /// Note.title.like(StringMatching.likeEscaped("50% *off*") + "*")   // begins with the text
    /// ```
    public func like(_ pattern: String, _ options: StringOptions = []) -> EntityPredicate<Root> {
        match(.like, pattern, options)
    }
}
