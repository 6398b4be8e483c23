/// The tree of a `where:` predicate, as parsed and type-checked by `PredicateParser`.
///
/// Key paths are lists of names starting at the entity the predicate is about. Inside a
/// `.quantified` node, paths start at the destination entity of the to-many relationship.
public indirect enum PredicateExpression: Hashable, Sendable {
    /// Both sides hold (`AND`, `&&`).
    case and(PredicateExpression, PredicateExpression)
    /// Either side holds (`OR`, `||`).
    case or(PredicateExpression, PredicateExpression)
    /// The operand does not hold (`NOT`, `!`).
    case not(PredicateExpression)
    /// `true` or `false` on its own.
    case constant(Bool)
    /// `lhs op rhs`, with `[c]`/`[d]` options for string operators and for `==`/`!=`
    /// between strings.
    case comparison(PredicateOperand, ComparisonOperator, PredicateOperand, StringComparisonOptions)
    /// `lhs IN {a, b}` or `lhs IN $list`.
    case inList(PredicateOperand, [PredicateOperand])
    /// `lhs IN $list`: the parameter is a Swift array.
    case inParameter(PredicateOperand, String)
    /// `lhs BETWEEN {low, high}`.
    case between(PredicateOperand, PredicateOperand, PredicateOperand)
    /// `ANY tags.name == "x"` → `.quantified(.any, ["tags"], <name == "x" over Tag>)`.
    case quantified(Quantifier, toMany: [String], PredicateExpression)
}

/// How `ANY`/`ALL`/`NONE` quantify a condition over a to-many relationship.
public enum Quantifier: String, Hashable, Sendable {
    /// At least one destination object matches.
    case any = "ANY"
    /// Every destination object matches (vacuously true when there is none).
    case all = "ALL"
    /// No destination object matches.
    case none = "NONE"
}

/// The comparison and string operators of the predicate language; the raw value is their spelling.
public enum ComparisonOperator: String, Hashable, Sendable, CaseIterable {
    /// `==`.
    case equal = "=="
    /// `!=`.
    case notEqual = "!="
    /// `<`.
    case less = "<"
    /// `<=`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=`.
    case greaterOrEqual = ">="
    /// `CONTAINS`: the string contains the other.
    case contains = "CONTAINS"
    /// `BEGINSWITH`: the string starts with the other.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: the string ends with the other.
    case endsWith = "ENDSWITH"
    /// `LIKE`: a pattern with `*` (any characters) and `?` (one character).
    case like = "LIKE"
}

/// `[c]`, `[d]`, `[cd]`.
public struct StringComparisonOptions: OptionSet, Hashable, Sendable {
    /// The option bits.
    public let rawValue: Int
    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: compare without regard to case.
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`: compare without regard to diacritics.
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}

/// One side of a comparison.
public enum PredicateOperand: Hashable, Sendable {
    /// `title`, `notebook.name`.
    case keyPath([String])
    /// `tags.@count`.
    case count([String])
    /// A literal value.
    case literal(PredicateLiteral)
    /// `$text`.
    case parameter(String)
}

/// A literal of a predicate.
public enum PredicateLiteral: Hashable, Sendable {
    /// A quoted string.
    case string(String)
    /// An integer.
    case int(Int64)
    /// A decimal number.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `nil` (or `NULL`).
    case null
}

/// A `$name` parameter of a predicate and the type inferred from what it is compared with.
public struct PredicateParameter: Hashable, Sendable {
    /// The name without the `$`: the Swift argument label.
    public var name: String
    /// The attribute type it is compared with: the Swift argument's type.
    public var type: AttributeType
    /// True when the parameter is the right-hand side of `IN`: the Swift argument is an array.
    public var isList: Bool
    /// True when compared with an optional attribute using `==`/`!=`: the argument may be nil.
    public var isOptional: Bool
    /// The destination entity when the parameter is compared with a to-one relationship
    /// (`notebook == $notebook`, `notebook IN $notebooks`): the Swift argument is that
    /// entity's `ID` (`type` is then ``AttributeType/int``, the id's storage).
    public var objectIDOf: String?

    /// A parameter.
    public init(name: String, type: AttributeType, isList: Bool = false, isOptional: Bool = false, objectIDOf: String? = nil) {
        self.name = name
        self.type = type
        self.isList = isList
        self.isOptional = isOptional
        self.objectIDOf = objectIDOf
    }
}
