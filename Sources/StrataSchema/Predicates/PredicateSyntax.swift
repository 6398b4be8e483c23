/// The untyped tree, with offsets for diagnostics.
indirect enum PredicateSyntax: Hashable, Sendable {
    case and(PredicateSyntax, PredicateSyntax)
    case or(PredicateSyntax, PredicateSyntax)
    case not(PredicateSyntax)
    case constant(Bool, offset: Int)
    case comparison(PredicateOperandSyntax, ComparisonOperator, PredicateOperandSyntax, StringComparisonOptions, offset: Int)
    case inList(PredicateOperandSyntax, [PredicateOperandSyntax], offset: Int)
    case inParameter(PredicateOperandSyntax, String, offset: Int)
    case between(PredicateOperandSyntax, PredicateOperandSyntax, PredicateOperandSyntax, offset: Int)
    case quantified(Quantifier, offset: Int, PredicateSyntax)
}

struct PredicateOperandSyntax: Hashable, Sendable {
    var kind: PredicateOperand
    var offset: Int
    /// For key paths: the offset of each segment.
    var segmentOffsets: [Int]

    init(_ kind: PredicateOperand, offset: Int, segmentOffsets: [Int] = []) {
        self.kind = kind
        self.offset = offset
        self.segmentOffsets = segmentOffsets
    }

    var describe: String {
        switch kind {
        case .keyPath(let path): "'\(path.joined(separator: "."))'"
        case .count(let path): "'\(path.joined(separator: ".")).@count'"
        case .parameter(let name): "'$\(name)'"
        case .literal(let literal): literal.describe
        }
    }
}

extension PredicateLiteral {
    var describe: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .null: "nil"
        }
    }
}
