import GRDB

/// The untyped tree behind an ``EntityPredicate``. Paths are lists of names from the
/// predicate's root entity, through to-one relationships, to an attribute (or `id`).
public indirect enum PredicateNode: Hashable, Sendable {
    /// Always true or always false.
    case constant(Bool)
    /// Every operand holds (true when there are none).
    case and([PredicateNode])
    /// At least one operand holds (false when there are none).
    case or([PredicateNode])
    /// The operand does not hold.
    case not(PredicateNode)
    /// `lhs op rhs`. `==`/`!=` treat nil like a value (SQL `IS`/`IS NOT`); the ordering
    /// operators are false when either side is nil.
    case compare(ValueNode, ComparisonOperator, ValueNode)
    /// String matching with `[c]`/`[d]` options (``StringMatching``). ``StringOperator/equal``
    /// treats nil like a value, as `==` does; the other operators are false when either side
    /// is nil.
    case match(ValueNode, StringOperator, ValueNode, StringOptions)
    /// The value equals one of the listed values (never true for nil).
    case isIn(ValueNode, [DatabaseValue])
    /// `low <= value <= high`.
    case between(ValueNode, DatabaseValue, DatabaseValue)
    /// `ANY`/`ALL`/`NONE` of a to-many relationship's destination objects satisfy the
    /// predicate, whose paths start at the destination entity.
    case quantified(Quantifier, relationship: [String], PredicateNode)
}

/// One side of a comparison in a ``PredicateNode``.
public indirect enum ValueNode: Hashable, Sendable {
    /// An attribute, `id`, or a to-one's foreign key, possibly through to-one relationships.
    case path([String])
    /// The number of destination objects of a to-many relationship.
    case count([String])
    /// A constant.
    case value(DatabaseValue)
}

/// The operators of ``PredicateNode/compare(_:_:_:)``; raw values are their model-language
/// spelling.
public enum ComparisonOperator: String, Hashable, Sendable {
    /// Equal; nil equals nil.
    case equal = "=="
    /// Not equal; nil differs from every value.
    case notEqual = "!="
    /// Less than (false with nil).
    case less = "<"
    /// Less than or equal (false with nil).
    case lessOrEqual = "<="
    /// Greater than (false with nil).
    case greater = ">"
    /// Greater than or equal (false with nil).
    case greaterOrEqual = ">="
}

/// The operators of ``PredicateNode/match(_:_:_:_:)``; raw values are their model-language
/// spelling. They compare Characters of the folded strings (``StringMatching``).
public enum StringOperator: String, Hashable, Sendable {
    /// `==[c]`, `==[d]`, `==[cd]` (and `!=…` as its negation): the value equals the other
    /// string. Unlike ``ComparisonOperator/equal``, which compares bytes, it compares
    /// Characters, so canonically equivalent strings are equal. nil equals nil and differs
    /// from every string.
    case equal = "=="
    /// The value contains the pattern.
    case contains = "CONTAINS"
    /// The value starts with the pattern.
    case beginsWith = "BEGINSWITH"
    /// The value ends with the pattern.
    case endsWith = "ENDSWITH"
    /// `*` matches any run of characters, `?` one character.
    case like = "LIKE"
}

/// How ``PredicateNode/quantified(_:relationship:_:)`` counts the destination objects that match.
public enum Quantifier: String, Hashable, Sendable {
    /// At least one destination object matches.
    case any = "ANY"
    /// Every destination object matches (true when there are none).
    case all = "ALL"
    /// No destination object matches.
    case none = "NONE"
}

/// The `[c]` and `[d]` options of string operators (see ``StringMatching`` for exactly what
/// they fold).
public struct StringOptions: OptionSet, Hashable, Sendable {
    /// The options as bits: 1 for `[c]`, 2 for `[d]`.
    public let rawValue: Int
    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: compare without regard to case (full Unicode case folding: `ß` matches `ss`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: compare without regard to diacritics (`é` matches `e`; `ø` and `ß` stay).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// One sort key of the untyped tree.
public struct SortNode: Hashable, Sendable {
    /// The names from the root entity, through to-one relationships, to an attribute (or `id`).
    public var path: [String]
    /// True for descending order (nil last), false for ascending (nil first).
    public var descending: Bool
    /// A sort key on `path`.
    public init(path: [String], descending: Bool) {
        self.path = path
        self.descending = descending
    }
}
