import Foundation
import Hummingbird
import Logging
import StrataRelay
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// The relay against its OpenAPI document (Docs/relay-openapi.yaml): the routes it lists
    /// and no other, bodies made from its schemas (valid, and with one thing wrong) answered
    /// with the statuses it lists, every answer's body, media type and headers as it
    /// describes them.
    @Suite("The relay against its OpenAPI document", .serialized)
    struct RelayOpenAPITests {
        /// This suite's relay takes bodies of up to 64 KiB, and beats every 0.2 seconds.
        static let limit = 64 << 10
        /// The fuzzer's requests per operation with a body (900 in all over four operations,
        /// as over the three before the snapshot: the suite's time stays the same).
        static let casesPerOperation = 230

        /// The document, one relay in front of its own database (with a device's first sync
        /// done, so that the server's tables exist), and the bodies a real device sent it.
        final class Shared: SharedRelay, @unchecked Sendable {
            static let instance = Task { try await Shared() }
            let document: OpenAPIDocument
            private(set) var recorded: [RecordingServer.Message] = []

            init() async throws {
                document = try OpenAPIDocument.load()
                try await super.init(environment: [
                    "STRATA_RELAY_MAX_BODY_BYTES": "\(RelayOpenAPITests.limit)", "STRATA_RELAY_HEARTBEAT_SECONDS": "0.2",
                ])
                recorded = try await recordADevice(board: "Documented", cards: ["Few values"])
            }

            static func get() async throws -> Shared { try await instance.value }
        }

        /// How a request's body travels.
        enum Framing {
            /// With its `Content-Length`, all at once.
            case length
            /// With its `Content-Length`, the body only if the relay has not answered the head
            /// within a few seconds (a length over the limit is refused from the head alone).
            case headFirst
            /// In chunks of 4 KiB, without a length, until the relay answers.
            case chunked
        }

        /// A request, byte for byte, as `RawConnection` sends it.
        struct Request {
            var method: String
            var path: String
            var token: String?
            var contentType: String? = "application/json"
            var body: Data?
            var framing = Framing.length

            init(_ operation: OpenAPIDocument.Operation, token: String?, body: Data? = nil) {
                method = operation.method
                path = operation.path
                self.token = token
                self.body = body
            }

            init(_ method: String, _ path: String, token: String?, body: Data? = nil) {
                self.method = method
                self.path = path
                self.token = token
                self.body = body
            }
        }

        /// Sends `request` on a connection of its own and reads the answer; for a `GET` of the
        /// signals, the answer's head and its body until `enough` (the stream does not end).
        static func send(_ request: Request, to url: URL, enough: (@Sendable (Data) -> Bool)? = nil) async throws -> HTTPAnswer? {
            try await offThePool {
                let connection = try RawConnection(url)
                var headers: [String] = []
                if request.body != nil, let type = request.contentType { headers.append("Content-Type: \(type)") }
                if let body = request.body {
                    headers.append(request.framing == .chunked ? "Transfer-Encoding: chunked" : "Content-Length: \(body.count)")
                }
                connection.send(RawConnection.head(request.method, request.path, token: request.token, headers: headers))
                if let body = request.body {
                    switch request.framing {
                    case .length:
                        connection.send(body)
                    case .headFirst:
                        if !connection.isReadable(within: .seconds(5)) { connection.send(body) }
                    case .chunked:
                        var offset = 0
                        while offset < body.count, !connection.isReadable(within: .zero) {
                            let chunk = body[offset..<min(offset + 4096, body.count)]
                            guard connection.send(Data(String(chunk.count, radix: 16).utf8) + Data("\r\n".utf8) + chunk + Data("\r\n".utf8)) else { break }
                            offset += chunk.count
                        }
                        if offset == body.count { connection.send("0\r\n\r\n") }
                    }
                }
                if let enough { return connection.readStreamingAnswer(timeout: .seconds(20), until: enough) }
                if request.method == "HEAD" { return connection.readStreamingAnswer(timeout: .seconds(20)) { _ in true } }
                return connection.readAnswer(timeout: .seconds(30))
            }
        }

        /// Whether a signals stream's body so far holds its first event.
        @Sendable static func hasReady(_ body: Data) -> Bool { String(decoding: body, as: UTF8.self).contains("event: ready\ndata: ready\n\n") }

        /// A valid request of `operation`: a body made from its schema, the signals read to
        /// their first event.
        static func validAnswer(
            _ operation: OpenAPIDocument.Operation, _ shared: Shared, token: String, _ random: inout SeededGenerator
        ) async throws -> HTTPAnswer? {
            var body: Data?
            if let schema = operation.requestSchema {
                var fuzzer = SchemaFuzzer(document: shared.document)
                body = Data(fuzzer.valid(schema, &random).0.jsonText().utf8)
            }
            let request = Request(operation, token: operation.isSecured ? token : nil, body: body)
            var enough: (@Sendable (Data) -> Bool)?
            if operation.path.hasSuffix("/signals") { enough = { Self.hasReady($0) } }
            return try await send(request, to: shared.relay.url, enough: enough)
        }

        static func expectNoProblems(_ problems: [String], _ comment: String, sourceLocation: SourceLocation = #_sourceLocation) {
            for problem in problems { Issue.record("\(problem) (\(comment))", sourceLocation: sourceLocation) }
        }

        // MARK: - The document

        @Test("The document reads, its references resolve, its schemas use only what the tests check, and its operations list their refusals")
        func document() throws {
            let document = try OpenAPIDocument.load()
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1") == true)
            #expect(!document.operations.isEmpty)
            // Every $ref resolves, anywhere in the document.
            func visit(_ value: JSONValue, at path: String) {
                switch value {
                case .object(let members):
                    if case .string(let reference)? = members["$ref"], document.validator.resolve(reference) == nil {
                        Issue.record("\(path): \(reference) does not resolve")
                    }
                    for (key, member) in members { visit(member, at: "\(path)/\(key)") }
                case .array(let items):
                    for (index, item) in items.enumerated() { visit(item, at: "\(path)/\(index)") }
                default: break
                }
            }
            visit(document.root, at: "")
            // Every schema's keywords are the validator's.
            for (name, schema) in document.root["components"]?["schemas"]?.objectValue ?? [:] {
                let unsupported = JSONSchemaValidator(schema: schema).keywords().subtracting(JSONSchemaValidator.supported)
                #expect(unsupported.isEmpty, "the schema \(name) uses \(unsupported.sorted()), which the test validator does not check")
            }
            for operation in document.operations {
                #expect(operation.responses[200] != nil, "\(operation) has no 200")
                if operation.isSecured { #expect(operation.responses[401] != nil, "\(operation) asks for a token and lists no 401") }
                if operation.requestSchema != nil {
                    #expect(operation.requestMediaTypes == ["application/json"], "\(operation): \(operation.requestMediaTypes)")
                    for status in [400, 413, 415] {
                        #expect(operation.responses[status] != nil, "\(operation) takes a body and lists no \(status)")
                    }
                }
            }
        }

        // MARK: - Routes

        @Test("The relay's routes are the document's: the library mounts its sync operations, each documented operation answers, any other path or method gets 404")
        func routes() async throws {
            let shared = try await Shared.get()
            let document = shared.document
            let seed = SeededGenerator.fuzzSeed()
            var random = SeededGenerator(seed: seed)
            // What the library mounts, from its router: exactly the operations tagged "sync"
            // (the others, the metrics, are strata-relay's own).
            var logger = Logger(label: "strata.relay.tests")
            logger.logLevel = .error
            let library = try await SyncRelay(configuration: SyncRelayConfiguration(
                postgres: shared.test.configuration, schema: StrataModel.schema,
                tokens: RelayTokenRules(keys: [.hs256(secret: shared.keys.secret)]), logger: logger))
            let router = Router()
            library.addRoutes(to: router)
            await library.close()
            let mounted = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
            let synced = Set(document.operations.filter { $0.tags.contains("sync") }.map(\.description))
            #expect(mounted == synced, "mounted but not documented: \(mounted.subtracting(synced).sorted()); documented but not mounted: \(synced.subtracting(mounted).sorted())")
            #expect(document.operations.allSatisfy { $0.tags == ["sync"] || $0.tags == ["monitoring"] })

            // Each documented operation answers, as documented, a valid request.
            let token = try await shared.keys.token(user: "openapi-routes")
            for operation in document.operations {
                let answer = try #require(try await Self.validAnswer(operation, shared, token: token, &random), "\(operation): no answer (seed \(seed))")
                #expect(answer.status == 200, "\(operation): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self)) (seed \(seed))")
                Self.expectNoProblems(document.problems(with: answer, of: operation), "seed \(seed)")
            }

            // A documented path with empty segments more (as the document says) is the path:
            // without a token, a 401 (a whole answer, the signals' too), or the metrics.
            for operation in document.operations {
                let path = operation.path
                for variant in [path + "/", "/" + path, path.replacingOccurrences(of: "/", with: "//")] {
                    let request = Request(operation.method, variant, token: nil)
                    let answer = try #require(try await Self.send(request, to: shared.relay.url), "\(variant): no answer")
                    #expect(answer.status == (operation.isSecured ? 401 : 200), "\(operation.method) \(variant) without a token: \(answer.status)")
                    Self.expectNoProblems(document.problems(with: answer, of: operation), "\(variant)")
                }
            }

            // Any other method of a documented path, and any other path, gets 404 (with a token
            // and a JSON body or without), as the document's NoSuchRoute.
            let noSuchRoute = try document.noSuchRoute
            let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
            var probes: [(String, String)] = []
            for path in Set(document.operations.map(\.path)).sorted() {
                let documented = Set(document.operations.filter { $0.path == path }.map(\.method))
                probes += methods.filter { !documented.contains($0) }.map { ($0, path) }
            }
            let otherPaths = [
                "/", "/v1", "/v2/hello", "/hello", "/push", "/v1/hello/again", "/v1/HELLO", "/V1/pull", "/v1/metrics",
                "/v1/status", "/health", "/metrics/v1", "/v1/signals/events", "/v1/./push", "/v1/x/../push", "/openapi.yaml",
                "/v1/hello%20", "/v1/%70ush",
            ]
            #expect(Set(otherPaths).isDisjoint(with: document.operations.map(\.path)))
            probes += otherPaths.flatMap { path in ["GET", "POST"].map { ($0, path) } }
            for (method, path) in probes {
                for signedIn in [true, false] {
                    let request = Request(method, path, token: signedIn ? token : nil, body: method == "POST" ? Data("{}".utf8) : nil)
                    let answer = try #require(try await Self.send(request, to: shared.relay.url), "\(method) \(path): no answer")
                    #expect(answer.status == 404, "\(method) \(path)\(signedIn ? "" : " without a token"): \(answer.status), not 404")
                    if method != "HEAD" {
                        Self.expectNoProblems(document.problems(with: answer, as: noSuchRoute, what: "\(method) \(path) 404"), "")
                    }
                }
            }
        }

        // MARK: - Fuzzing

        /// What a request of the fuzzer must get.
        enum Expectation: String {
            /// A valid message: a success, or a documented refusal that is not the body's
            /// (403, 409), never 400, 413, 415 or 5xx.
            case accepted
            /// 400 `malformed_body`.
            case malformed
            /// 415.
            case unsupported
            /// 413.
            case tooLarge
        }

        @Test("Seeded fuzzing from the document: bodies made from each operation's schema, valid and with one thing wrong, get documented answers")
        func fuzz() async throws {
            let shared = try await Shared.get()
            let document = shared.document
            let validator = document.validator
            let seed = SeededGenerator.fuzzSeed()
            var random = SeededGenerator(seed: seed)
            let token = try await shared.keys.token(user: "openapi-fuzzer")
            var fuzzer = SchemaFuzzer(document: document)
            let operations = document.operations.filter { $0.requestSchema != nil }
            try #require(!operations.isEmpty)
            var statuses: [String: [Int: Int]] = [:]
            var kinds: [Expectation: Int] = [:]
            var failures = 0
            let start = ContinuousClock.now
            cases: for operation in operations {
                let schema = try #require(operation.requestSchema)
                // The kinds of requests, in a seeded order: valid messages, one thing wrong,
                // cut short, of another media type, over the limit.
                var schedule = Array(repeating: 0, count: Self.casesPerOperation * 3 / 10)
                schedule += Array(repeating: 1, count: Self.casesPerOperation * 4 / 10)
                schedule += Array(repeating: 2, count: Self.casesPerOperation / 10)
                schedule += Array(repeating: 3, count: Self.casesPerOperation / 10)
                schedule += Array(repeating: 4, count: Self.casesPerOperation / 10)
                schedule.shuffle(using: &random)
                for (index, kind) in schedule.enumerated() {
                    let (instance, nodes) = fuzzer.valid(schema, &random)
                    let generated = validator.validate(instance, against: schema)
                    if !generated.isEmpty {
                        Issue.record("seed \(seed): the fuzzer made an invalid \(operation) body: \(generated)")
                        continue
                    }
                    // Integers written as 1.0 in a fifth of the bodies (JSON's integers too).
                    let decimals = random.int(0...4) == 0
                    func text(_ value: JSONValue) -> Data {
                        Data(value.jsonText(integer: { decimals && $0.magnitude < 1 << 53 ? "\($0).0" : String($0) }).utf8)
                    }
                    var request = Request(operation, token: token, body: text(instance))
                    let expected: Expectation
                    var what: String
                    switch kind {
                    case 0:
                        request.contentType = random.pick([
                            "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.strata+json", nil,
                        ])
                        expected = .accepted
                        what = "valid, as \(request.contentType ?? "no Content-Type")"
                    case 1:
                        var mutated: (JSONValue, SchemaFuzzer.Mutation)?
                        for _ in 0..<20 where mutated == nil {
                            mutated = SchemaFuzzer.mutate(instance, nodes: nodes, &random, document: document)
                        }
                        guard case let (value, mutation)? = mutated else {
                            Issue.record("seed \(seed): no mutation of \(operation)'s body \(instance.jsonText())")
                            continue
                        }
                        request.body = text(value)
                        // What the document says of it: JSON that parses and fits the schema is
                        // a valid message (a mutation that kept it one: an undeclared member
                        // wrapped), anything else is not.
                        let parsed = try? JSONDecoder().decode(JSONValue.self, from: request.body ?? Data())
                        let fits = parsed.map { validator.validate($0, against: schema).isEmpty } ?? false
                        expected = fits ? .accepted : .malformed
                        what = "\(mutation)\(fits ? " (still valid)" : "")"
                    case 2:
                        let body = request.body ?? Data()
                        let cut = random.int(0...(body.count - 1))
                        request.body = body.prefix(cut)
                        expected = .malformed
                        what = "cut at \(cut) of \(body.count) bytes"
                    case 3:
                        request.contentType = random.pick([
                            "text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                            "application/jsonx", "text/json", "application/octet-stream", "json", "application/json+xml",
                        ])
                        expected = .unsupported
                        what = "as \(request.contentType ?? "")"
                    default:
                        let body = request.body ?? Data()
                        let size = Self.limit + random.int(1...Self.limit)
                        request.body = body + Data(repeating: UInt8(ascii: " "), count: max(0, size - body.count))
                        request.framing = random.int(0...1) == 0 ? .headFirst : .chunked
                        expected = .tooLarge
                        what = "\(size) bytes, \(request.framing == .chunked ? "chunked" : "its length announced")"
                    }
                    kinds[expected, default: 0] += 1
                    let comment = "seed \(seed), \(operation) request \(index): \(what): \(String(decoding: (request.body ?? Data()).prefix(300), as: UTF8.self))"
                    guard let answer = try await Self.send(request, to: shared.relay.url) else {
                        Issue.record("no answer: \(comment)")
                        failures += 1
                        if failures > 20 { break cases }
                        continue
                    }
                    statuses[operation.id, default: [:]][answer.status, default: 0] += 1
                    var problems = document.problems(with: answer, of: operation)
                    let error = (try? JSONDecoder().decode(JSONValue.self, from: answer.body))?["error"]?.stringValue
                    switch expected {
                    case .accepted:
                        if [400, 413, 415].contains(answer.status) || answer.status >= 500 {
                            problems.append("a valid message got \(answer.status) \(error ?? "")")
                        }
                    case .malformed:
                        if answer.status != 400 || error != "malformed_body" { problems.append("got \(answer.status) \(error ?? ""), not 400 malformed_body") }
                    case .unsupported:
                        if answer.status != 415 { problems.append("got \(answer.status), not 415") }
                    case .tooLarge:
                        if answer.status != 413 { problems.append("got \(answer.status), not 413") }
                    }
                    for problem in problems { Issue.record("\(problem): \(comment) → \(String(decoding: answer.body.prefix(300), as: UTF8.self))") }
                    failures += problems.isEmpty ? 0 : 1
                    if failures > 20 { break cases }
                }
            }
            #expect(fuzzer.unknown.isEmpty, "keywords of the request schemas the fuzzer does not follow: \(fuzzer.unknown.sorted())")
            #expect(shared.relay.process.isRunning)
            #expect(!shared.relay.log.contains("a request failed"), "the relay logged an internal error")
            let summary = statuses.sorted { $0.key < $1.key }.map { id, counts in
                "\(id): " + counts.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", ")
            }
            print("relay OpenAPI fuzz, seed \(seed): \(kinds.values.reduce(0, +)) requests in \(start.duration(to: .now)) (\(kinds.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))); \(summary.joined(separator: "; "))")
        }

        // MARK: - Answers

        @Test("A real device's hellos, pushes and pulls, pushes repeated and refused, a pull of everything, the signals and the metrics: each answer as documented")
        func successes() async throws {
            let shared = try await Shared.get()
            let document = shared.document
            let token = try await shared.keys.token()
            let url = shared.relay.url
            func exchange(_ operation: OpenAPIDocument.Operation, _ body: Data) async throws -> JSONValue? {
                let answer = try #require(try await Self.send(Request(operation, token: token, body: body), to: url), "\(operation): no answer")
                #expect(answer.status == 200, "\(operation): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
                Self.expectNoProblems(document.problems(with: answer, of: operation), String(decoding: body.prefix(300), as: UTF8.self))
                return try? JSONDecoder().decode(JSONValue.self, from: answer.body)
            }
            // What the device sent, again.
            for message in shared.recorded {
                _ = try await exchange(try document.operation("POST", "/" + message.route), message.body)
            }
            // A push of a new label, applied; the same push again, a repeat; a push of an
            // update of an object the server does not have, and of a table it does not sync,
            // both refused.
            let push = try document.operation("POST", "/v1/push")
            let device = UUID()
            let applied = try JSONEncoder().encode(SyncPush(
                id: UUID(), device: device, changes: [SyncChange(kind: .insert, table: "Label", id: UUID(), values: ["name": "answered"])]))
            #expect(try await exchange(push, applied)?["refused"] == .array([]))
            #expect(try await exchange(push, applied)?["isRepeat"] == .bool(true))
            let refused = try JSONEncoder().encode(SyncPush(id: UUID(), device: device, changes: [
                SyncChange(kind: .update, table: "Board", id: UUID(), values: ["name": "gone"]),
                SyncChange(kind: .insert, table: "NoSuchTable", id: UUID(), values: ["a": "b"]),
                SyncChange(kind: .link, table: "NoSuchJoin", link: ["a": UUID(), "b": UUID()]),
            ]))
            #expect(try await exchange(push, refused)?["refused"]?.arrayValue?.count == 3)
            // A delete that carries values (a device sends none; the document allows them): the
            // values are ignored (the fuzzer found it answered 500 once).
            let deleting = try JSONEncoder().encode(SyncPush(id: UUID(), device: device, changes: [
                SyncChange(kind: .delete, table: "Board", id: UUID(), values: ["name": "x", "position": nil]),
            ]))
            #expect(try await exchange(push, deleting)?["refused"] == .array([]))
            // Everything from the start, the device's own changes included; then one entry at a time.
            let pull = try document.operation("POST", "/v1/pull")
            let everything = try await exchange(pull, try JSONEncoder().encode(SyncPullRequest(
                device: device, cursor: 0, limit: 100_000, includingOwnChanges: true)))
            let changes = everything?["changes"]?.arrayValue ?? []
            #expect(changes.contains { $0["link"] != nil }, "no link in the pull")
            #expect(changes.contains { $0["values"]?.objectValue?.values.contains(.null) == true }, "no NULL in the pull")
            #expect(try await exchange(pull, try JSONEncoder().encode(SyncPullRequest(device: device, cursor: 0, limit: 1)))?["hasMore"] == .bool(true))

            // The signals: the first event and a heartbeat (every 0.2 seconds here).
            let signals = try document.operation("GET", "/v1/signals")
            let stream = try #require(try await Self.send(Request(signals, token: token), to: url) { body in
                let text = String(decoding: body, as: UTF8.self)
                return text.contains("event: ready") && text.contains(": heartbeat\n\n")
            }, "no signals")
            #expect(stream.status == 200)
            // The stream so far, up to its last whole event.
            var events = String(decoding: stream.body, as: UTF8.self)
            if let end = events.range(of: "\n\n", options: .backwards) { events = String(events[..<end.upperBound]) }
            Self.expectNoProblems(document.problems(with: HTTPAnswer(status: stream.status, headers: stream.headers, body: Data(events.utf8)), of: signals), events)
            #expect(events.contains(": heartbeat"), "\(events)")

            // The metrics, without a token.
            let metrics = try document.operation("GET", "/metrics")
            let answer = try #require(try await Self.send(Request(metrics, token: nil), to: url), "no metrics")
            #expect(answer.status == 200)
            Self.expectNoProblems(document.problems(with: answer, of: metrics), "")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("strata_relay_requests_total"))
        }

        @Test("Refusals the tests can bring about, on every operation that asks for a token: 401 with its header, 403 for another user's device; each as documented")
        func refusals() async throws {
            let shared = try await Shared.get()
            let document = shared.document
            let seed = SeededGenerator.fuzzSeed()
            var random = SeededGenerator(seed: seed)
            let url = shared.relay.url
            let keys = shared.keys
            let tokens: [(String?, String)] = [
                (nil, "missing_token"), ("not-a-jwt", "malformed_token"), (try await keys.token(signer: .forger), "invalid_signature"),
                (try await keys.token(expiresIn: -3600), "expired_token"), (try await keys.token(notBefore: 3600), "token_not_yet_valid"),
                (try await keys.token(audience: "another-service"), "wrong_audience"), (try await keys.token(issuer: "https://elsewhere"), "wrong_issuer"),
                (try await keys.token(expiresIn: nil), "invalid_token"),
            ]
            for operation in document.operations where operation.isSecured {
                var fuzzer = SchemaFuzzer(document: document)
                let body = operation.requestSchema.map { Data(fuzzer.valid($0, &random).0.jsonText().utf8) }
                for (token, code) in tokens {
                    let answer = try #require(try await Self.send(Request(operation, token: token, body: body), to: url), "\(operation): no answer")
                    #expect(answer.status == 401, "\(operation) with \(code): \(answer.status)")
                    #expect(answer.refusal?["error"] == code, "\(operation): \(answer.refusal ?? [:])")
                    Self.expectNoProblems(document.problems(with: answer, of: operation), "\(code), seed \(seed)")
                }
            }
            // A device of alice's, then the same device with bob's token: 403 on every route
            // that names a device.
            let alice = try await keys.token(user: "alice"), bob = try await keys.token(user: "bob")
            let device = UUID()
            let bodies: [String: Data] = [
                "/v1/hello": try JSONEncoder().encode(SyncHello(device: device, model: SyncModelVersion(name: "M", fingerprint: "f"), tables: [:])),
                "/v1/push": try JSONEncoder().encode(SyncPush(id: UUID(), device: device, changes: [])),
                "/v1/pull": try JSONEncoder().encode(SyncPullRequest(device: device, cursor: 0, limit: 10)),
            ]
            // (A snapshot names no device: what it reads is the token's user's data.)
            #expect(Set(bodies.keys) == Set(document.operations.filter { $0.requestSchema != nil }.map(\.path)).subtracting(["/v1/snapshot"]))
            for (path, body) in bodies.sorted(by: { $0.key < $1.key }) {
                let operation = try document.operation("POST", path)
                let mine = try #require(try await Self.send(Request(operation, token: alice, body: body), to: url))
                #expect(mine.status == 200, "\(operation) for alice: \(mine.status)")
                let answer = try #require(try await Self.send(Request(operation, token: bob, body: body), to: url))
                #expect(answer.status == 403, "\(operation) for bob: \(answer.status)")
                Self.expectNoProblems(document.problems(with: answer, of: operation), "bob's request")
            }
        }
    }
}
