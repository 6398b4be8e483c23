import StrataSchema

/// Renders a type-checked ``PredicateExpression`` as Swift calls on typed columns:
/// `title CONTAINS[c] $text` → `Note.title.contains(text, .caseInsensitive)`.
struct PredicateRenderer {
    let context: GenerationContext
    let parameters: [PredicateParameter]
    let location: SourceLocation

    /// The Swift type of a fetch argument: `Swift.String`, `[Priority]`, `Foundation.Date?`.
    static func swiftType(of parameter: PredicateParameter) -> String {
        let base = SwiftNames.type(parameter.type)
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
            let column = try keyPathColumn(operand, root: root, role: "IN")
            let items = try values.map { try value($0, for: column) }
            return Rendered(code: "\(column.code).in([\(items.joined(separator: ", "))])", kind: .atom)
        case .inParameter(let operand, let name):
            let column = try keyPathColumn(operand, root: root, role: "IN")
            var argument = SwiftNames.identifier(name)
            if column.isOptional, let parameter = parameters.first(where: { $0.name == name }), !parameter.isOptional {
                argument += ".map(Swift.Optional.some)"
            }
            return Rendered(code: "\(column.code).in(\(argument))", kind: .atom)
        case .between(let operand, let low, let high):
            let column = try keyPathColumn(operand, root: root, role: "BETWEEN")
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

    private func keyPathColumn(_ operand: PredicateOperand, root: Entity, role: String) throws -> GenerationContext.Column {
        guard case .keyPath(let path) = operand else { throw fail("the left side of \(role) must be a key path") }
        return try context.column(path, from: root, at: location)
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
        // Put the key path on the left: `5 < count` → `count > 5`.
        if !isPath(lhs), isPath(rhs), let swapped = Self.flipped[op] {
            return try comparison(rhs, swapped, lhs, options, root: root)
        }
        switch op {
        case .contains, .beginsWith, .endsWith, .like:
            let column = try keyPathColumn(lhs, root: root, role: op.rawValue)
            guard column.attributeType == .string else { throw fail("\(op.rawValue) needs a String key path") }
            let method = ["CONTAINS": "contains", "BEGINSWITH": "beginsWith", "ENDSWITH": "endsWith", "LIKE": "like"][
                op.rawValue]!
            var arguments = [try value(rhs, for: column)]
            var flags: [String] = []
            if options.contains(.caseInsensitive) { flags.append(".caseInsensitive") }
            if options.contains(.diacriticInsensitive) { flags.append(".diacriticInsensitive") }
            if flags.count == 1 { arguments.append(flags[0]) }
            if flags.count > 1 { arguments.append("[" + flags.joined(separator: ", ") + "]") }
            return Rendered(code: "\(column.code).\(method)(\(arguments.joined(separator: ", ")))", kind: .atom)
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            break
        }
        let swiftOp = op.rawValue
        switch lhs {
        case .count(let path):
            let (code, _) = try context.toMany(path, from: root, at: location)
            let right: String
            switch rhs {
            case .literal(.int(let number)): right = "\(number)"
            case .parameter(let name): right = SwiftNames.identifier(name)
            default: throw fail("@count compares with an integer or a $parameter")
            }
            return Rendered(code: "\(code).count \(swiftOp) \(right)", kind: .comparison)
        case .keyPath(let path):
            let column = try context.column(path, from: root, at: location)
            if let toOne = column.toOneCode, case .literal(.null) = rhs, op == .equal || op == .notEqual {
                return Rendered(code: (op == .equal ? "" : "!") + toOne + ".isNil", kind: .atom)
            }
            switch rhs {
            case .keyPath(let otherPath):
                let other = try context.column(otherPath, from: root, at: location)
                var left = column.code
                var right = other.code
                // Both sides of a column comparison must have one value type: view a side whose
                // type differs (optionality, or another numeric type) as a column of the
                // left side's type, optional when either side is.
                let target = column.baseType + (column.isOptional || other.isOptional ? "?" : "")
                let rootType = context.typeName(root.name)
                if column.swiftType != target {
                    left = "Strata.TypedColumn<\(rootType), \(target)>(\(left).path)"
                }
                if other.swiftType != target {
                    right = "Strata.TypedColumn<\(rootType), \(target)>(\(right).path)"
                }
                return Rendered(code: "\(left) \(swiftOp) \(right)", kind: .comparison)
            case .count:
                throw fail("compare @count on the left side")
            case .literal, .parameter:
                return Rendered(code: "\(column.code) \(swiftOp) \(try value(rhs, for: column))", kind: .comparison)
            }
        case .literal, .parameter:
            throw fail("a comparison needs a key path on one side")
        }
    }
}
