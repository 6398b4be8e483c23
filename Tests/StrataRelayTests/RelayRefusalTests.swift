import Foundation
import Logging
import StrataSyncFixture
import StrataTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RelayTests {
    /// What the relay refuses, and how: every refusal an HTTP status with the body
    /// `{"error": ..., "reason": ...}`; a device sees a refused token as `SyncAuthenticationError`
    /// and nothing of it reaches the server.
    @Suite("The relay's refusals", .serialized)
    struct RelayRefusalTests {
        /// A token that the relay must refuse, how it is made, and the code of the refusal.
        struct BadToken: Sendable, CustomTestStringConvertible {
            var name: String
            var code: String
            var reasonMentions: String
            var make: @Sendable (TestKeys) async throws -> String
            var testDescription: String { name }
        }

        static let badTokens: [BadToken] = [
            BadToken(name: "expired", code: "expired_token", reasonMentions: "(exp)") { try await $0.token(expiresIn: -3600) },
            BadToken(name: "not yet valid", code: "token_not_yet_valid", reasonMentions: "(nbf)") {
                try await $0.token(notBefore: 3600)
            },
            BadToken(name: "forged", code: "invalid_signature", reasonMentions: "signature") { try await $0.token(signer: .forger) },
            BadToken(name: "wrong audience", code: "wrong_audience", reasonMentions: "audience") {
                try await $0.token(audience: "another-service")
            },
            BadToken(name: "wrong issuer", code: "wrong_issuer", reasonMentions: "issuer") {
                try await $0.token(issuer: "https://elsewhere.test")
            },
            BadToken(name: "without expiry", code: "invalid_token", reasonMentions: "exp") { try await $0.token(expiresIn: nil) },
            BadToken(name: "without user", code: "invalid_token", reasonMentions: "\"sub\"") { try await $0.token(user: nil) },
            BadToken(name: "not a JWT", code: "malformed_token", reasonMentions: "not a JWT") { _ in "not-a-jwt" },
            BadToken(name: "garbage in three parts", code: "malformed_token", reasonMentions: "not a JWT") { _ in "a.b.c" },
        ]

        /// One relay and one database for the whole suite (each test adds its own devices), its
        /// tables made by a device that signed in.
        final class Shared: SharedRelay, @unchecked Sendable {
            static let instance = Task { try await Shared() }

            init() async throws {
                try await super.init(environment: ["STRATA_RELAY_MAX_BODY_BYTES": "\(1 << 20)"])
                try await syncAFirstDevice()
            }

            static func get() async throws -> Shared { try await instance.value }
        }

        @Test("A device with a bad token sees SyncAuthenticationError, on pushes and on signals", arguments: badTokens)
        func aBadTokenIsRefused(bad: BadToken) async throws {
            let shared = try await Shared.get()
            let folder = try TemporaryDirectory()
            let keys = shared.keys
            let device = try RelayDevice(folder.path("d.sqlite"), relay: shared.relay) { try await bad.make(keys) }
            try await device.store.write { db in _ = try db.insert(Board(name: "Refused \(bad.name)")) }
            do {
                try await device.sync.sync()
                Issue.record("the sync went through with a token \(bad.name)")
            } catch let error as SyncAuthenticationError {
                #expect(error.error == bad.code, "\(error)")
                #expect(error.reason.contains(bad.reasonMentions), "\(error)")
                #expect(!error.reason.contains(keys.secret))
            }
            // The signals stream is refused too.
            do {
                for try await _ in try await device.server.changeSignals() {
                    Issue.record("a signal with a token \(bad.name)")
                    break
                }
                Issue.record("the signals stream was not refused")
            } catch let error as SyncAuthenticationError {
                #expect(error.error == bad.code, "\(error)")
            }
            // The raw answer: 401, the JSON body, the scheme to use.
            let answer = try await http("POST", shared.relay.url.appendingPathComponent("v1/pull"), token: try await bad.make(keys),
                                        body: Data(#"{"device":"8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11","cursor":0,"limit":10}"#.utf8))
            #expect(answer.status == 401)
            #expect(answer.refusal?["error"] == bad.code)
            #expect(answer.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true)
            // Nothing of the device's reached the server.
            let boards = try await shared.test.contents().objects["Board"] ?? [:]
            #expect(!boards.values.contains { $0["name"] == .some("Refused \(bad.name)") })
            await device.close()
        }

        @Test("A device whose token is refused syncs once its provider hands out a good one; a signals stream ends when its token expires")
        func aRefreshedTokenGetsThrough() async throws {
            let shared = try await Shared.get()
            let folder = try TemporaryDirectory()
            let keys = shared.keys
            let refreshed = Flag()
            var quiet = Logger(label: "strata.sync")
            quiet.logLevel = .critical  // (the refusals, logged as warnings while they last)
            let options = SyncOptions(
                pollInterval: .seconds(3600), retryDelays: .milliseconds(50)...(.milliseconds(300)), logger: quiet)
            let device = try RelayDevice(folder.path("refresh.sqlite"), relay: shared.relay, options: options) {
                try await keys.token(expiresIn: refreshed.isSet ? 3600 : -3600)
            }
            try await device.store.write { db in _ = try db.insert(Board(name: "After the refresh")) }
            await device.sync.start()
            #expect(try await eventually { await device.sync.lastError is SyncAuthenticationError })
            refreshed.set()
            #expect(try await eventually {
                let boards = try await shared.test.contents().objects["Board"] ?? [:]
                return boards.values.contains { $0["name"] == .some("After the refresh") }
            })
            #expect(try await eventually { await device.sync.lastError == nil })
            await device.close()

            // A stream whose token expires in a second (and the relay's 5 seconds of leeway) ends
            // then, without an error: the device opens another with a fresh token.
            let shortLived = RelaySyncServer(url: shared.relay.url) { try await keys.token(expiresIn: 1) }
            let opened = ContinuousClock.now
            var events = 0
            for try await _ in try await shortLived.changeSignals() { events += 1 }
            #expect(events >= 1)
            #expect(opened.duration(to: .now) > .seconds(4))
            #expect(opened.duration(to: .now) < .seconds(30))
        }

        @Test("A request without a token gets 401 missing_token; one with a good token goes through")
        func aMissingTokenIsRefused() async throws {
            let shared = try await Shared.get()
            for route in ["v1/hello", "v1/push", "v1/pull"] {
                let answer = try await http("POST", shared.relay.url.appendingPathComponent(route), body: Data("{}".utf8))
                #expect(answer.status == 401, "\(route)")
                #expect(answer.refusal?["error"] == "missing_token", "\(route)")
                #expect(answer.refusal?["reason"]?.contains("Authorization: Bearer") == true, "\(route)")
            }
            let signals = try await http("GET", shared.relay.url.appendingPathComponent("v1/signals"))
            #expect(signals.status == 401)
            #expect(signals.refusal?["error"] == "missing_token")
            let basic = try await http("POST", shared.relay.url.appendingPathComponent("v1/pull"), body: Data("{}".utf8), contentType: nil)
            #expect(basic.status == 401)

            // The same device, with a good token, syncs.
            let folder = try TemporaryDirectory()
            let keys = shared.keys
            let device = try RelayDevice(folder.path("good.sqlite"), relay: shared.relay) { try await keys.token(signer: .es256) }
            try await device.store.write { db in _ = try db.insert(Board(name: "Accepted")) }
            let report = try await device.sync.sync()
            #expect(report.pushedChanges == 1)
            let boards = try await shared.test.contents().objects["Board"] ?? [:]
            #expect(boards.values.contains { $0["name"] == .some("Accepted") })
            await device.close()
        }

        @Test("A body over the limit gets 413; a body that is not the route's message gets 400")
        func oversizedAndMalformedBodies() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let push = shared.relay.url.appendingPathComponent("v1/push")

            // 1 MiB and one byte more (this relay's limit is 1 MiB): refused, whatever it holds.
            let oversized = try await http("POST", push, token: token, body: Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1))
            #expect(oversized.status == 413)
            #expect(oversized.refusal?["error"] == "body_too_large")
            #expect(oversized.refusal?["reason"]?.contains("\(1 << 20) bytes") == true)
            // A push of many changes over the limit, as a device would send it.
            let changes = (0..<12_000).map { index in
                SyncChange(kind: .insert, table: "Label", id: UUID(), values: ["name": "label \(index) " + String(repeating: "x", count: 60)])
            }
            let big = try JSONEncoder().encode(SyncPush(id: UUID(), device: UUID(), changes: changes))
            #expect(big.count > 1 << 20)
            let tooBig = try await http("POST", push, token: token, body: big)
            #expect(tooBig.status == 413)
            #expect(tooBig.refusal?["error"] == "body_too_large")
            // Sent in chunks, without a length: refused once the limit is passed.
            var chunked = URLRequest(url: push)
            chunked.httpMethod = "POST"
            chunked.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            // (URLSession would call it a form: application/x-www-form-urlencoded, refused with 415.)
            chunked.setValue("application/json", forHTTPHeaderField: "Content-Type")
            chunked.httpBodyStream = InputStream(data: big)
            let (chunkedBody, chunkedResponse) = try await URLSession.shared.data(for: chunked)
            #expect((chunkedResponse as? HTTPURLResponse)?.statusCode == 413)
            #expect(HTTPAnswer(status: 413, headers: [:], body: chunkedBody).refusal?["error"] == "body_too_large")
            // Without a token, the token is what is refused (the body is not read).
            #expect(try await http("POST", push, body: big).status == 401)

            // Not JSON, JSON of another shape, a truncated body.
            let cases: [(String, String)] = [
                ("not json", "the body is not a SyncPush in JSON: it is not valid JSON"),
                (#"{"id": "8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11", "device": "8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11"}"#, #""changes" is missing"#),
                (#"{"id": 12, "device": "x", "changes": []}"#, "the value at id"),
                (#"{"id": "8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11", "device": "8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11", "changes": [{"kind": "insert", "ta"#, "not valid JSON"),
            ]
            for (body, reason) in cases {
                let answer = try await http("POST", push, token: token, body: Data(body.utf8))
                #expect(answer.status == 400, "\(body)")
                #expect(answer.refusal?["error"] == "malformed_body", "\(body)")
                #expect(answer.refusal?["reason"]?.contains(reason) == true, "\(answer.refusal ?? [:])")
            }
            let pull = try await http(
                "POST", shared.relay.url.appendingPathComponent("v1/pull"), token: token,
                body: Data(#"{"device":"8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11","cursor":0,"limit":0}"#.utf8))
            #expect(pull.status == 400)
            #expect(pull.refusal?["reason"] == "the pull's limit must be at least 1")

            // No such route, and a method the route does not take: the relay's body too.
            let unknown = try await http("POST", shared.relay.url.appendingPathComponent("v1/nothing"), token: token, body: Data("{}".utf8))
            #expect(unknown.status == 404)
            #expect(unknown.refusal?["error"] == "not_found")
            #expect(unknown.refusal?["reason"] == "the relay has no route POST /v1/nothing")
            let get = try await http("GET", push, token: token)
            #expect([404, 405].contains(get.status))
            #expect(get.refusal?["error"] != nil)

            // The relay still serves after all of it.
            let folder = try TemporaryDirectory()
            let keys = shared.keys
            let device = try RelayDevice(folder.path("after.sqlite"), relay: shared.relay) { try await keys.token() }
            try await device.sync.sync()
            await device.close()
        }

        @Test("A device whose model does not fit the server's tables gets 409 with the reason, as SyncRelayError")
        func aModelThatDoesNotFitIsRefused() async throws {
            let test = try await TestServer()  // its own: its Board table is changed
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys)
            defer { relay.stop() }
            let folder = try TemporaryDirectory()
            let first = try RelayDevice(folder.path("first.sqlite"), relay: relay) { try await keys.token() }
            try await first.sync.sync()  // the relay creates the tables
            await first.close()
            try await test.psql(#"ALTER TABLE "Board" ALTER COLUMN "position" DROP DEFAULT, ALTER COLUMN "position" TYPE text"#)
            let device = try RelayDevice(folder.path("d.sqlite"), relay: relay) { try await keys.token() }
            do {
                try await device.sync.sync()
                Issue.record("a device synced with a server whose Board.position is text")
            } catch let error as SyncRelayError {
                #expect(error.status == 409)
                #expect(error.error == "model_mismatch")
                #expect(error.reason.contains("Board.position: text on the server, bigint here"), "\(error)")
            }
            await device.close()
        }

        @Test("A push or a pull before any hello made the server's tables gets 409 saying so, not 500")
        func requestsBeforeTheServersTablesAreRefusedWithTheReason() async throws {
            let test = try await TestServer()  // its own: no device has said hello to it
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys)
            defer { relay.stop() }
            let token = try await keys.token(user: "erin")
            let device = "5B7C0E2A-3D41-4C8E-9F07-2A6B1C9D0E13"
            let pull = try await http(
                "POST", relay.url.appendingPathComponent("v1/pull"), token: token,
                body: Data(#"{"device":"\#(device)","cursor":0,"limit":10}"#.utf8))
            let push = try await http(
                "POST", relay.url.appendingPathComponent("v1/push"), token: token,
                body: Data(#"{"id":"0D5E7F18-2C3B-4A69-8E1D-7F3A2B4C5D6E","device":"\#(device)","changes":[]}"#.utf8))
            for answer in [pull, push] {
                #expect(answer.status == 409)
                #expect(answer.refusal?["error"] == "model_mismatch")
                #expect(answer.refusal?["reason"]?.contains("the server has no Strata sync tables") == true, "\(answer.refusal ?? [:])")
            }
            // A device's hello makes them; then the same requests are answered.
            let folder = try TemporaryDirectory()
            let first = try RelayDevice(folder.path("first.sqlite"), relay: relay) { try await keys.token(user: "erin") }
            try await first.sync.sync()
            await first.close()
            let again = try await http(
                "POST", relay.url.appendingPathComponent("v1/pull"), token: token,
                body: Data(#"{"device":"\#(device)","cursor":0,"limit":10}"#.utf8))
            #expect(again.status == 200)
        }
    }
}
