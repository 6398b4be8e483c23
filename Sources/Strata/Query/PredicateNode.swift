import GRDB

/// The untyped tree behind an ``EntityPredicate``. Paths are lists of names from the
/// predicate's root entity, through to-one relationships, to an attribute (or `id`).
public indirect enum PredicateNode: Hashable, Sendable {
    case constant(Bool)
    case and([PredicateNode])
    case or([PredicateNode])
    case not(PredicateNode)
    /// `lhs op rhs`. `==`/`!=` treat nil like a value (SQL `IS`/`IS NOT`); the ordering
    /// operators are false when either side is nil.
    case compare(ValueNode, ComparisonOperator, ValueNode)
    /// String matching with `[c]`/`[d]` options; false when either side is nil.
    case match(ValueNode, StringOperator, ValueNode, StringOptions)
    case isIn(ValueNode, [DatabaseValue])
    /// `low <= value <= high`.
    case between(ValueNode, DatabaseValue, DatabaseValue)
    /// `ANY`/`ALL`/`NONE` of a to-many relationship's destination objects satisfy the
    /// predicate, whose paths start at the destination entity.
    case quantified(Quantifier, relationship: [String], PredicateNode)
}

public indirect enum ValueNode: Hashable, Sendable {
    /// An attribute, `id`, or a to-one's foreign key, possibly through to-one relationships.
    case path([String])
    /// The number of destination objects of a to-many relationship.
    case count([String])
    case value(DatabaseValue)
}

public enum ComparisonOperator: String, Hashable, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

public enum StringOperator: String, Hashable, Sendable {
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    /// `*` matches any run of characters, `?` one character.
    case like = "LIKE"
}

public enum Quantifier: String, Hashable, Sendable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// The `[c]` and `[d]` options of string operators.
public struct StringOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: compare without regard to case (Unicode case folding).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: compare without regard to diacritics.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// One sort key of the untyped tree.
public struct SortNode: Hashable, Sendable {
    public var path: [String]
    public var descending: Bool
    public init(path: [String], descending: Bool) {
        self.path = path
        self.descending = descending
    }
}
