import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RelayTests {
    /// Bodies a device never sends, from clients that are not devices: truncated, oversized,
    /// of another type or shape, or mangled at random. Every one gets a 4xx with the relay's
    /// body (never a 5xx, never a dropped connection to the others), nothing of a refused one
    /// reaches the server's tables, and the relay syncs devices as before afterwards.
    @Suite("Bodies the relay refuses", .serialized)
    struct RelayBodyTests {
        /// This suite's relay takes bodies of up to 64 KiB.
        static let limit = 64 << 10

        /// One relay and one database for the suite, and the bodies a real device sent it
        /// (its hello, pushes and pulls), to mangle.
        final class Shared: SharedRelay, @unchecked Sendable {
            static let instance = Task { try await Shared() }
            private(set) var recorded: [RecordingServer.Message] = []

            init() async throws {
                try await super.init(environment: ["STRATA_RELAY_MAX_BODY_BYTES": "\(RelayBodyTests.limit)"])
                recorded = try await recordADevice(board: "Recorded")
            }

            static func get() async throws -> Shared { try await instance.value }

            /// The first recorded body sent to `route`.
            func body(_ route: String) throws -> Data { try #require(recorded.first { $0.route == route }?.body, "no \(route) recorded") }

            /// The relay still syncs a device, and has logged no failure of its own.
            func expectServing(sourceLocation: SourceLocation = #_sourceLocation) async throws {
                let folder = try TemporaryDirectory()
                let keys = keys
                let device = try RelayDevice(folder.path("after.sqlite"), relay: relay) { try await keys.token() }
                try await device.store.write { db in _ = try db.insert(Label(name: "after \(UUID())")) }
                let report = try await device.sync.sync()
                #expect(report.pushedChanges == 1, sourceLocation: sourceLocation)
                await device.close()
                #expect(relay.process.isRunning, sourceLocation: sourceLocation)
                #expect(!relay.log.contains("a request failed"), "the relay logged an internal error", sourceLocation: sourceLocation)
            }
        }

        /// A refusal: the status in 400..<500, and the relay's body with both fields.
        static func expectRefusal(
            _ answer: HTTPAnswer?, _ statuses: Set<Int>? = nil, error: String? = nil, _ comment: @autoclosure () -> String = "",
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            guard let answer else {
                Issue.record("no answer: \(comment())", sourceLocation: sourceLocation)
                return
            }
            #expect((400..<500).contains(answer.status), "\(answer.status): \(comment())", sourceLocation: sourceLocation)
            if let statuses { #expect(statuses.contains(answer.status), "\(answer.status): \(comment())", sourceLocation: sourceLocation) }
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(comment())", sourceLocation: sourceLocation)
            let refusal = answer.refusal
            #expect(refusal?["error"]?.isEmpty == false && refusal?["reason"]?.isEmpty == false,
                    "\(String(decoding: answer.body, as: UTF8.self)): \(comment())", sourceLocation: sourceLocation)
            if let error { #expect(refusal?["error"] == error, "\(refusal ?? [:]): \(comment())", sourceLocation: sourceLocation) }
        }

        @Test("A body shorter than its Content-Length, the client then closing: 400 or a closed connection, nothing stored")
        func truncatedBodies() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let before = try await shared.test.contents()
            // A push of a new label, whose head promises all of it and whose connection sends half.
            let label = UUID()
            let push = try JSONEncoder().encode(SyncPush(
                id: UUID(), device: UUID(), changes: [SyncChange(kind: .insert, table: "Label", id: label, values: ["name": "truncated"])]))
            let head = RawConnection.head(
                "POST", "/v1/push", token: token, headers: ["Content-Type: application/json", "Content-Length: \(push.count)"])
            for cut in [0, 1, push.count / 2, push.count - 1] {
                // The client ends its side and reads: an answer, if any, is a 400.
                let answer = try await offThePool { () -> HTTPAnswer? in
                    let connection = try RawConnection(shared.relay.url)
                    connection.send(Data(head.utf8) + push.prefix(cut))
                    connection.shutdownWrite()
                    return connection.readAnswer(timeout: .seconds(20))
                }
                if let answer { Self.expectRefusal(answer, [400], error: "incomplete_body", "cut at \(cut)") }
                // The client closes outright.
                try await offThePool {
                    let connection = try RawConnection(shared.relay.url)
                    connection.send(Data(head.utf8) + push.prefix(cut))
                    connection.close()
                }
            }
            try await shared.expectServing()
            let after = try await shared.test.contents()
            #expect(after.objects["Label"]?[label] == nil, "a truncated push reached the server")
            #expect(before.objects["Board"] == after.objects["Board"] && before.objects["Card"] == after.objects["Card"])
        }

        @Test("Bodies over the limit get 413: announced by Content-Length (before it is sent), and chunked, growing past it")
        func oversizedBodies() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            // The length alone is refused: the relay answers before a byte of the body arrives.
            let announced = try await offThePool { () -> HTTPAnswer? in
                let connection = try RawConnection(shared.relay.url)
                connection.send(RawConnection.head(
                    "POST", "/v1/push", token: token,
                    headers: ["Content-Type: application/json", "Content-Length: \(RelayBodyTests.limit + 1)"]))
                return connection.readAnswer(timeout: .seconds(20))
            }
            Self.expectRefusal(announced, [413], error: "body_too_large", "announced")
            // Chunks of 4 KiB, without a length, until the relay answers (at most 4 times the limit).
            let (chunked, sent) = try await offThePool { () -> (HTTPAnswer?, Int) in
                let connection = try RawConnection(shared.relay.url)
                connection.send(RawConnection.head(
                    "POST", "/v1/push", token: token, headers: ["Content-Type: application/json", "Transfer-Encoding: chunked"]))
                let chunk = Data("1000\r\n".utf8) + Data(repeating: UInt8(ascii: " "), count: 4096) + Data("\r\n".utf8)
                var sent = 0
                while sent <= 4 * RelayBodyTests.limit, !connection.isReadable(within: .zero) {
                    guard connection.send(chunk) else { break }
                    sent += 4096
                }
                return (connection.readAnswer(timeout: .seconds(20)), sent)
            }
            Self.expectRefusal(chunked, [413], error: "body_too_large", "chunked, \(sent) bytes sent")
            #expect(sent > RelayBodyTests.limit, "refused before the limit was passed")
            try await shared.expectServing()
        }

        @Test("A body whose Content-Type is not JSON gets 415, on every route; JSON types and none go through")
        func contentTypes() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            for route in ["v1/hello", "v1/push", "v1/pull"] {
                let body = try shared.body(route)
                let url = shared.relay.url.appendingPathComponent(route)
                for type in [
                    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml",
                    "application/jsonx", "text/json", "application/octet-stream",
                ] {
                    let answer = try await http("POST", url, token: token, body: body, contentType: type)
                    Self.expectRefusal(answer, [415], error: "unsupported_media_type", "\(route) as \(type)")
                }
                for type in ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.strata+json"] {
                    let answer = try await http("POST", url, token: token, body: body, contentType: type)
                    #expect(answer.status == 200, "\(route) as \(type): \(String(decoding: answer.body, as: UTF8.self))")
                }
                // Without a Content-Type (which URLSession would add): read as JSON.
                let untyped = try await offThePool { () -> HTTPAnswer? in
                    let connection = try RawConnection(shared.relay.url)
                    connection.send(Data(RawConnection.head("POST", "/" + route, token: token, headers: ["Content-Length: \(body.count)"]).utf8) + body)
                    return connection.readAnswer(timeout: .seconds(20))
                }
                #expect(untyped?.status == 200, "\(route) without a type: \(untyped.map { String(decoding: $0.body, as: UTF8.self) } ?? "no answer")")
            }
        }

        @Test("Each route refuses every other route's message, and JSON of any other shape, with 400 malformed_body")
        func wrongShapes() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let routes = ["v1/hello", "v1/push", "v1/pull"]
            let others = ["", "[]", "null", "42", "\"text\"", "{}", "true", #"{"device": 1}"#, #"{"device": null}"#, #"[{"device": "x"}]"#]
            for route in routes {
                var bodies = try routes.filter { $0 != route }.map { try shared.body($0) }
                bodies += others.map { Data($0.utf8) }
                for body in bodies {
                    let answer = try await http("POST", shared.relay.url.appendingPathComponent(route), token: token, body: body)
                    Self.expectRefusal(answer, [400], error: "malformed_body", "\(route) ← \(String(decoding: body.prefix(80), as: UTF8.self))")
                }
            }
        }

        @Test("300 mutations of real hellos, pushes and pulls (seeded): each a 200 or a 4xx with the relay's body; only accepted pushes change the tables")
        func fuzz() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let seed = SeededGenerator.fuzzSeed()
            var generator = SeededGenerator(seed: seed)
            let bases = shared.recorded
            try #require(Set(bases.map(\.route)) == ["v1/hello", "v1/push", "v1/pull"], "seed \(seed)")
            let before = try await shared.test.contents()
            var accepted = Set<UUID>()
            var acceptedLinks = Set<String>()
            var statuses: [Int: Int] = [:]
            for index in 0..<300 {
                let base = generator.pick(bases)
                let (body, mutation) = BodyMutator.mutate(base.body, &generator)
                let comment = "seed \(seed), request \(index): \(mutation) of \(base.route): \(String(decoding: body.prefix(300), as: UTF8.self))"
                let answer: HTTPAnswer
                do {
                    answer = try await http("POST", shared.relay.url.appendingPathComponent(base.route), token: token, body: body)
                } catch {
                    Issue.record("no answer (\(error)): \(comment)")
                    break
                }
                statuses[answer.status, default: 0] += 1
                if answer.status == 200 {
                    // What a push the relay took may change: the objects and links it names.
                    if base.route == "v1/push", let push = try? JSONDecoder().decode(SyncPush.self, from: body) {
                        for change in push.changes {
                            if let id = change.id { accepted.insert(id) }
                            if change.link != nil { acceptedLinks.insert(change.table) }
                        }
                    }
                } else {
                    Self.expectRefusal(answer, nil, error: nil, comment)
                }
                if answer.status >= 500 { break }
            }
            let after = try await shared.test.contents()
            let changed = after.differingIDs(from: before).subtracting(accepted)
            #expect(changed.isEmpty, "seed \(seed): objects changed by refused requests: \(changed)")
            for table in Set(after.links.keys).union(before.links.keys) where after.links[table] != before.links[table] {
                #expect(acceptedLinks.contains(table), "seed \(seed): the links of \(table) changed by refused requests")
            }
            print("relay fuzz, seed \(seed): answers \(statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))")
            try await shared.expectServing()
        }
    }
}

/// A `SyncServer` that records the JSON of every message it forwards to the relay.
final class RecordingServer: SyncServer, @unchecked Sendable {
    struct Message: Sendable {
        var route: String
        var body: Data
    }

    let inner: RelaySyncServer
    private let lock = NSLock()
    private var recorded: [Message] = []
    var messages: [Message] { lock.withLock { recorded } }

    init(_ inner: RelaySyncServer) { self.inner = inner }

    private func record(_ route: String, _ message: some Encodable) throws {
        let body = try JSONEncoder().encode(message)
        lock.withLock { recorded.append(Message(route: route, body: body)) }
    }

    func hello(_ hello: SyncHello) async throws -> SyncWelcome {
        try record("v1/hello", hello)
        return try await inner.hello(hello)
    }

    func push(_ push: SyncPush) async throws -> SyncPushResult {
        try record("v1/push", push)
        return try await inner.push(push)
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullResult {
        try record("v1/pull", request)
        return try await inner.pull(request)
    }

    func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await inner.changeSignals() }
}

/// Mutations of a JSON body: of its bytes (a flipped bit, a cut, a byte repeated), of its
/// structure (a member removed, duplicated, or its value replaced by a huge number, a deep
/// nesting, another type), and of its whole (nested deep, wrapped in an array).
enum BodyMutator {
    static func mutate(_ body: Data, _ generator: inout SeededGenerator) -> (Data, String) {
        var bytes = [UInt8](body)
        switch generator.int(0...9) {
        case 0:
            let count = generator.int(1...4)
            for _ in 0..<count {
                let index = generator.int(0...(bytes.count - 1))
                bytes[index] ^= UInt8(1) << UInt8(generator.int(0...7))
            }
            return (Data(bytes), "\(count) flipped bits")
        case 1:
            let cut = generator.int(0...(bytes.count - 1))
            return (Data(bytes.prefix(cut)), "cut at \(cut)")
        case 2:
            let index = generator.int(0...(bytes.count - 1))
            let count = generator.int(1...64)
            bytes.insert(contentsOf: Array(repeating: bytes[index], count: count), at: index)
            return (Data(bytes), "byte \(index) repeated \(count) times")
        case 3:
            let depth = generator.int(1...20_000)
            let nested = String(repeating: "[", count: depth) + String(decoding: body, as: UTF8.self) + String(repeating: "]", count: depth)
            return (Data(nested.utf8), "nested in \(depth) arrays")
        default:
            guard var object = (try? JSONSerialization.jsonObject(with: body)) else { return (body, "unchanged") }
            let description = mutateTree(&object, &generator)
            if description.contains("duplicated") {
                return (duplicateMember(body, &generator), description)
            }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])) ?? body
            return (hugeNumbers(in: data, &generator), description)
        }
    }

    /// A stand-in for a number too large for any type, written in by `hugeNumbers(in:_:)`.
    static let hugeNumber = "<huge number>"

    /// `data` with each stand-in of `hugeNumber` replaced by a number of 19 to 400 digits.
    static func hugeNumbers(in data: Data, _ generator: inout SeededGenerator) -> Data {
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains(hugeNumber) else { return data }
        let digits = "9" + String(repeating: "7", count: generator.int(18...399))
        return Data(text.replacingOccurrences(of: "\"\(hugeNumber)\"", with: digits).utf8)
    }

    /// A value to put in place of another.
    static func strangeValue(_ generator: inout SeededGenerator) -> (Any, String) {
        switch generator.int(0...9) {
        case 0: return (hugeNumber, "a huge number")
        case 1: return (-Double.greatestFiniteMagnitude, "the most negative double")
        case 2: return (Int64.min, "Int64.min")
        case 3: return (NSNull(), "null")
        case 4: return (true, "true")
        case 5: return ("", "an empty string")
        case 6: return (String(repeating: "é", count: generator.int(1...2000)), "a long string")
        case 7: return ([Any](), "an empty array")
        case 8: return ([String: Any](), "an empty object")
        default:
            var value: Any = 1
            let depth = generator.int(10...3000)
            for _ in 0..<depth { value = ["a": value] }
            return (value, "objects nested \(depth) deep")
        }
    }

    /// Mutates one member somewhere in `tree`; says what it did.
    static func mutateTree(_ tree: inout Any, _ generator: inout SeededGenerator) -> String {
        if var object = tree as? [String: Any], !object.isEmpty {
            let key = generator.pick(object.keys.sorted())
            switch generator.int(0...5) {
            case 0:
                object[key] = nil
                tree = object
                return "\(key) removed"
            case 1:
                return "duplicated a member"
            case 2, 3:
                let (value, name) = strangeValue(&generator)
                object[key] = value
                tree = object
                return "\(key) replaced by \(name)"
            default:
                var child = object[key]!
                let description = mutateTree(&child, &generator)
                object[key] = child
                tree = object
                return "\(key).\(description)"
            }
        }
        if var array = tree as? [Any], !array.isEmpty {
            let index = generator.int(0...(array.count - 1))
            switch generator.int(0...3) {
            case 0:
                array.remove(at: index)
                tree = array
                return "[\(index)] removed"
            case 1:
                array.append(array[index])
                tree = array
                return "[\(index)] repeated"
            default:
                var child = array[index]
                let description = mutateTree(&child, &generator)
                array[index] = child
                tree = array
                return "[\(index)]\(description)"
            }
        }
        let (value, name) = strangeValue(&generator)
        tree = value
        return "replaced by \(name)"
    }

    /// The body with its first member written twice, the second time with another value.
    static func duplicateMember(_ body: Data, _ generator: inout SeededGenerator) -> Data {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], !object.isEmpty else { return body }
        let key = generator.pick(object.keys.sorted())
        let (value, _) = strangeValue(&generator)
        guard let member = try? JSONSerialization.data(withJSONObject: [key: value], options: [.fragmentsAllowed]) else { return body }
        // `{"key":value}` + `,` + the body's members: the key twice, the strange value first.
        var text = String(decoding: member.dropLast(), as: UTF8.self) + ","
        text += String(decoding: body.dropFirst(), as: UTF8.self)
        return hugeNumbers(in: Data(text.utf8), &generator)
    }
}
