/// Parses the NSPredicate-like `where:` language into an untyped tree with offsets.
///
/// Use `PredicateParser.check(_:in:schema:)` to parse *and* type-check a predicate against
/// an entity; it produces the `PredicateExpression` and the inferred `$name` parameters.
///
/// ```swift
/// let result = PredicateParser.check("title CONTAINS[c] $text", in: note, schema: schema)
/// // result.expression == .comparison(.keyPath(["title"]), .contains, .parameter("text"), .caseInsensitive)
/// ```
public struct PredicateParser {
    /// A syntax or type error, `offset` counting Unicode scalars from the start of the text.
    public struct Failure: Error, Hashable, Sendable {
        /// What is wrong, for a diagnostic.
        public var message: String
        /// Where, in Unicode scalars from the start of the predicate text.
        public var offset: Int

        /// A failure.
        public init(_ message: String, offset: Int) {
            self.message = message
            self.offset = offset
        }
    }

    /// What `check` produces: a tree and parameters when there are no failures.
    public struct Result: Hashable, Sendable {
        /// The type-checked tree; nil when there are failures.
        public var expression: PredicateExpression?
        /// The `$name` parameters in order of first appearance, with their inferred types.
        public var parameters: [PredicateParameter]
        /// Syntax or type errors; the first syntax error stops parsing.
        public var failures: [Failure]
    }

    private var tokens: [PredicateToken]
    private var position = 0
    private var depth = 0

    init(tokens: [PredicateToken]) { self.tokens = tokens }

    /// Parses and type-checks `text` as a predicate over `entity`.
    public static func check(_ text: String, in entity: Entity, schema: Schema) -> Result {
        let node: PredicateSyntax
        do throws(Failure) {
            let tokens = try PredicateLexer.tokenize(text)
            var parser = PredicateParser(tokens: tokens)
            node = try parser.parseTop()
        } catch {
            return Result(expression: nil, parameters: [], failures: [error])
        }
        var checker = PredicateTypeChecker(schema: schema)
        let expression = checker.check(node, entity: entity)
        if !checker.failures.isEmpty {
            return Result(expression: nil, parameters: [], failures: checker.failures)
        }
        return Result(expression: expression, parameters: checker.parameters, failures: [])
    }

    // MARK: - Grammar

    private var current: PredicateToken { tokens[position] }

    private mutating func advance() -> PredicateToken {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    mutating func parseTop() throws(Failure) -> PredicateSyntax {
        if current.kind == .end { throw Failure("the predicate is empty", offset: 0) }
        let node = try parseOr()
        if current.kind != .end {
            throw Failure("expected AND, OR or the end of the predicate, found \(current.describe)", offset: current.offset)
        }
        return node
    }

    private mutating func parseOr() throws(Failure) -> PredicateSyntax {
        var node = try parseAnd()
        while current.isKeyword("OR") || current.kind == .symbol("||") {
            _ = advance()
            node = .or(node, try parseAnd())
        }
        return node
    }

    private mutating func parseAnd() throws(Failure) -> PredicateSyntax {
        var node = try parseUnary()
        while current.isKeyword("AND") || current.kind == .symbol("&&") {
            _ = advance()
            node = .and(node, try parseUnary())
        }
        return node
    }

    private mutating func parseUnary() throws(Failure) -> PredicateSyntax {
        depth += 1
        defer { depth -= 1 }
        if depth > 200 { throw Failure("the predicate is nested too deeply", offset: current.offset) }
        if current.isKeyword("NOT") || current.kind == .symbol("!") {
            _ = advance()
            return .not(try parseUnary())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(Failure) -> PredicateSyntax {
        let token = current
        if token.kind == .symbol("(") {
            _ = advance()
            let node = try parseOr()
            guard current.kind == .symbol(")") else {
                throw Failure("expected ')' to close the '(', found \(current.describe)", offset: current.offset)
            }
            _ = advance()
            return node
        }
        for quantifier in [Quantifier.any, .all, .none] where token.isKeyword(quantifier.rawValue) {
            _ = advance()
            return .quantified(quantifier, offset: token.offset, try parseComparison())
        }
        if token.isKeyword("SOME") {
            _ = advance()
            return .quantified(.any, offset: token.offset, try parseComparison())
        }
        if token.isKeyword("TRUEPREDICATE") || token.isKeyword("FALSEPREDICATE") {
            _ = advance()
            return .constant(token.isKeyword("TRUEPREDICATE"), offset: token.offset)
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws(Failure) -> PredicateSyntax {
        let lhs = try parseOperand()
        let token = current
        if case .literal(.bool(let value)) = lhs.kind, !token.startsComparison {
            return .constant(value, offset: lhs.offset)
        }
        if case .symbol(let symbol) = token.kind, let op = Self.symbolOperators[symbol] {
            _ = advance()
            let options = try parseOptions()
            return .comparison(lhs, op, try parseOperand(), options, offset: token.offset)
        }
        for op in [ComparisonOperator.contains, .beginsWith, .endsWith, .like] where token.isKeyword(op.rawValue) {
            _ = advance()
            let options = try parseOptions()
            return .comparison(lhs, op, try parseOperand(), options, offset: token.offset)
        }
        if token.isKeyword("IN") {
            _ = advance()
            if case .parameter(let name) = current.kind {
                let parameter = advance()
                return .inParameter(lhs, name, offset: parameter.offset)
            }
            let list = try parseList(after: "IN")
            if list.isEmpty { throw Failure("the list after IN is empty", offset: token.offset) }
            return .inList(lhs, list, offset: token.offset)
        }
        if token.isKeyword("BETWEEN") {
            _ = advance()
            let list = try parseList(after: "BETWEEN")
            guard list.count == 2 else {
                throw Failure("BETWEEN needs exactly two bounds, {low, high}; found \(list.count)", offset: token.offset)
            }
            return .between(lhs, list[0], list[1], offset: token.offset)
        }
        throw Failure("expected a comparison operator after \(lhs.describe), found \(token.describe)",
                      offset: token.offset)
    }

    private static let symbolOperators: [String: ComparisonOperator] = [
        "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
        "=<": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual,
    ]

    /// `[c]`, `[d]`, `[cd]` right after an operator.
    private mutating func parseOptions() throws(Failure) -> StringComparisonOptions {
        guard case .options(let text) = current.kind else { return [] }
        let token = advance()
        if text.isEmpty {
            throw Failure("unknown comparison option '[]'; use [c], [d] or [cd]", offset: token.offset)
        }
        var options: StringComparisonOptions = []
        for character in text {
            switch character {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default:
                throw Failure("unknown comparison option '[\(text)]'; use [c], [d] or [cd]", offset: token.offset)
            }
        }
        return options
    }

    /// `{a, b, c}`.
    private mutating func parseList(after keyword: String) throws(Failure) -> [PredicateOperandSyntax] {
        guard current.kind == .symbol("{") else {
            throw Failure("expected '{' or a $parameter after \(keyword), found \(current.describe)",
                          offset: current.offset)
        }
        _ = advance()
        var items: [PredicateOperandSyntax] = []
        if current.kind == .symbol("}") {
            _ = advance()
            return items
        }
        while true {
            items.append(try parseOperand())
            if current.kind == .symbol(",") {
                _ = advance()
                continue
            }
            guard current.kind == .symbol("}") else {
                throw Failure("expected ',' or '}' in the list, found \(current.describe)", offset: current.offset)
            }
            _ = advance()
            return items
        }
    }

    private mutating func parseOperand() throws(Failure) -> PredicateOperandSyntax {
        let token = advance()
        switch token.kind {
        case .string(let value):
            return PredicateOperandSyntax(.literal(.string(value)), offset: token.offset)
        case .integer(let value):
            return PredicateOperandSyntax(.literal(.int(value)), offset: token.offset)
        case .decimal(let value):
            return PredicateOperandSyntax(.literal(.double(value)), offset: token.offset)
        case .parameter(let name):
            return PredicateOperandSyntax(.parameter(name), offset: token.offset)
        case .symbol("-"):
            let number = advance()
            switch number.kind {
            case .integer(let value): return PredicateOperandSyntax(.literal(.int(-value)), offset: token.offset)
            case .decimal(let value): return PredicateOperandSyntax(.literal(.double(-value)), offset: token.offset)
            default: throw Failure("expected a number after '-', found \(number.describe)", offset: number.offset)
            }
        case .identifier(let name, let escaped):
            if !escaped {
                switch name.uppercased() {
                case "NIL", "NULL": return PredicateOperandSyntax(.literal(.null), offset: token.offset)
                case "TRUE", "YES": return PredicateOperandSyntax(.literal(.bool(true)), offset: token.offset)
                case "FALSE", "NO": return PredicateOperandSyntax(.literal(.bool(false)), offset: token.offset)
                default:
                    if token.isReserved {
                        throw Failure("expected a key path, value or $parameter, found keyword '\(name)'",
                                      offset: token.offset)
                    }
                }
            }
            var path = [name]
            var offsets = [token.offset]
            while current.kind == .symbol(".") {
                _ = advance()
                let segment = advance()
                switch segment.kind {
                case .identifier(let next, _):
                    path.append(next)
                    offsets.append(segment.offset)
                case .count:
                    return PredicateOperandSyntax(.count(path), offset: token.offset, segmentOffsets: offsets)
                default:
                    throw Failure("expected a name after '.', found \(segment.describe)", offset: segment.offset)
                }
            }
            return PredicateOperandSyntax(.keyPath(path), offset: token.offset, segmentOffsets: offsets)
        case .end:
            throw Failure("the predicate ends too early; expected a key path, value or $parameter", offset: token.offset)
        default:
            throw Failure("expected a key path, value or $parameter, found \(token.describe)", offset: token.offset)
        }
    }
}
