import Foundation

/// The value rules of attributes (`min`, `max`, `minLength`, `maxLength`, `pattern`) and the
/// count rules of relationships (`minCount`, `maxCount`): `min` and `max` are read against
/// the attribute's type once every enum is known, then every rule is checked against its
/// type, against its partner (`min` ≤ `max`) and against the attribute's default.
enum ValueRuleRule {
    /// The types `min` and `max` apply to.
    static let orderedTypes: [AttributeType] = [.int, .int32, .int16, .double, .float, .date]

    static func resolve(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        for entityIndex in schema.entities.indices {
            let entity = schema.entities[entityIndex]
            for attributeIndex in entity.attributes.indices {
                var attribute = entity.attributes[attributeIndex]
                resolveBounds(&attribute, of: entity, sourceMap: sourceMap, diagnostics: &diagnostics)
                checkStringRules(attribute, of: entity, sourceMap: sourceMap, diagnostics: &diagnostics)
                schema.entities[entityIndex].attributes[attributeIndex] = attribute
            }
            for relationship in entity.relationships {
                checkCounts(relationship, of: entity, sourceMap: sourceMap, diagnostics: &diagnostics)
            }
        }
    }

    /// The default's breaches of the rules, once defaults are resolved.
    static func checkDefaults(_ schema: Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        for entity in schema.entities {
            for attribute in entity.attributes where !attribute.rules.isEmpty {
                guard let value = attribute.defaultValue,
                      let problem = breach(of: attribute.rules, by: value, type: attribute.type)
                else { continue }
                let location = sourceMap.location(.attribute(attribute.name, of: entity.name, .default))
                    ?? attribute.location
                diagnostics.error("the default of '\(entity.name).\(attribute.name)' \(problem)", at: location)
            }
        }
    }

    /// What a default value breaks (`is less than its min 1`), if anything.
    static func breach(of rules: ValueRules, by value: DefaultValue, type: AttributeType) -> String? {
        let bound: RuleBound?
        switch value {
        case .int(let int): bound = type == .double || type == .float ? .double(Double(int)) : .int(int)
        case .double(let double): bound = .double(double)
        // A fixed date compares as the text it is stored as, like the date bounds.
        case .date(let milliseconds): bound = .date(DefaultValue.dateText(milliseconds: milliseconds, storage: true))
        default: bound = nil
        }
        if let bound, let min = rules.min, bound < min { return "is less than its min \(min.text)" }
        if let bound, let max = rules.max, max < bound { return "is greater than its max \(max.text)" }
        guard case .string(let text) = value, type == .string else { return nil }
        let length = text.unicodeScalars.count
        if let minLength = rules.minLength, length < minLength { return "is shorter than its minLength \(minLength)" }
        if let maxLength = rules.maxLength, length > maxLength { return "is longer than its maxLength \(maxLength)" }
        if let pattern = rules.pattern, let regex = try? Regex(pattern), (try? regex.wholeMatch(in: text)) == nil {
            return "does not match its pattern '\(pattern)'"
        }
        return nil
    }

    // MARK: - min and max

    private static func resolveBounds(
        _ attribute: inout Attribute, of entity: Entity, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag
    ) {
        let qualified = "\(entity.name).\(attribute.name)"
        for (key, field) in [("min", SourceMapKey.AttributeField.min), ("max", .max)] {
            guard let node = sourceMap.ruleBounds[.attribute(attribute.name, of: entity.name, field)],
                  let scalar = node.scalar
            else { continue }
            guard orderedTypes.contains(attribute.type) else {
                diagnostics.error(
                    "'\(key)' applies to Int, Int32, Int16, Double, Float and Date attributes, and '\(qualified)' is \(attribute.type.name)",
                    at: node.location)
                continue
            }
            switch bound(scalar, key: key, type: attribute.type, attribute: qualified) {
            case .success(let value):
                if field == .min { attribute.rules.min = value } else { attribute.rules.max = value }
            case .failure(let problem):
                diagnostics.error(problem.message, at: node.location)
            }
        }
        if let min = attribute.rules.min, let max = attribute.rules.max, max < min {
            diagnostics.error(
                "min \(min.text) of '\(qualified)' is greater than its max \(max.text)",
                at: sourceMap.location(.attribute(attribute.name, of: entity.name, .min)) ?? attribute.location)
        }
    }

    /// A `min:` or `max:` scalar as a bound of `type`.
    static func bound(_ scalar: YAMLScalar, key: String, type: AttributeType, attribute: String)
        -> Result<RuleBound, SchemaProblem>
    {
        let text = scalar.value
        let isPlain = scalar.style == .plain
        let mismatch = "\(key) '\(text)' of '\(attribute)' is not a valid \(type.name)"
        switch type {
        case .int, .int32, .int16:
            guard isPlain, let value = Int64(text) else {
                return .failure(SchemaProblem(Int64(text) != nil ? mismatch + "; write the number without quotes" : mismatch))
            }
            if let range = DefaultValueParser.range(of: type), !range.contains(value) {
                return .failure(SchemaProblem(
                    "\(key) \(text) of '\(attribute)' is out of range for \(type.name) (\(range.lowerBound)...\(range.upperBound))"))
            }
            return .success(.int(value))
        case .double, .float:
            guard isPlain, let value = Double(text), value.isFinite, !text.hasPrefix("."), !text.hasSuffix(".") else {
                return .failure(SchemaProblem(mismatch))
            }
            if type == .float {
                // A Float is stored as a Double: `max: 0.3` must let the Float 0.3
                // (0.300000011…) pass, and `min: 0.1` the Double 0.1 that raw SQL or a
                // column default writes, so the bound widens to whichever is further out.
                guard let float = Float(text), float.isFinite else {
                    return .failure(SchemaProblem("\(key) \(text) of '\(attribute)' is out of range for Float"))
                }
                return .success(.double(key == "min" ? Swift.min(value, Double(float)) : Swift.max(value, Double(float))))
            }
            return .success(.double(value))
        case .date:
            guard let stored = storedDate(text) else {
                return .failure(SchemaProblem(
                    "\(key) '\(text)' of '\(attribute)' is not a date; write 2024-01-31 or 2024-01-31T08:30:00Z (UTC)"))
            }
            return .success(.date(stored))
        default:
            return .failure(SchemaProblem(mismatch))
        }
    }

    /// `2024-01-31`, `2024-01-31T08:30`, `2024-01-31T08:30:00`, `2024-01-31T08:30:00.250Z`
    /// (UTC; a space may stand for the `T`) as the store writes dates:
    /// `2024-01-31 08:30:00.250`. Nil for anything else, or a day that does not exist.
    static func storedDate(_ text: String) -> String? {
        var rest = Substring(text)
        if rest.hasSuffix("Z") { rest = rest.dropLast() }
        func number(_ count: Int) -> Int? {
            let digits = rest.prefix(count)
            guard digits.count == count, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                  let value = Int(digits) else { return nil }
            rest = rest.dropFirst(count)
            return value
        }
        func skip(_ separator: Character) -> Bool {
            guard rest.first == separator else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2) else { return nil }
        var hour = 0, minute = 0, second = 0, millisecond = 0
        if !rest.isEmpty {
            guard skip("T") || skip(" "), let h = number(2), skip(":"), let m = number(2) else { return nil }
            hour = h
            minute = m
            if skip(":") {
                guard let s = number(2) else { return nil }
                second = s
                if skip(".") {
                    let digits = rest.prefix { $0.isASCII && $0.isNumber }
                    guard (1...3).contains(digits.count), let fraction = Int(digits) else { return nil }
                    millisecond = fraction * [100, 10, 1][digits.count - 1]
                    rest = rest.dropFirst(digits.count)
                }
            }
        }
        guard rest.isEmpty, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))"
    }

    // MARK: - Strings

    private static func checkStringRules(
        _ attribute: Attribute, of entity: Entity, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag
    ) {
        let qualified = "\(entity.name).\(attribute.name)"
        let rules = attribute.rules
        func location(_ field: SourceMapKey.AttributeField) -> SourceLocation {
            sourceMap.location(.attribute(attribute.name, of: entity.name, field)) ?? attribute.location
        }
        if attribute.type != .string {
            for (key, field, isSet) in [
                ("minLength", SourceMapKey.AttributeField.minLength, rules.minLength != nil),
                ("maxLength", .maxLength, rules.maxLength != nil), ("pattern", .pattern, rules.pattern != nil),
            ] where isSet {
                diagnostics.error(
                    "'\(key)' applies only to String attributes, and '\(qualified)' is \(attribute.type.name)",
                    at: location(field))
            }
            return
        }
        if let minLength = rules.minLength, let maxLength = rules.maxLength, minLength > maxLength {
            diagnostics.error(
                "minLength \(minLength) of '\(qualified)' is greater than its maxLength \(maxLength)",
                at: location(.minLength))
        }
        if let pattern = rules.pattern {
            do {
                _ = try Regex(pattern)
            } catch {
                diagnostics.error(
                    "pattern '\(pattern)' of '\(qualified)' is not a valid regular expression: \(reason(error))",
                    at: location(.pattern))
            }
        }
    }

    /// The first line of a regular expression error, without Swift's decoration.
    private static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        return String(text.split(separator: "\n").first ?? Substring(text))
    }

    // MARK: - Counts

    private static func checkCounts(
        _ relationship: Relationship, of entity: Entity, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag
    ) {
        let qualified = "\(entity.name).\(relationship.name)"
        func location(_ field: SourceMapKey.RelationshipField) -> SourceLocation {
            sourceMap.location(.relationship(relationship.name, of: entity.name, field)) ?? relationship.location
        }
        if !relationship.isToMany {
            for (key, field, isSet) in [
                ("minCount", SourceMapKey.RelationshipField.minCount, relationship.minCount != nil),
                ("maxCount", .maxCount, relationship.maxCount != nil),
            ] where isSet {
                diagnostics.error(
                    "'\(key)' applies only to to-many relationships, and '\(qualified)' is to-one; use 'required: true' for a to-one that must be set",
                    at: location(field))
            }
            return
        }
        if let maxCount = relationship.maxCount, maxCount == 0 {
            diagnostics.error("maxCount of '\(qualified)' must be at least 1", at: location(.maxCount))
        }
        if let minCount = relationship.minCount, let maxCount = relationship.maxCount, minCount > maxCount {
            diagnostics.error(
                "minCount \(minCount) of '\(qualified)' is greater than its maxCount \(maxCount)", at: location(.minCount))
        }
    }
}
