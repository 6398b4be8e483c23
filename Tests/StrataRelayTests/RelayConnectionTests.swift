import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// Connections that are slow, silent or abandoned: the relay keeps serving the other
    /// devices promptly, and closes such a connection once it has sent nothing for the idle
    /// timeout (2 seconds here, 60 by default), but never a signals stream that it is writing.
    @Suite("Connections the relay closes", .serialized)
    struct RelayConnectionTests {
        static let idleTimeout = Duration.seconds(2)

        final class Shared: SharedRelay, @unchecked Sendable {
            static let instance = Task { try await Shared() }

            init() async throws {
                try await super.init(environment: ["STRATA_RELAY_IDLE_TIMEOUT_SECONDS": "2", "STRATA_RELAY_HEARTBEAT_SECONDS": "0.5"])
                try await syncAFirstDevice()
            }

            static func get() async throws -> Shared { try await instance.value }

            /// How long a device takes to push a change and pull (its first sync: a hello too).
            func timedSync() async throws -> Duration {
                let folder = try TemporaryDirectory()
                let keys = keys
                let device = try RelayDevice(folder.path("d.sqlite"), relay: relay) { try await keys.token() }
                try await device.store.write { db in _ = try db.insert(Label(name: "meanwhile \(UUID())")) }
                let start = ContinuousClock.now
                let report = try await device.sync.sync()
                let elapsed = start.duration(to: .now)
                #expect(report.pushedChanges == 1)
                await device.close()
                return elapsed
            }
        }

        /// Opens `count` connections, sends each its `opening` bytes, and says when the relay
        /// closed each one (measured from the opening), nil for one still open after `limit`.
        /// The connections are opened at once; the caller syncs meanwhile through `during`.
        static func closings(
            _ shared: Shared, count: Int, opening: @escaping @Sendable (Int) -> Data, limit: Duration,
            during: () async throws -> Void
        ) async throws -> [Duration?] {
            let connections = try await offThePool {
                try (0..<count).map { index in
                    let connection = try RawConnection(shared.relay.url)
                    connection.send(opening(index))
                    return (connection, ContinuousClock.now)
                }
            }
            try await during()
            return try await offThePool {
                connections.map { connection, opened in
                    let left = limit - opened.duration(to: .now)
                    let (_, closed) = connection.readUntilClosed(timeout: max(left, .zero))
                    defer { connection.close() }
                    return closed ? opened.duration(to: .now) : nil
                }
            }
        }

        @Test("Half a request head, then nothing (slowloris): other devices are served promptly; the connection is closed after the idle timeout")
        func halfAHead() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            var during: Duration = .zero
            let closings = try await Self.closings(
                shared, count: 1, opening: { _ in Data("POST /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Le".utf8) },
                limit: .seconds(15)
            ) { during = try await shared.timedSync() }
            #expect(during < .seconds(5), "a device's sync took \(during) beside a half-open request")
            print("relay, slowloris: a device's sync beside it took \(during); the connection closed after \(closings[0].map { "\($0)" } ?? "-")")
            #expect(closings.count == 1)
            let closed = try #require(closings[0], "the relay kept a half-sent request head open for 15 seconds")
            #expect(closed >= Self.idleTimeout - .milliseconds(500), "closed after \(closed), before the idle timeout")
            #expect(closed < Self.idleTimeout + .seconds(5), "closed after \(closed)")
        }

        @Test("A body that stops halfway, then nothing: the connection is closed after the idle timeout, without a 5xx, nothing stored")
        func halfABody() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let label = UUID()
            let push = try JSONEncoder().encode(SyncPush(
                id: UUID(), device: UUID(), changes: [SyncChange(kind: .insert, table: "Label", id: label, values: ["name": "half"])]))
            let head = RawConnection.head("POST", "/v1/push", token: token, headers: ["Content-Type: application/json", "Content-Length: \(push.count)"])
            let (closed, answer) = try await offThePool { () -> (Duration?, Data) in
                let connection = try RawConnection(shared.relay.url)
                let opened = ContinuousClock.now
                connection.send(Data(head.utf8) + push.prefix(push.count / 2))
                let (data, closed) = connection.readUntilClosed(timeout: .seconds(15))
                return (closed ? opened.duration(to: .now) : nil, data)
            }
            let after = try #require(closed, "the relay kept a half-sent body open for 15 seconds")
            #expect(after >= Self.idleTimeout - .milliseconds(500), "closed after \(after), before the idle timeout")
            #expect(after < Self.idleTimeout + .seconds(5), "closed after \(after)")
            if let status = RawConnection.parse(answer)?.status { #expect((400..<500).contains(status), "answered \(status)") }
            #expect(try await shared.test.contents().objects["Label"]?[label] == nil)
            #expect(!shared.relay.log.contains("a request failed"))
        }

        @Test("Clients that disconnect mid-body: the relay serves on, logs no failure, stores nothing of theirs")
        func disconnectsMidBody() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            var labels: [UUID] = []
            for index in 0..<20 {
                let label = UUID()
                labels.append(label)
                let push = try JSONEncoder().encode(SyncPush(
                    id: UUID(), device: UUID(), changes: [SyncChange(kind: .insert, table: "Label", id: label, values: ["name": "gone \(index)"])]))
                let head = RawConnection.head("POST", "/v1/push", token: token, headers: ["Content-Type: application/json", "Content-Length: \(push.count)"])
                try await offThePool {
                    let connection = try RawConnection(shared.relay.url)
                    connection.send(Data(head.utf8) + push.prefix(index * push.count / 20))
                    connection.close()
                }
            }
            #expect(try await shared.timedSync() < .seconds(5))
            let stored = try await shared.test.contents().objects["Label"] ?? [:]
            #expect(labels.allSatisfy { stored[$0] == nil }, "a push cut short reached the server")
            #expect(shared.relay.process.isRunning)
            #expect(!shared.relay.log.contains("a request failed"))
        }

        @Test("200 idle connections (silent, half a head, or kept alive after an answer): devices are served promptly; all are closed after the idle timeout")
        func manyIdleConnections() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let ping = RawConnection.head("GET", "/v1/nothing", token: token, headers: [])
            var syncs: [Duration] = []
            let closings = try await Self.closings(
                shared, count: 200,
                opening: { index in
                    switch index % 3 {
                    case 0: return Data()
                    case 1: return Data("GET /v1/sig".utf8)
                    default: return Data(ping.utf8)  // answered (404), then the connection stays open, idle
                    }
                },
                limit: .seconds(20)
            ) {
                for _ in 0..<3 { syncs.append(try await shared.timedSync()) }
            }
            #expect(syncs.allSatisfy { $0 < .seconds(5) }, "syncs beside 200 idle connections took \(syncs)")
            let open = closings.filter { $0 == nil }.count
            #expect(open == 0, "\(open) of 200 idle connections still open after 20 seconds")
            let closed = closings.compactMap { $0 }
            let latest = closed.max() ?? .zero
            #expect(latest < Self.idleTimeout + .seconds(8), "the last idle connection closed after \(latest)")
            print("relay, 200 idle connections: syncs beside them took \(syncs.map { "\($0)" }.joined(separator: ", ")); closed after \(closed.min() ?? .zero) to \(latest)")
        }

        @Test("A signals stream is not an idle connection: it stays open past the idle timeout, with its heartbeats")
        func signalsOutliveTheIdleTimeout() async throws {
            let shared = try await Shared.get()
            let token = try await shared.keys.token()
            let (data, closed) = try await offThePool { () -> (Data, Bool) in
                let connection = try RawConnection(shared.relay.url)
                connection.send(RawConnection.head("GET", "/v1/signals", token: token, headers: ["Accept: text/event-stream"]))
                return connection.readUntilClosed(timeout: Self.idleTimeout * 3)
            }
            let text = String(decoding: data, as: UTF8.self)
            #expect(!closed, "the relay closed a signals stream: \(text)")
            #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
            #expect(text.contains("event: ready"))
            #expect(text.components(separatedBy: ": heartbeat").count > 4, "\(text)")
        }
    }
}
