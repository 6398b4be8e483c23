/// The tree of a `where:` predicate, as parsed and type-checked by `PredicateParser`.
///
/// Key paths are lists of names starting at the entity the predicate is about. Inside a
/// `.quantified` node, paths start at the destination entity of the to-many relationship.
public indirect enum PredicateExpression: Hashable, Sendable {
    case and(PredicateExpression, PredicateExpression)
    case or(PredicateExpression, PredicateExpression)
    case not(PredicateExpression)
    /// `true` or `false` on its own.
    case constant(Bool)
    /// `lhs op rhs`, with `[c]`/`[d]` options for string operators.
    case comparison(PredicateOperand, ComparisonOperator, PredicateOperand, StringComparisonOptions)
    /// `lhs IN {a, b}` or `lhs IN $list`.
    case inList(PredicateOperand, [PredicateOperand])
    case inParameter(PredicateOperand, String)
    /// `lhs BETWEEN {low, high}`.
    case between(PredicateOperand, PredicateOperand, PredicateOperand)
    /// `ANY tags.name == "x"` → `.quantified(.any, ["tags"], <name == "x" over Tag>)`.
    case quantified(Quantifier, toMany: [String], PredicateExpression)
}

public enum Quantifier: String, Hashable, Sendable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

public enum ComparisonOperator: String, Hashable, Sendable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case contains = "CONTAINS"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case like = "LIKE"
}

/// `[c]`, `[d]`, `[cd]`.
public struct StringComparisonOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

public enum PredicateOperand: Hashable, Sendable {
    /// `title`, `notebook.name`.
    case keyPath([String])
    /// `tags.@count`.
    case count([String])
    case literal(PredicateLiteral)
    /// `$text`.
    case parameter(String)
}

public enum PredicateLiteral: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
}

/// A `$name` parameter of a predicate and the type inferred from what it is compared with.
public struct PredicateParameter: Hashable, Sendable {
    public var name: String
    public var type: AttributeType
    /// True when the parameter is the right-hand side of `IN`: the Swift argument is an array.
    public var isList: Bool
    /// True when compared with an optional attribute using `==`/`!=`: the argument may be nil.
    public var isOptional: Bool

    public init(name: String, type: AttributeType, isList: Bool = false, isOptional: Bool = false) {
        self.name = name
        self.type = type
        self.isList = isList
        self.isOptional = isOptional
    }
}
