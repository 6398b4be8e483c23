import Foundation
import StrataSchema

/// A JSON value: what a JSON Schema validates, parsed from JSON or converted from YAML.
public enum JSONValue: Hashable, Sendable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The JSON Schema type name (`integer` values are also `number`s).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The value of a number; nil for other values.
    public var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// JSON Schema equality: numbers compare by value (`1 == 1.0`), the rest structurally.
    public func isEqual(to other: JSONValue) -> Bool {
        switch (self, other) {
        case let (.integer(a), .number(b)), let (.number(b), .integer(a)): return Double(a) == b
        case let (.array(a), .array(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isEqual(to: $1) }
        case let (.object(a), .object(b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.isEqual(to: $0) } ?? false }
        default: return self == other
        }
    }

    /// A YAML node as the YAML 1.2 core schema reads it, as editors (yaml-language-server) do:
    /// plain `null`/`~`/empty → null, `true`/`false` (any of their three capitalisations) →
    /// booleans, plain decimal integers and floats → numbers; quoted, block or tagged scalars,
    /// and every other plain scalar, are strings. Duplicate keys keep the last value.
    public init(yaml node: YAMLNode) {
        switch node.content {
        case .scalar(let scalar):
            self = Self.resolve(scalar)
        case .sequence(let items):
            self = .array(items.map(JSONValue.init(yaml:)))
        case .mapping(let entries):
            var object: [String: JSONValue] = [:]
            for entry in entries {
                object[entry.key.scalar?.value ?? "\(entry.key.content)"] = JSONValue(yaml: entry.value)
            }
            self = .object(object)
        }
    }

    public static func resolve(_ scalar: YAMLScalar) -> JSONValue {
        guard scalar.style == .plain, scalar.tag == nil else { return .string(scalar.value) }
        let text = scalar.value
        if scalar.isNull { return .null }
        if ["true", "True", "TRUE"].contains(text) { return .bool(true) }
        if ["false", "False", "FALSE"].contains(text) { return .bool(false) }
        if text.wholeMatch(of: /[-+]?[0-9]+/) != nil, let value = Int64(text) { return .integer(value) }
        if text.wholeMatch(of: /[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?/) != nil,
            let value = Double(text)
        {
            return .number(value)
        }
        if text.wholeMatch(of: /[-+]?\.(inf|Inf|INF)/) != nil { return .number(text.hasPrefix("-") ? -.infinity : .infinity) }
        if text.wholeMatch(of: /\.(nan|NaN|NAN)/) != nil { return .number(.nan) }
        return .string(text)
    }
}

/// A JSON Schema (draft 2020-12) validator for exactly the keywords that `JSONSchemaRenderer`
/// emits and that the relay's OpenAPI document (Docs/relay-openapi.yaml) uses. Any other
/// keyword is reported as `.unsupportedKeyword`, so a new keyword in either fails the tests
/// until the validator learns it.
public struct JSONSchemaValidator: Sendable {
    /// Why an instance failed, by the keyword that failed.
    public enum Kind: String, Hashable, Sendable {
        case type, additionalProperties, propertyNames, required, `enum`, const, pattern, minLength, minItems, uniqueItems
        case minimum, maximum, oneOf, anyOf, unresolvedReference, unsupportedKeyword
    }

    public struct Failure: Hashable, Sendable, CustomStringConvertible {
        public var kind: Kind
        /// A JSON Pointer into the instance (`/entities/Note/attributes/title`).
        public var path: String
        public var message: String
        public var description: String { "\(path.isEmpty ? "/" : path): \(kind.rawValue): \(message)" }
    }

    /// Keywords with no effect on validation (`format` too, as draft 2020-12 has it by
    /// default: the OpenAPI document pairs `format: uuid` with its `pattern`).
    public static let annotations: Set<String> = ["$schema", "$id", "title", "description", "$defs", "format"]
    public static let supported: Set<String> = annotations.union([
        "type", "properties", "additionalProperties", "patternProperties", "propertyNames", "required", "enum",
        "const", "pattern", "minLength", "items", "minItems", "uniqueItems", "minimum", "maximum",
        "oneOf", "anyOf", "allOf", "if", "then", "else", "$ref",
    ])

    public let root: JSONValue

    public init(schema: JSONValue) {
        root = schema
    }

    /// Every failure of `instance`, outermost first; the failures of the alternatives of a
    /// failed `oneOf`/`anyOf` follow it. Empty when the instance is valid.
    public func validate(_ instance: JSONValue) -> [Failure] {
        validate(instance, against: root, at: "")
    }

    /// Every failure of `instance` against `schema`, a schema inside the root (whose `$ref`s
    /// are resolved in the root): an OpenAPI document's `#/components/schemas/...`.
    public func validate(_ instance: JSONValue, against schema: JSONValue) -> [Failure] {
        validate(instance, against: schema, at: "")
    }

    /// Every keyword used anywhere in the schema (for the "exactly what the renderer emits" check).
    public func keywords() -> Set<String> {
        var result: Set<String> = []
        func visit(_ schema: JSONValue) {
            guard case .object(let object) = schema else { return }
            for (key, value) in object {
                result.insert(key)
                switch key {
                case "properties", "patternProperties", "$defs":
                    if case .object(let children) = value { children.values.forEach(visit) }
                case "oneOf", "anyOf", "allOf":
                    if case .array(let children) = value { children.forEach(visit) }
                case "additionalProperties", "items", "propertyNames", "if", "then", "else":
                    visit(value)
                default:
                    break
                }
            }
        }
        visit(root)
        return result
    }

    private func validate(_ instance: JSONValue, against schema: JSONValue, at path: String) -> [Failure] {
        if case .bool(let allowed) = schema {
            return allowed ? [] : [Failure(kind: .additionalProperties, path: path, message: "not allowed here")]
        }
        guard case .object(let keywords) = schema else {
            return [Failure(kind: .unsupportedKeyword, path: path, message: "a schema must be an object or a boolean")]
        }
        var failures: [Failure] = []
        func fail(_ kind: Kind, _ message: String, at failurePath: String = path) {
            failures.append(Failure(kind: kind, path: failurePath, message: message))
        }
        for keyword in keywords.keys.sorted() where !Self.supported.contains(keyword) {
            fail(.unsupportedKeyword, "the test validator does not support '\(keyword)'")
        }
        if case .string(let reference)? = keywords["$ref"] {
            if let target = resolve(reference) {
                failures += validate(instance, against: target, at: path)
            } else {
                fail(.unresolvedReference, "cannot resolve \(reference)")
            }
        }
        if let type = keywords["type"] {
            let names: [String]
            switch type {
            case .string(let name): names = [name]
            case .array(let items): names = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: names = []
            }
            let actual = instance.typeName
            if !(names.contains(actual) || (actual == "integer" && names.contains("number"))) {
                fail(.type, "expected \(names.joined(separator: " or ")), found \(actual)")
                return failures  // the other keywords would only repeat the mismatch
            }
        }
        if let values = keywords["enum"], case .array(let allowed) = values,
            !allowed.contains(where: { $0.isEqual(to: instance) })
        {
            fail(.enum, "\(instance) is not one of \(allowed)")
        }
        if let value = keywords["const"], !value.isEqual(to: instance) {
            fail(.const, "\(instance) is not \(value)")
        }
        if case .string(let text) = instance {
            if case .string(let pattern)? = keywords["pattern"], !matches(text, pattern) {
                fail(.pattern, "'\(text)' does not match \(pattern)")
            }
            if case .integer(let minimum)? = keywords["minLength"], text.count < minimum {
                fail(.minLength, "'\(text)' is shorter than \(minimum) characters")
            }
        }
        if let number = instance.numberValue {
            if let minimum = keywords["minimum"]?.numberValue, number < minimum {
                fail(.minimum, "\(instance) is less than \(minimum)")
            }
            if let maximum = keywords["maximum"]?.numberValue, number > maximum {
                fail(.maximum, "\(instance) is greater than \(maximum)")
            }
        }
        if case .array(let items) = instance {
            if let itemSchema = keywords["items"] {
                for (index, item) in items.enumerated() {
                    failures += validate(item, against: itemSchema, at: "\(path)/\(index)")
                }
            }
            if case .integer(let minimum)? = keywords["minItems"], items.count < minimum {
                fail(.minItems, "\(items.count) items, at least \(minimum) expected")
            }
            if case .bool(true)? = keywords["uniqueItems"] {
                for (index, item) in items.enumerated()
                where items[..<index].contains(where: { $0.isEqual(to: item) }) {
                    fail(.uniqueItems, "\(item) is listed twice", at: "\(path)/\(index)")
                }
            }
        }
        if case .object(let members) = instance {
            var properties: [String: JSONValue] = [:]
            if case .object(let declared)? = keywords["properties"] { properties = declared }
            var patterns: [String: JSONValue] = [:]
            if case .object(let declared)? = keywords["patternProperties"] { patterns = declared }
            if case .array(let required)? = keywords["required"] {
                for case .string(let name) in required where members[name] == nil {
                    fail(.required, "missing '\(name)'")
                }
            }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
                let memberPath = "\(path)/\(escape(name))"
                if let nameSchema = keywords["propertyNames"] {
                    for failure in validate(.string(name), against: nameSchema, at: memberPath) {
                        fail(.propertyNames, "name '\(name)': \(failure.message)", at: memberPath)
                    }
                }
                var evaluated = false
                if let propertySchema = properties[name] {
                    evaluated = true
                    failures += validate(value, against: propertySchema, at: memberPath)
                }
                for (pattern, patternSchema) in patterns.sorted(by: { $0.key < $1.key }) where matches(name, pattern) {
                    evaluated = true
                    failures += validate(value, against: patternSchema, at: memberPath)
                }
                if !evaluated, let additional = keywords["additionalProperties"] {
                    if case .bool(false) = additional {
                        fail(.additionalProperties, "unknown key '\(name)'", at: memberPath)
                    } else {
                        failures += validate(value, against: additional, at: memberPath)
                    }
                }
            }
        }
        if case .array(let all)? = keywords["allOf"] {
            for subschema in all { failures += validate(instance, against: subschema, at: path) }
        }
        if let condition = keywords["if"] {
            let branch = validate(instance, against: condition, at: path).isEmpty ? keywords["then"] : keywords["else"]
            if let branch { failures += validate(instance, against: branch, at: path) }
        }
        for (keyword, kind) in [("oneOf", Kind.oneOf), ("anyOf", Kind.anyOf)] {
            guard case .array(let alternatives)? = keywords[keyword] else { continue }
            let results = alternatives.map { validate(instance, against: $0, at: path) }
            let passing = results.filter(\.isEmpty).count
            if kind == .oneOf ? passing != 1 : passing == 0 {
                fail(kind, passing == 0 ? "no alternative matches" : "\(passing) alternatives match, exactly one must")
                failures += results.flatMap { $0 }
            }
        }
        return failures
    }

    /// `#/$defs/name`-style local references (JSON Pointers into the root).
    public func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#") else { return nil }
        var node = root
        for segment in reference.dropFirst().split(separator: "/") {
            let key = segment.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            guard case .object(let object) = node, let next = object[key] else { return nil }
            node = next
        }
        return node
    }

    private func matches(_ text: String, _ pattern: String) -> Bool {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
        let range = NSRange(text.startIndex..., in: text)
        return regex.firstMatch(in: text, range: range) != nil
    }

    private func escape(_ name: String) -> String {
        name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
