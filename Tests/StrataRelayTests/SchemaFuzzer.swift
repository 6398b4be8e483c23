import Foundation
import StrataTestSupport

/// Instances of a request body's schema, made from the OpenAPI document (seeded): valid ones,
/// and ones with one thing wrong.
///
/// It knows the keywords of the document's request schemas: `$ref`, `type` (one or a list),
/// `enum`, `const`, `properties`, `required`, `additionalProperties` (absent: any other member,
/// which the relay ignores; a schema: a map), `items`, `minItems`, `minLength`, `minimum`,
/// `maximum`, and `pattern` only as the UUID pattern (with `format: uuid`). Any other
/// `pattern` or `format`, or `allOf`/`oneOf`/`anyOf`, in a request schema is reported, so that
/// a change of the document that the fuzzer would not follow fails the tests.
struct SchemaFuzzer {
    let document: OpenAPIDocument

    /// Where a value sits in an instance: member names and array indices.
    enum Step: Hashable, CustomStringConvertible {
        case key(String), index(Int)
        var description: String {
            switch self {
            case .key(let key): "/\(key)"
            case .index(let index): "/\(index)"
            }
        }
    }

    /// A value of a generated instance, and the schema it was made for (nil: a member the
    /// schema does not declare, of any value).
    struct Node {
        var path: [Step]
        var schema: JSONValue?
        var where_: String { path.isEmpty ? "/" : path.map(\.description).joined() }
    }

    /// Keywords of request schemas the fuzzer does not follow, found while generating.
    private(set) var unknown: Set<String> = []

    static let annotations: Set<String> = ["description", "title", "format", "$ref"]
    static let known: Set<String> = annotations.union([
        "type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems", "minLength",
        "minimum", "maximum", "pattern",
    ])
    static let uuidPattern = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"

    init(document: OpenAPIDocument) { self.document = document }

    // MARK: - Valid instances

    /// A valid instance of `schema`, and its nodes in the order they were made.
    mutating func valid(_ schema: JSONValue, _ random: inout SeededGenerator) -> (JSONValue, [Node]) {
        var nodes: [Node] = []
        let value = make(schema, at: [], &nodes, &random)
        return (value, nodes)
    }

    private mutating func make(_ schema: JSONValue, at path: [Step], _ nodes: inout [Node], _ random: inout SeededGenerator) -> JSONValue {
        let schema = document.resolved(schema)
        nodes.append(Node(path: path, schema: schema))
        let keywords = schema.objectValue ?? [:]
        for keyword in keywords.keys where !Self.known.contains(keyword) { unknown.insert(keyword) }
        if let format = keywords["format"]?.stringValue, !["uuid", "int64"].contains(format) { unknown.insert("format: \(format)") }
        if let pattern = keywords["pattern"]?.stringValue, pattern != Self.uuidPattern { unknown.insert("pattern: \(pattern)") }
        if let values = keywords["enum"]?.arrayValue, !values.isEmpty { return random.pick(values) }
        if let value = keywords["const"] { return value }
        var types = Self.types(of: schema)
        if types.count > 1, types.contains("null") {
            // null now and then where it is allowed, the other types otherwise.
            if random.int(0...3) == 0 { return .null }
            types.removeAll { $0 == "null" }
        }
        switch types.isEmpty ? "object" : random.pick(types) {
        case "null": return .null
        case "boolean": return .bool(random.int(0...1) == 0)
        case "integer":
            let minimum = keywords["minimum"]?.int64Value ?? .min
            let maximum = keywords["maximum"]?.int64Value ?? .max
            return .integer(Self.integer(in: minimum...maximum, &random))
        case "number": return .number(Double(random.int(-1_000_000...1_000_000)) / 64)
        case "string":
            if keywords["pattern"]?.stringValue == Self.uuidPattern || keywords["format"]?.stringValue == "uuid" {
                return .string(Self.uuid(&random))
            }
            var text = Self.text(&random)
            let minimum = Int(keywords["minLength"]?.int64Value ?? 0)
            while text.count < minimum { text += "x" }
            return .string(text)
        case "array":
            let minimum = Int(keywords["minItems"]?.int64Value ?? 0)
            let count = random.int(minimum...(minimum + 3))
            let items = keywords["items"] ?? .bool(true)
            return .array((0..<count).map { make(items, at: path + [.index($0)], &nodes, &random) })
        default:
            var members: [String: JSONValue] = [:]
            let properties = keywords["properties"]?.objectValue ?? [:]
            let required = Set(keywords["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for (name, property) in properties.sorted(by: { $0.key < $1.key }) where required.contains(name) || random.int(0...1) == 0 {
                members[name] = make(property, at: path + [.key(name)], &nodes, &random)
            }
            switch keywords["additionalProperties"] {
            case .bool(false)?:
                break
            case let additional? where additional != .bool(true):
                // A map: a few entries.
                for _ in 0..<random.int(0...3) {
                    let name = Self.name(&random)
                    guard properties[name] == nil, members[name] == nil else { continue }
                    members[name] = make(additional, at: path + [.key(name)], &nodes, &random)
                }
            default:
                // Members the message does not declare, now and then: the relay ignores them.
                if random.int(0...3) == 0 {
                    for _ in 0..<random.int(1...2) {
                        let name = "x-" + Self.name(&random)
                        guard properties[name] == nil else { continue }
                        members[name] = Self.anyValue(depth: 3, &random)
                        nodes.append(Node(path: path + [.key(name)], schema: nil))
                    }
                }
            }
            return .object(members)
        }
    }

    /// The `type` of a schema, as a list.
    static func types(of schema: JSONValue) -> [String] {
        switch schema["type"] {
        case .string(let type)?: [type]
        case .array(let types)?: types.compactMap(\.stringValue)
        default: []
        }
    }

    /// An integer in `range`: one of its edges (or 0, ±1) a third of the time, a small one
    /// a third, any the rest.
    static func integer(in range: ClosedRange<Int64>, _ random: inout SeededGenerator) -> Int64 {
        switch random.int(0...2) {
        case 0:
            let edges = [range.lowerBound, range.upperBound, 0, 1, -1].filter(range.contains)
            return random.pick(edges)
        case 1:
            let low = max(range.lowerBound, -1000), high = min(range.upperBound, 1000)
            if low <= high { return low + Int64(random.int(0...Int(high - low))) }
            return range.lowerBound
        default:
            let span = UInt64(bitPattern: range.upperBound &- range.lowerBound)
            let offset = span == .max ? random.next() : random.next() % (span + 1)
            return range.lowerBound &+ Int64(bitPattern: offset)
        }
    }

    /// A UUID in upper, lower or mixed case.
    static func uuid(_ random: inout SeededGenerator) -> String {
        let bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        var text = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { text += "-" }
            text.append(character)
        }
        switch random.int(0...2) {
        case 0: return text.uppercased()
        case 1: return text
        default: return String(text.map { random.int(0...1) == 0 ? Character($0.uppercased()) : $0 })
        }
    }

    /// A string of any kind: empty, plain, with quotes, backslashes and controls, in other
    /// scripts, long.
    static func text(_ random: inout SeededGenerator) -> String {
        switch random.int(0...7) {
        case 0: return ""
        case 1: return "Board"
        case 2: return "quote \" backslash \\ slash / tab \t newline \n nul \u{0} bell \u{7}"
        case 3: return "é漢字🙂 \u{202E}mixed"
        case 4: return String(repeating: "long ", count: random.int(10...400))
        default:
            let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_- .")
            return String((0..<random.int(1...24)).map { _ in random.pick(letters) })
        }
    }

    /// A member name.
    static func name(_ random: inout SeededGenerator) -> String {
        random.pick(["", "a", "name", "title", "é", "with space", "quote\"d", "ownerID", "strata_id"]) + (random.int(0...1) == 0 ? "" : "\(random.int(0...99))")
    }

    /// Any JSON value, nested up to `depth`.
    static func anyValue(depth: Int, _ random: inout SeededGenerator) -> JSONValue {
        switch random.int(0...(depth > 0 ? 7 : 5)) {
        case 0: return .null
        case 1: return .bool(random.int(0...1) == 0)
        case 2: return .integer(Int64(random.int(-1000...1000)))
        case 3: return .number(Double(random.int(-1000...1000)) / 8)
        case 4, 5: return .string(text(&random))
        case 6: return .array((0..<random.int(0...3)).map { _ in anyValue(depth: depth - 1, &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<random.int(0...3) { members[name(&random)] = anyValue(depth: depth - 1, &random) }
            return .object(members)
        }
    }

    // MARK: - One thing wrong

    /// What a mutation did to a valid instance.
    enum Mutation: CustomStringConvertible {
        case removedRequired(String, at: String)
        case wrongType(String, at: String)
        case notAUUID(String, at: String)
        case notInEnum(String, at: String)
        case outOfRange(String, at: String)
        case nested(Int, at: String)

        var description: String {
            switch self {
            case .removedRequired(let name, let place): "required \(name) removed at \(place)"
            case .wrongType(let what, let place): "\(what) at \(place)"
            case .notAUUID(let text, let place): "not a UUID (\(text)) at \(place)"
            case .notInEnum(let text, let place): "\(text) (not in the enum) at \(place)"
            case .outOfRange(let text, let place): "\(text) (out of range) at \(place)"
            case .nested(let depth, let place): "nested \(depth) deeper at \(place)"
            }
        }
    }

    /// `instance` with one thing wrong at one of its nodes: a required member removed, a value
    /// of a type its schema does not allow, a string that is not a UUID where one is
    /// expected, a string out of an enum, an integer out of range, or a value wrapped in
    /// arrays or objects (sometimes deeper than JSON parsers go). Nil when no node takes the
    /// kind of mutation picked.
    static func mutate(
        _ instance: JSONValue, nodes: [Node], _ random: inout SeededGenerator, document: OpenAPIDocument
    ) -> (JSONValue, Mutation)? {
        let kind = random.int(0...5)
        let candidates: [Node] = nodes.filter { node in
            guard let schema = node.schema else { return kind == 5 }
            let keywords = schema.objectValue ?? [:]
            let value = instance.value(at: node.path)
            switch kind {
            case 0: return value?.objectValue != nil && !(keywords["required"]?.arrayValue ?? []).isEmpty
            case 1: return true
            case 2: return keywords["pattern"]?.stringValue == uuidPattern && value?.stringValue != nil
            case 3: return keywords["enum"] != nil
            case 4: return value?.int64Value != nil && (keywords["minimum"] != nil || keywords["maximum"] != nil)
            default: return true
            }
        }
        guard !candidates.isEmpty else { return nil }
        let node = random.pick(candidates)
        let place = node.where_
        let keywords = node.schema?.objectValue ?? [:]
        guard let value = instance.value(at: node.path) else { return nil }
        switch kind {
        case 0:
            let present = (keywords["required"]?.arrayValue ?? []).compactMap(\.stringValue).filter { value[$0] != nil }.sorted()
            guard !present.isEmpty else { return nil }
            let name = random.pick(present)
            var members = value.objectValue ?? [:]
            members[name] = nil
            return (instance.replacing(at: node.path, with: .object(members)), .removedRequired(name, at: place))
        case 1:
            let allowed = Set(types(of: node.schema ?? .bool(true)))
            var wrong: [(JSONValue, String)] = []
            if !allowed.contains("null") { wrong.append((.null, "null")) }
            if !allowed.contains("boolean") { wrong.append((.bool(true), "true")) }
            if !allowed.contains("string") { wrong.append((.string("7"), "the string \"7\"")) }
            if !allowed.contains("integer") && !allowed.contains("number") { wrong.append((.integer(7), "the integer 7")) }
            if !allowed.contains("number") { wrong.append((.number(1.5), "the number 1.5")) }
            if !allowed.contains("array") { wrong.append((.array([value]), "the value in an array")) }
            if !allowed.contains("object") { wrong.append((.object(["value": value]), "the value in an object")) }
            guard !wrong.isEmpty else { return nil }
            let (replacement, what) = random.pick(wrong)
            return (instance.replacing(at: node.path, with: replacement), .wrongType(what, at: place))
        case 2:
            let text = value.stringValue ?? ""
            let broken = random.pick([
                text.replacingOccurrences(of: "-", with: ""), "{\(text)}", String(text.dropLast()), text + "0", " " + text,
                "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "", "urn:uuid:\(text)",
            ])
            return (instance.replacing(at: node.path, with: .string(broken)), .notAUUID(broken, at: place))
        case 3:
            let allowed = (keywords["enum"]?.arrayValue ?? []).compactMap(\.stringValue)
            let other = random.pick(["upsert", "", "INSERT", "Insert", " insert", "link ", "delete\u{0}"])
            guard !allowed.contains(other) else { return nil }
            return (instance.replacing(at: node.path, with: .string(other)), .notInEnum(other, at: place))
        case 4:
            var outside: [(JSONValue, String)] = []
            if let minimum = keywords["minimum"]?.int64Value {
                outside.append(minimum == .min ? (.number(-1e19), "-1e19") : (.integer(minimum - 1), "\(minimum - 1)"))
            }
            if let maximum = keywords["maximum"]?.int64Value {
                outside.append(maximum == .max ? (.number(1e19), "1e19") : (.integer(maximum + 1), "\(maximum + 1)"))
            }
            guard !outside.isEmpty else { return nil }
            let (replacement, what) = random.pick(outside)
            return (instance.replacing(at: node.path, with: replacement), .outOfRange(what, at: place))
        default:
            // Mostly a level or a few; now and then past 512, where JSON parsers stop.
            let depth = random.int(0...3) == 0 ? random.int(500...700) : random.int(1...3)
            var wrapped = value
            for _ in 0..<depth { wrapped = random.int(0...1) == 0 ? .array([wrapped]) : .object(["value": wrapped]) }
            return (instance.replacing(at: node.path, with: wrapped), .nested(depth, at: place))
        }
    }
}

extension JSONValue {
    /// The value at `path`, nil when there is none.
    func value(at path: [SchemaFuzzer.Step]) -> JSONValue? {
        guard let first = path.first else { return self }
        switch (first, self) {
        case (.key(let key), .object(let members)): return members[key]?.value(at: Array(path.dropFirst()))
        case (.index(let index), .array(let items)) where items.indices.contains(index): return items[index].value(at: Array(path.dropFirst()))
        default: return nil
        }
    }

    /// The value with the one at `path` replaced.
    func replacing(at path: [SchemaFuzzer.Step], with replacement: JSONValue) -> JSONValue {
        guard let first = path.first else { return replacement }
        switch (first, self) {
        case (.key(let key), .object(var members)):
            members[key] = members[key]?.replacing(at: Array(path.dropFirst()), with: replacement)
            return .object(members)
        case (.index(let index), .array(var items)) where items.indices.contains(index):
            items[index] = items[index].replacing(at: Array(path.dropFirst()), with: replacement)
            return .array(items)
        default:
            return self
        }
    }
}
