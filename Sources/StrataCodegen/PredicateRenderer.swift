import StrataSchema

/// Renders a type-checked ``PredicateExpression`` as Swift calls on typed columns:
/// `title CONTAINS[c] $text` → `Note.title.contains(text, .caseInsensitive)`.
struct PredicateRenderer {
    let context: GenerationContext
    let parameters: [PredicateParameter]
    let location: SourceLocation

    /// The Swift type of a fetch argument: `Swift.String`, `[Priority]`, `Foundation.Date?`.
    static func swiftType(of parameter: PredicateParameter) -> String {
        // An object id (`notebook == $notebook`): the destination's `ID`, as `GenerationContext.typeName` spells it.
        let base = parameter.objectIDOf.map { SwiftNames.identifier($0) + ".ID" } ?? SwiftNames.type(parameter.type)
        if parameter.isList { return "[" + base + "]" }
        return base + (parameter.isOptional ? "?" : "")
    }

    private func fail(_ message: String) -> SchemaError {
        SchemaError(diagnostics: [.error(message, at: location)])
    }

    /// A rendered expression and whether it can be used as an operand of `&&`/`||`/`!`
    /// without parentheses.
    private struct Rendered {
        var code: String
        enum Kind { case atom, comparison, and, or }
        var kind: Kind
    }

    func render(_ expression: PredicateExpression, root: Entity) throws -> String {
        try renderNode(expression, root: root).code
    }

    private func renderNode(_ expression: PredicateExpression, root: Entity) throws -> Rendered {
        switch expression {
        case .constant(let value):
            let all = "Strata.EntityPredicate<\(context.typeName(root.name))>.all"
            return Rendered(code: value ? all : "!" + all, kind: .atom)
        case .and(let lhs, let rhs):
            let l = try renderNode(lhs, root: root)
            let r = try renderNode(rhs, root: root)
            return Rendered(code: wrap(l, unless: [.atom, .comparison, .and]) + " && " + wrap(r, unless: [.atom, .comparison]), kind: .and)
        case .or(let lhs, let rhs):
            let l = try renderNode(lhs, root: root)
            let r = try renderNode(rhs, root: root)
            return Rendered(code: wrap(l, unless: [.atom, .comparison, .or]) + " || " + wrap(r, unless: [.atom, .comparison]), kind: .or)
        case .not(let operand):
            let o = try renderNode(operand, root: root)
            return Rendered(code: "!" + wrap(o, unless: [.atom]), kind: .atom)
        case .comparison(let lhs, let op, let rhs, let options):
            return try comparison(lhs, op, rhs, options, root: root)
        case .inList(let operand, let values):
            let column = try operandColumn(operand, root: root, role: "IN")
            let items = try values.map { try value($0, for: column) }
            return Rendered(code: "\(column.code).in([\(items.joined(separator: ", "))])", kind: .atom)
        case .inParameter(let operand, let name):
            let column = try operandColumn(operand, root: root, role: "IN")
            var argument = SwiftNames.identifier(name)
            if column.isOptional, let parameter = parameters.first(where: { $0.name == name }), !parameter.isOptional {
                argument += ".map(Swift.Optional.some)"
            }
            return Rendered(code: "\(column.code).in(\(argument))", kind: .atom)
        case .between(let operand, let low, let high):
            let column = try operandColumn(operand, root: root, role: "BETWEEN")
            return Rendered(
                code: "\(column.code).between(\(try value(low, for: column)), \(try value(high, for: column)))",
                kind: .atom)
        case .quantified(let quantifier, let path, let inner):
            let (code, destination) = try context.toMany(path, from: root, at: location)
            let method: String
            switch quantifier {
            case .any: method = "any"
            case .all: method = "all"
            case .none: method = "none"
            }
            return Rendered(code: "\(code).\(method)(\(try render(inner, root: destination)))", kind: .atom)
        }
    }

    private func wrap(_ rendered: Rendered, unless kinds: Set<Rendered.Kind>) -> String {
        kinds.contains(rendered.kind) ? rendered.code : "(" + rendered.code + ")"
    }

    /// The column of a key path, or the count of a to-many one (`Note.tags.count`, an `Int`
    /// that is never nil).
    private func operandColumn(
        _ operand: PredicateOperand, root: Entity, role: String
    ) throws -> GenerationContext.Column {
        switch operand {
        case .keyPath(let path):
            return try context.column(path, from: root, at: location)
        case .count(let path):
            let (code, _) = try context.toMany(path, from: root, at: location)
            return GenerationContext.Column(
                code: code + ".count", baseType: "Swift.Int", attributeType: .int, isOptional: false, toOneCode: nil)
        case .literal, .parameter:
            throw fail("the left side of \(role) must be a key path")
        }
    }

    /// A literal or parameter, as a value of `column`'s type.
    private func value(_ operand: PredicateOperand, for column: GenerationContext.Column) throws -> String {
        switch operand {
        case .parameter(let name):
            return SwiftNames.identifier(name)
        case .literal(let literal):
            return try self.literal(literal, for: column)
        case .keyPath, .count:
            throw fail("expected a value or a $parameter, not a key path")
        }
    }

    private func literal(_ literal: PredicateLiteral, for column: GenerationContext.Column) throws -> String {
        switch literal {
        case .null: return "nil"
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number):
            switch column.attributeType {
            case .double?, .float?: return SwiftNames.doubleLiteral(Double(number))
            default: return "\(number)"
            }
        case .double(let number):
            if column.attributeType == .decimal {
                return "Foundation.Decimal(string: \(SwiftNames.stringLiteral("\(number)")))!"
            }
            return SwiftNames.doubleLiteral(number)
        case .string(let text):
            guard let type = column.attributeType else { throw fail("a string cannot be compared with an identifier") }
            return context.stringValueExpression(text, type: type)
        }
    }

    private static let flipped: [ComparisonOperator: ComparisonOperator] = [
        .equal: .equal, .notEqual: .notEqual, .less: .greater, .lessOrEqual: .greaterOrEqual,
        .greater: .less, .greaterOrEqual: .lessOrEqual,
    ]

    private func comparison(
        _ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand,
        _ options: StringComparisonOptions, root: Entity
    ) throws -> Rendered {
        let isPath: (PredicateOperand) -> Bool = {
            switch $0 {
            case .keyPath, .count: true
            default: false
            }
        }
        let isCount: (PredicateOperand) -> Bool = {
            if case .count = $0 { return true }
            return false
        }
        // Put the key path on the left (`5 < count` → `count > 5`), and a count before a key
        // path (`limit < tags.@count` → `tags.@count > limit`): only counts compare with columns.
        if let swapped = Self.flipped[op], (!isPath(lhs) && isPath(rhs)) || (!isCount(lhs) && isCount(rhs)) {
            return try comparison(rhs, swapped, lhs, options, root: root)
        }
        guard isPath(lhs) else { throw fail("a comparison needs a key path on one side") }
        let column = try operandColumn(lhs, root: root, role: op.rawValue)
        switch op {
        case .contains, .beginsWith, .endsWith, .like:
            guard column.attributeType == .string, !isCount(lhs) else {
                throw fail("\(op.rawValue) needs a String key path")
            }
            let method = ["CONTAINS": "contains", "BEGINSWITH": "beginsWith", "ENDSWITH": "endsWith", "LIKE": "like"][
                op.rawValue]!
            let arguments = try matchArguments(rhs, options, for: column, root: root)
            return Rendered(code: "\(column.code).\(method)(\(arguments))", kind: .atom)
        case .equal, .notEqual:
            if let toOne = column.toOneCode, case .literal(.null) = rhs {
                return Rendered(code: (op == .equal ? "" : "!") + toOne + ".isNil", kind: .atom)
            }
            // `==[c]`: Characters of folded strings. Folding leaves nil nil, so `==[c] nil` is `== nil`.
            if !options.isEmpty, rhs != .literal(.null) {
                guard column.attributeType == .string else { throw fail("[c]/[d] need a String key path") }
                let call = "\(column.code).equals(\(try matchArguments(rhs, options, for: column, root: root)))"
                return Rendered(code: (op == .equal ? "" : "!") + call, kind: .atom)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            break
        }
        let swiftOp = op.rawValue
        switch rhs {
        case .keyPath(let otherPath):
            let other = try context.column(otherPath, from: root, at: location)
            let rootType = context.typeName(root.name)
            var left = column.code
            var right = other.code
            // Both sides of a column comparison must have one value type: view a side whose
            // type differs (optionality, or another numeric type) as a column of the
            // left side's type, optional when either side is. A count compares with `Int`
            // and `Int?` columns.
            if isCount(lhs) {
                let target = "Swift.Int" + (other.isOptional ? "?" : "")
                if other.swiftType != target { right = "Strata.TypedColumn<\(rootType), \(target)>(\(right).path)" }
            } else {
                let target = column.baseType + (column.isOptional || other.isOptional ? "?" : "")
                if column.swiftType != target { left = "Strata.TypedColumn<\(rootType), \(target)>(\(left).path)" }
                if other.swiftType != target { right = "Strata.TypedColumn<\(rootType), \(target)>(\(right).path)" }
            }
            return Rendered(code: "\(left) \(swiftOp) \(right)", kind: .comparison)
        case .count:
            guard isCount(lhs) else { throw fail("compare @count on the left side") }
            let other = try operandColumn(rhs, root: root, role: swiftOp)
            return Rendered(code: "\(column.code) \(swiftOp) \(other.code)", kind: .comparison)
        case .literal, .parameter:
            return Rendered(code: "\(column.code) \(swiftOp) \(try value(rhs, for: column))", kind: .comparison)
        }
    }

    /// The arguments of a string operator's call: the value (or other column), then the
    /// `[c]`/`[d]` options if any: `text, .caseInsensitive`.
    private func matchArguments(
        _ rhs: PredicateOperand, _ options: StringComparisonOptions, for column: GenerationContext.Column, root: Entity
    ) throws -> String {
        var arguments: [String]
        if case .keyPath(let path) = rhs {
            let other = try context.column(path, from: root, at: location)
            guard other.attributeType == .string else { throw fail("the other side needs to be a String key path") }
            arguments = [other.code]
        } else {
            arguments = [try value(rhs, for: column)]
        }
        var flags: [String] = []
        if options.contains(.caseInsensitive) { flags.append(".caseInsensitive") }
        if options.contains(.diacriticInsensitive) { flags.append(".diacriticInsensitive") }
        if flags.count == 1 { arguments.append(flags[0]) }
        if flags.count > 1 { arguments.append("[" + flags.joined(separator: ", ") + "]") }
        return arguments.joined(separator: ", ")
    }
}
