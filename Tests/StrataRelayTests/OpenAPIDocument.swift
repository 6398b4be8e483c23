import Foundation
import StrataSchema
import StrataTestSupport
import Testing

/// The relay's OpenAPI document (Docs/relay-openapi.yaml), read through StrataSchema's YAML
/// loader: its operations, what each takes and answers, and the checks of an answer against
/// it.
struct OpenAPIDocument: Sendable {
    static let path = "Docs/relay-openapi.yaml"

    /// The whole document, as JSON.
    let root: JSONValue
    let operations: [Operation]

    /// One method of one path.
    struct Operation: Sendable, CustomStringConvertible {
        var path: String
        /// In upper case: `POST`.
        var method: String
        var id: String
        var tags: [String]
        /// Whether it asks for the bearer token (the document's `security`, or its own).
        var isSecured: Bool
        /// The request body's schema, and the media types it is documented for.
        var requestSchema: JSONValue?
        var requestMediaTypes: [String]
        /// By status (`200`).
        var responses: [Int: Response]

        var description: String { "\(method) \(path)" }
    }

    /// One documented answer: its media types (each with its schema) and its headers.
    struct Response: Sendable {
        var content: [String: JSONValue]
        var headers: [String: Header]
    }

    struct Header: Sendable {
        var isRequired: Bool
        var schema: JSONValue
    }

    /// The document at the package's root.
    static func load() throws -> OpenAPIDocument {
        let url = packageRoot.appendingPathComponent(path)
        let bytes = try #require(FileManager.default.contents(atPath: url.path), "missing \(path)")
        let (node, diagnostics) = YAMLLoader.load(ModelFile(path: path, contents: [UInt8](bytes)))
        let yaml = try #require(node, "\(path) does not read: \(diagnostics)")
        return try OpenAPIDocument(root: JSONValue(yaml: yaml))
    }

    init(root: JSONValue) throws {
        self.root = root
        let validator = JSONSchemaValidator(schema: root)
        func follow(_ value: JSONValue) throws -> JSONValue {
            var value = value
            var seen: Set<String> = []
            while case .object(let object) = value, case .string(let reference)? = object["$ref"] {
                guard seen.insert(reference).inserted, let target = validator.resolve(reference) else {
                    throw DocumentError("\(reference) does not resolve")
                }
                value = target
            }
            return value
        }
        let securedByDefault = root["security"]?.arrayValue.map { !$0.isEmpty } ?? false
        var operations: [Operation] = []
        for (path, item) in (root["paths"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            for (method, operation) in (item.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard ["get", "put", "post", "delete", "options", "head", "patch", "trace"].contains(method) else { continue }
                var requestSchema: JSONValue?
                var requestMediaTypes: [String] = []
                if let body = operation["requestBody"] {
                    let content = try follow(body)["content"]?.objectValue ?? [:]
                    requestMediaTypes = content.keys.sorted()
                    requestSchema = content["application/json"]?["schema"]
                }
                var responses: [Int: Response] = [:]
                for (status, response) in operation["responses"]?.objectValue ?? [:] {
                    guard let code = Int(status) else { throw DocumentError("\(method) \(path): the response \(status) is not a status") }
                    let response = try follow(response)
                    var content: [String: JSONValue] = [:]
                    for (type, media) in response["content"]?.objectValue ?? [:] { content[type] = media["schema"] ?? .bool(true) }
                    var headers: [String: Header] = [:]
                    for (name, header) in response["headers"]?.objectValue ?? [:] {
                        let header = try follow(header)
                        headers[name.lowercased()] = Header(
                            isRequired: header["required"] == .bool(true), schema: header["schema"] ?? .bool(true))
                    }
                    responses[code] = Response(content: content, headers: headers)
                }
                let security = operation["security"]?.arrayValue.map { !$0.isEmpty }
                operations.append(Operation(
                    path: path, method: method.uppercased(), id: operation["operationId"]?.stringValue ?? "\(method) \(path)",
                    tags: operation["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [], isSecured: security ?? securedByDefault,
                    requestSchema: requestSchema, requestMediaTypes: requestMediaTypes, responses: responses))
            }
        }
        self.operations = operations
    }

    struct DocumentError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    var validator: JSONSchemaValidator { JSONSchemaValidator(schema: root) }

    /// `schema` with its `$ref`s followed, until one that is not a reference.
    func resolved(_ schema: JSONValue) -> JSONValue {
        var schema = schema
        for _ in 0..<32 {
            guard case .string(let reference)? = schema["$ref"], let target = validator.resolve(reference) else { return schema }
            schema = target
        }
        return schema
    }

    /// The operation at `path` and `method`.
    func operation(_ method: String, _ path: String) throws -> Operation {
        try #require(operations.first { $0.method == method && $0.path == path }, "\(method) \(path) is not in the document")
    }

    /// The document's answer to any path or method it does not list.
    var noSuchRoute: Response {
        get throws {
            let response = try #require(root["components"]?["responses"]?["NoSuchRoute"], "no NoSuchRoute response")
            var content: [String: JSONValue] = [:]
            for (type, media) in response["content"]?.objectValue ?? [:] { content[type] = media["schema"] ?? .bool(true) }
            return Response(content: content, headers: [:])
        }
    }

    /// What is wrong with `answer` as an answer of `operation`: a status it does not list, or
    /// a media type, a header or a body that its response for that status does not describe.
    func problems(with answer: HTTPAnswer, of operation: Operation) -> [String] {
        guard let response = operation.responses[answer.status] else {
            return ["\(operation): the status \(answer.status) is not documented (documented: \(operation.responses.keys.sorted()))"]
        }
        return problems(with: answer, as: response, what: "\(operation) \(answer.status)")
    }

    /// What is wrong with `answer` as `response`.
    func problems(with answer: HTTPAnswer, as response: Response, what: String) -> [String] {
        var problems: [String] = []
        let validator = validator
        for (name, header) in response.headers.sorted(by: { $0.key < $1.key }) {
            guard let value = answer.headers[name] else {
                if header.isRequired { problems.append("\(what): no \(name) header") }
                continue
            }
            for failure in validator.validate(.string(value), against: header.schema) {
                problems.append("\(what): the header \(name): \(value): \(failure)")
            }
        }
        guard !response.content.isEmpty else { return problems }
        let contentType = answer.headers["content-type"] ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let schema = response.content[mediaType] else {
            return problems + ["\(what): the content type \(contentType) is not documented (documented: \(response.content.keys.sorted()))"]
        }
        let body: JSONValue
        if mediaType == "application/json" || mediaType.hasSuffix("+json") {
            guard let json = try? JSONDecoder().decode(JSONValue.self, from: answer.body) else {
                return problems + ["\(what): the body is not JSON: \(String(decoding: answer.body.prefix(300), as: UTF8.self))"]
            }
            body = json
        } else {
            body = .string(String(decoding: answer.body, as: UTF8.self))
        }
        for failure in validator.validate(body, against: schema) {
            problems.append("\(what): \(failure): \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return problems
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for other values.
    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    var int64Value: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded() == value && abs(value) < 9e18: Int64(value)
        default: nil
        }
    }

    /// The JSON text of the value: object members in the order of their names, strings
    /// escaped as JSON requires (and nothing more), `integer` writing each integer.
    func jsonText(integer: (Int64) -> String = { String($0) }) -> String {
        var text = ""
        write(to: &text, integer: integer)
        return text
    }

    private func write(to text: inout String, integer: (Int64) -> String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += integer(value)
        case .number(let value): text += value.isFinite ? "\(value)" : "null"
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                item.write(to: &text, integer: integer)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, to: &text)
                text += ":"
                value.write(to: &text, integer: integer)
            }
            text += "}"
        }
    }

    private static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
