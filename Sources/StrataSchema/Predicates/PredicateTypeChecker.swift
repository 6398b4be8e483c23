/// Type-checks a parsed predicate against an entity and infers its `$name` parameters.
struct PredicateTypeChecker {
    typealias Failure = PredicateParser.Failure

    let schema: Schema
    var failures: [Failure] = []
    var parameters: [PredicateParameter] = []

    init(schema: Schema) { self.schema = schema }

    /// What an operand denotes once its key path is resolved.
    enum Resolved: Equatable {
        /// An attribute (or `@count`): its type, whether it can be nil, and how to name it.
        case value(AttributeType, optional: Bool, name: String)
        /// A to-one relationship (only comparable with nil).
        case toOne(String, optional: Bool, name: String)
        case literal(PredicateLiteral)
        case parameter(String)
        case invalid

        var isKeyPath: Bool {
            switch self {
            case .value, .toOne: true
            default: false
            }
        }
    }

    // MARK: - Expressions

    mutating func check(_ node: PredicateSyntax, entity: Entity) -> PredicateExpression {
        switch node {
        case .and(let l, let r):
            return .and(check(l, entity: entity), check(r, entity: entity))
        case .or(let l, let r):
            return .or(check(l, entity: entity), check(r, entity: entity))
        case .not(let inner):
            return .not(check(inner, entity: entity))
        case .constant(let value, _):
            return .constant(value)
        case .comparison(let l, let op, let r, let options, let offset):
            checkComparison(l, op, r, options, offset: offset, entity: entity)
            return .comparison(l.kind, op, r.kind, options)
        case .inList(let l, let items, let offset):
            checkIn(l, items, offset: offset, entity: entity)
            return .inList(l.kind, items.map(\.kind))
        case .inParameter(let l, let name, let offset):
            // `notebook IN $notebooks`: a list of the destination's ids.
            let resolved = resolve(l, entity: entity)
            if case .toOne(let destination, _, _) = resolved {
                register(name, type: .int, isList: true, isOptional: false, objectIDOf: destination, offset: offset)
            } else if case .value(let type, _, _) = reference(l, resolved: resolved) {
                register(name, type: type, isList: true, isOptional: false, offset: offset)
            }
            return .inParameter(l.kind, name)
        case .between(let l, let low, let high, let offset):
            checkBetween(l, low, high, offset: offset, entity: entity)
            return .between(l.kind, low.kind, high.kind)
        case .quantified(let quantifier, let offset, let inner):
            guard let (toMany, destination, rewritten) = splitQuantified(inner, quantifier: quantifier, offset: offset,
                                                                       entity: entity)
            else { return .constant(false) }
            return .quantified(quantifier, toMany: toMany, check(rewritten, entity: destination))
        }
    }

    /// `ANY tags.name == "x"`: finds the to-many prefix of the inner key path and rewrites the
    /// inner predicate relative to the destination entity.
    mutating func splitQuantified(
        _ inner: PredicateSyntax, quantifier: Quantifier, offset: Int, entity: Entity
    ) -> ([String], Entity, PredicateSyntax)? {
        let keyPathOperand: PredicateOperandSyntax
        var otherOperands: [PredicateOperandSyntax] = []
        switch inner {
        case .comparison(let l, _, let r, _, _):
            if case .keyPath = l.kind {
                keyPathOperand = l
                otherOperands = [r]
            } else {
                keyPathOperand = r
                otherOperands = [l]
            }
        case .inList(let l, let items, _):
            keyPathOperand = l
            otherOperands = items
        case .inParameter(let l, _, _):
            keyPathOperand = l
        case .between(let l, let low, let high, _):
            keyPathOperand = l
            otherOperands = [low, high]
        default:
            failures.append(Failure("\(quantifier.rawValue) must be followed by a comparison", offset: offset))
            return nil
        }
        guard case .keyPath(let path) = keyPathOperand.kind else {
            failures.append(Failure(
                "\(quantifier.rawValue) needs a key path through a to-many relationship, e.g. \(quantifier.rawValue) tags.name == \"x\"",
                offset: offset))
            return nil
        }
        for other in otherOperands {
            if case .keyPath = other.kind {
                failures.append(Failure(
                    "the other side of an \(quantifier.rawValue) comparison must be a value or $parameter",
                    offset: other.offset))
                return nil
            }
        }
        var current = entity
        for (index, segment) in path.enumerated() {
            let segmentOffset = keyPathOperand.segmentOffsets[index]
            guard let relationship = current.relationship(named: segment) else {
                if current.attribute(named: segment) != nil {
                    failures.append(Failure(
                        "\(quantifier.rawValue) needs a to-many relationship before '\(segment)', e.g. \(quantifier.rawValue) tags.name == \"x\"",
                        offset: segmentOffset))
                } else {
                    unknownMember(segment, in: current, offset: segmentOffset)
                }
                return nil
            }
            guard let destination = schema.entity(named: relationship.destination) else { return nil }
            if relationship.isToMany {
                let rest = Array(path[(index + 1)...])
                guard !rest.isEmpty else {
                    failures.append(Failure(
                        "add an attribute after '\(segment)', e.g. \(quantifier.rawValue) \(path.joined(separator: ".")).name",
                        offset: segmentOffset))
                    return nil
                }
                var rewrittenOperand = keyPathOperand
                rewrittenOperand.kind = .keyPath(rest)
                rewrittenOperand.segmentOffsets = Array(keyPathOperand.segmentOffsets[(index + 1)...])
                rewrittenOperand.offset = rewrittenOperand.segmentOffsets[0]
                let rewritten: PredicateSyntax =
                    switch inner {
                    case .comparison(let l, let op, let r, let options, let o):
                        if case .keyPath = l.kind {
                            .comparison(rewrittenOperand, op, r, options, offset: o)
                        } else {
                            .comparison(l, op, rewrittenOperand, options, offset: o)
                        }
                    case .inList(_, let items, let o): .inList(rewrittenOperand, items, offset: o)
                    case .inParameter(_, let name, let o): .inParameter(rewrittenOperand, name, offset: o)
                    case .between(_, let low, let high, let o): .between(rewrittenOperand, low, high, offset: o)
                    default: inner
                    }
                return (Array(path[...index]), destination, rewritten)
            }
            current = destination
        }
        failures.append(Failure(
            "\(quantifier.rawValue) needs a key path through a to-many relationship, e.g. \(quantifier.rawValue) tags.name == \"x\"",
            offset: keyPathOperand.offset))
        return nil
    }

    // MARK: - Comparisons

    mutating func checkComparison(
        _ l: PredicateOperandSyntax, _ op: ComparisonOperator, _ r: PredicateOperandSyntax,
        _ options: StringComparisonOptions, offset: Int, entity: Entity
    ) {
        let lhs = resolve(l, entity: entity)
        let rhs = resolve(r, entity: entity)
        if lhs == .invalid || rhs == .invalid { return }
        let reference: Resolved
        let other: Resolved
        let otherSyntax: PredicateOperandSyntax
        if lhs.isKeyPath {
            (reference, other, otherSyntax) = (lhs, rhs, r)
        } else if rhs.isKeyPath {
            (reference, other, otherSyntax) = (rhs, lhs, l)
        } else {
            failures.append(Failure("a comparison needs a key path on at least one side", offset: offset))
            return
        }
        let isEquality = op == .equal || op == .notEqual
        let isStringOperator = [.contains, .beginsWith, .endsWith, .like].contains(op)
        let isOrdering = [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op)
        if isStringOperator && !lhs.isKeyPath {
            // `'abc' CONTAINS title` would ask whether the value contains the column.
            failures.append(Failure("the left side of \(op.rawValue) must be a key path", offset: l.offset))
            return
        }
        if other == .literal(.null) {
            guard isEquality else {
                failures.append(Failure("nil can only be compared with == or !=", offset: otherSyntax.offset))
                return
            }
            switch reference {
            case .value(let type, let optional, let name):
                if !options.isEmpty && type != .string {
                    failures.append(Failure("[c]/[d] needs a String, but \(name) is \(type.name)", offset: offset))
                } else if !optional {
                    failures.append(Failure("\(name) is not optional and is never nil", offset: otherSyntax.offset))
                }
            case .toOne(_, let optional, let name):
                if !options.isEmpty {
                    failures.append(Failure("[c] and [d] apply only to string comparisons", offset: offset))
                } else if !optional {
                    failures.append(Failure("\(name) is not optional and is never nil", offset: otherSyntax.offset))
                }
            default: break
            }
            return
        }
        guard case .value(let type, let optional, let name) = reference else {
            if case .toOne(let destination, let optional, let name) = reference {
                // `notebook == $notebook`: the argument is the destination's id.
                if isEquality, options.isEmpty, case .parameter(let parameter) = other {
                    register(
                        parameter, type: .int, isList: false, isOptional: optional, objectIDOf: destination,
                        offset: otherSyntax.offset)
                    return
                }
                failures.append(Failure(
                    "\(name) is a relationship; compare one of its attributes, nil, or a $parameter with == or !=",
                    offset: lhs.isKeyPath ? l.offset : r.offset))
            }
            return
        }
        if !options.isEmpty && !(isStringOperator || isEquality) {
            failures.append(Failure("[c] and [d] apply only to string comparisons", offset: offset))
            return
        }
        if isStringOperator || !options.isEmpty {
            guard type == .string else {
                failures.append(Failure(
                    "\(isStringOperator ? op.rawValue : "[c]/[d]") needs a String, but \(name) is \(type.name)",
                    offset: offset))
                return
            }
        }
        if isOrdering, [AttributeType.bool, .uuid, .data].contains(type) {
            failures.append(Failure("'\(op.rawValue)' can't order \(type.name) values (\(name))", offset: offset))
            return
        }
        if isOrdering, case .enumeration = type {
            failures.append(Failure(
                "'\(op.rawValue)' can't order enum values (\(name)): they would compare by raw value, alphabetically; use IN {…}",
                offset: offset))
            return
        }
        checkOther(other, otherSyntax, against: type, optional: optional && isEquality, name: name)
    }

    /// Checks the value side of a comparison against the key path side's type.
    mutating func checkOther(
        _ other: Resolved, _ syntax: PredicateOperandSyntax, against type: AttributeType, optional: Bool, name: String
    ) {
        switch other {
        case .literal(let literal):
            if let message = literalProblem(literal, type: type, name: name) {
                failures.append(Failure(message, offset: syntax.offset))
            }
        case .parameter(let parameter):
            register(parameter, type: type, isList: false, isOptional: optional, offset: syntax.offset)
        case .value(let otherType, _, let otherName):
            if !Self.comparable(type, otherType) {
                failures.append(Failure(
                    "cannot compare \(name) (\(type.name)) with \(otherName) (\(otherType.name))", offset: syntax.offset))
            }
        case .toOne(_, _, let otherName):
            failures.append(Failure(
                "\(otherName) is a relationship; compare one of its attributes or nil", offset: syntax.offset))
        case .invalid:
            break
        }
    }

    mutating func checkIn(
        _ l: PredicateOperandSyntax, _ items: [PredicateOperandSyntax], offset: Int, entity: Entity
    ) {
        guard case .value(let type, let optional, let name) = reference(l, entity: entity, offset: offset) else { return }
        for item in items {
            let resolved = resolve(item, entity: entity)
            if resolved.isKeyPath {
                failures.append(Failure("the elements of an IN list must be values or $parameters", offset: item.offset))
            } else if resolved == .literal(.null) {
                if !optional {
                    failures.append(Failure("\(name) is not optional and is never nil", offset: item.offset))
                }
            } else {
                checkOther(resolved, item, against: type, optional: false, name: name)
            }
        }
    }

    mutating func checkBetween(
        _ l: PredicateOperandSyntax, _ low: PredicateOperandSyntax, _ high: PredicateOperandSyntax, offset: Int,
        entity: Entity
    ) {
        guard case .value(let type, _, let name) = reference(l, entity: entity, offset: offset) else { return }
        if [AttributeType.bool, .uuid, .data].contains(type) {
            failures.append(Failure("BETWEEN can't order \(type.name) values (\(name))", offset: offset))
            return
        }
        if case .enumeration = type {
            failures.append(Failure(
                "BETWEEN can't order enum values (\(name)): they would compare by raw value, alphabetically; use IN {…}",
                offset: offset))
            return
        }
        for bound in [low, high] {
            let resolved = resolve(bound, entity: entity)
            if resolved == .literal(.null) {
                failures.append(Failure("a BETWEEN bound can't be nil", offset: bound.offset))
            } else if resolved != .invalid {
                checkOther(resolved, bound, against: type, optional: false, name: name)
            }
        }
    }

    /// The left side of IN/BETWEEN: it must be an attribute key path or `@count`.
    mutating func reference(_ l: PredicateOperandSyntax, entity: Entity, offset: Int) -> Resolved {
        reference(l, resolved: resolve(l, entity: entity))
    }

    /// ``reference(_:entity:offset:)`` of an operand already resolved.
    mutating func reference(_ l: PredicateOperandSyntax, resolved: Resolved) -> Resolved {
        switch resolved {
        case .value:
            return resolved
        case .toOne(_, _, let name):
            failures.append(Failure("\(name) is a relationship; compare one of its attributes", offset: l.offset))
        case .literal, .parameter:
            failures.append(Failure("the left side of IN and BETWEEN must be a key path", offset: l.offset))
        case .invalid:
            break
        }
        return .invalid
    }

    // MARK: - Operands

    mutating func resolve(_ operand: PredicateOperandSyntax, entity: Entity) -> Resolved {
        switch operand.kind {
        case .literal(let literal):
            return .literal(literal)
        case .parameter(let name):
            return .parameter(name)
        case .keyPath(let path), .count(let path):
            let isCount = if case .count = operand.kind { true } else { false }
            var current = entity
            var optional = false
            for (index, segment) in path.enumerated() {
                let segmentOffset = operand.segmentOffsets[index]
                let isLast = index == path.count - 1
                let spelled = "'\(path[...index].joined(separator: "."))'"
                if let attribute = current.attribute(named: segment) {
                    if isCount {
                        failures.append(Failure(
                            "@count needs a to-many relationship, but '\(segment)' is an attribute", offset: segmentOffset))
                        return .invalid
                    }
                    guard isLast else {
                        failures.append(Failure(
                            "'\(segment)' is an attribute of '\(current.name)' and has no member '\(path[index + 1])'",
                            offset: operand.segmentOffsets[index + 1]))
                        return .invalid
                    }
                    if attribute.isTransient {
                        failures.append(Failure(
                            "\(spelled) is transient: it is not stored, so a predicate cannot test it", offset: segmentOffset))
                        return .invalid
                    }
                    if attribute.type.isCodable {
                        failures.append(Failure(
                            "\(spelled) is a Codable attribute, stored as JSON text; predicates cannot compare it",
                            offset: segmentOffset))
                        return .invalid
                    }
                    return .value(attribute.type, optional: optional || attribute.isOptional, name: spelled)
                }
                guard let relationship = current.relationship(named: segment) else {
                    unknownMember(segment, in: current, offset: segmentOffset, after: path[..<index].joined(separator: "."))
                    return .invalid
                }
                guard let destination = schema.entity(named: relationship.destination) else { return .invalid }
                if relationship.isToMany {
                    if isCount && isLast {
                        return .value(.int, optional: false, name: "'\(path.joined(separator: ".")).@count'")
                    }
                    failures.append(Failure(
                        "'\(segment)' is a to-many relationship; use ANY, ALL or NONE, or '\(path[...index].joined(separator: ".")).@count'",
                        offset: segmentOffset))
                    return .invalid
                }
                if isCount && isLast {
                    failures.append(Failure(
                        "@count needs a to-many relationship, but '\(segment)' is to-one", offset: segmentOffset))
                    return .invalid
                }
                optional = optional || !relationship.isRequired
                if isLast {
                    return .toOne(destination.name, optional: optional, name: spelled)
                }
                current = destination
            }
            return .invalid
        }
    }

    /// `prefix`: the to-one path before `name` (empty at the root), for the hint on keys.
    mutating func unknownMember(_ name: String, in entity: Entity, offset: Int, after prefix: String = "") {
        let members = entity.attributes.map(\.name) + entity.relationships.map(\.name)
        var message = "unknown attribute or relationship '\(name)' in '\(entity.name)'"
        if name == entity.primaryKey || name == "objectID" {
            // The key is not an operand; a to-one compares with an id by itself.
            message += prefix.isEmpty
                ? "; '\(name)' is its primary key, which predicates do not compare"
                : "; '\(name)' is its primary key: compare the relationship itself with an id ('\(prefix) == $\(entity.name.prefix(1).lowercased() + entity.name.dropFirst())')"
        } else if name == "id" && !entity.isAbstract {
            message += "; its primary key is named '\(entity.primaryKey)' ('primaryKey:'), which predicates do not compare"
        } else {
            message += Suggestions.didYouMean(name, in: members)
        }
        failures.append(Failure(message, offset: offset))
    }

    // MARK: - Types

    static let integerTypes: [AttributeType] = [.int, .int32, .int16]
    static let numericTypes: [AttributeType] = [.int, .int32, .int16, .double, .float, .decimal]

    static func comparable(_ a: AttributeType, _ b: AttributeType) -> Bool {
        a == b || (numericTypes.contains(a) && numericTypes.contains(b))
    }

    /// Why `literal` can't be compared with a value of `type`, or nil when it can.
    func literalProblem(_ literal: PredicateLiteral, type: AttributeType, name: String) -> String? {
        let mismatch = "cannot compare \(name) (\(type.name)) with \(literal.describe)"
        switch (literal, type) {
        case (.string, .string), (.string, .url):
            return nil
        case (.string(let value), .uuid):
            return DefaultValueParser.isUUID(value) ? nil : "\"\(value)\" is not a valid UUID"
        case (.string(let value), .enumeration(let enumName)):
            guard let enumType = schema.enumType(named: enumName) else { return nil }
            if enumType.cases.contains(value) { return nil }
            let suggestion = Suggestions.closest(to: value, in: enumType.cases)
            return "'\(value)' is not a case of enum '\(enumName)'"
                + (suggestion.map { "; did you mean '\($0)'?" }
                    ?? "; its cases are \(enumType.cases.joined(separator: ", "))")
        case (.int(let value), _) where Self.numericTypes.contains(type):
            if let range = DefaultValueParser.range(of: type), !range.contains(value) {
                return "\(value) is out of range for \(type.name) (\(name))"
            }
            return nil
        case (.double, .double), (.double, .float), (.double, .decimal):
            return nil
        case (.bool, .bool):
            return nil
        default:
            if case .date = type, case .string = literal {
                return mismatch + "; compare dates with a $parameter"
            }
            return mismatch
        }
    }

    /// Records a parameter's use; a second use must agree on the type.
    mutating func register(
        _ name: String, type: AttributeType, isList: Bool, isOptional: Bool, objectIDOf: String? = nil, offset: Int
    ) {
        func spelled(_ type: AttributeType, _ isList: Bool, _ objectIDOf: String?) -> String {
            let base = objectIDOf.map { "\($0).ID" } ?? type.name
            return isList ? "[\(base)]" : base
        }
        if let index = parameters.firstIndex(where: { $0.name == name }) {
            let first = parameters[index]
            if first.type != type || first.isList != isList || first.objectIDOf != objectIDOf {
                failures.append(Failure(
                    "parameter '$\(name)' is used as \(spelled(type, isList, objectIDOf)) here but as \(spelled(first.type, first.isList, first.objectIDOf)) before",
                    offset: offset))
            } else {
                parameters[index].isOptional = first.isOptional && isOptional
            }
        } else {
            parameters.append(PredicateParameter(
                name: name, type: type, isList: isList, isOptional: isOptional, objectIDOf: objectIDOf))
        }
    }
}
