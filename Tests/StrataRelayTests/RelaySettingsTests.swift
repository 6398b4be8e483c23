import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StrataRelay
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// The relay's other ways in: a JSON settings file with a JWKS key and another user claim,
    /// and the routes mounted in an app of one's own.
    @Suite("The relay's settings")
    struct RelaySettingsTests {
        @Test("Settings from a --config file: a JWKS key (by kid), the user in another claim, a smaller body limit, an idle timeout, no metrics")
        func settingsFromAFile() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let folder = try TemporaryDirectory()
            try keys.jwks(kid: "signin-2026").write(toFile: folder.path("jwks.json"), atomically: true, encoding: .utf8)
            let settings = """
                {
                  "jwt": { "jwksFile": "\(folder.path("jwks.json"))", "userClaim": "uid", "audience": "\(keys.audience)" },
                  "maxBodyBytes": 4096,
                  "idleTimeoutSeconds": 1.5,
                  "metrics": false,
                  "logLevel": "info"
                }
                """
            try settings.write(toFile: folder.path("relay.json"), atomically: true, encoding: .utf8)
            // The file's settings only: the test's usual keys, issuer and audience are unset.
            let relay = try await RelayProcess(
                test, keys: keys,
                environment: [
                    "STRATA_RELAY_JWT_HS256_SECRET": "", "STRATA_RELAY_JWT_ES256_PUBLIC_KEY_FILE": "",
                    "STRATA_RELAY_JWT_ISSUER": "", "STRATA_RELAY_JWT_AUDIENCE": "", "STRATA_RELAY_LOG_LEVEL": "",
                ],
                arguments: ["--config", folder.path("relay.json")])
            defer { relay.stop() }

            let device = try RelayDevice(folder.path("carol.sqlite"), relay: relay) {
                try await keys.token(user: nil, uid: "carol", signer: .es256, kid: "signin-2026")
            }
            try await device.store.write { db in _ = try db.insert(Board(name: "Signed in with the JWKS")) }
            #expect(try await device.sync.sync().pushedChanges == 1)
            await device.close()

            let pull = relay.url.appendingPathComponent("v1/pull")
            let body = Data(#"{"device":"8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11","cursor":0,"limit":10}"#.utf8)
            // The user is in uid now: a token with sub alone is refused.
            let subOnly = try await http("POST", pull, token: try await keys.token(user: "carol", signer: .es256, kid: "signin-2026"), body: body)
            #expect(subOnly.status == 401)
            #expect(subOnly.refusal?["reason"] == #"the token has no user id in its claim "uid""#)
            // The HS256 secret is not one of this relay's keys.
            let hs256 = try await http("POST", pull, token: try await keys.token(uid: "carol"), body: body)
            #expect(hs256.status == 401)
            #expect(hs256.refusal?["error"] == "invalid_signature")
            // The body limit is the file's.
            let good = try await keys.token(user: nil, uid: "carol", signer: .es256, kid: "signin-2026")
            #expect(try await http("POST", pull, token: good, body: body).status == 200)
            let big = try await http("POST", pull, token: good, body: Data(repeating: UInt8(ascii: " "), count: 4097))
            #expect(big.status == 413)
            #expect(relay.log.contains("user=carol"))
            // No metrics; a silent connection is closed after the file's 1.5 seconds.
            #expect(try await http("GET", relay.url.appendingPathComponent("metrics"), contentType: nil).status == 404)
            let closed = try await offThePool { () -> Duration? in
                let connection = try RawConnection(relay.url)
                let opened = ContinuousClock.now
                return connection.readUntilClosed(timeout: .seconds(15)).closed ? opened.duration(to: .now) : nil
            }
            let after = try #require(closed, "a silent connection stayed open for 15 seconds")
            #expect(after > .seconds(1) && after < .seconds(8), "closed after \(after)")
        }

        @Test("A setting of the wrong type, in the environment or in the file, stops the relay with an error that names it; the environment wins over the file")
        func settingsOfTheWrongTypeAreRefusedByName() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let folder = try TemporaryDirectory()
            func refusal(_ environment: [String: String], file: String? = nil) async throws -> String {
                var arguments: [String] = []
                if let file {
                    let path = folder.path("relay-\(UUID().uuidString.prefix(8)).json")
                    try file.write(toFile: path, atomically: true, encoding: .utf8)
                    arguments = ["--config", path]
                }
                do {
                    let relay = try await RelayProcess(test, keys: keys, environment: environment, arguments: arguments)
                    relay.stop()
                    return "started"
                } catch let error as RelayProcess.RelayError {
                    return error.description
                }
            }
            let port = try await refusal(["STRATA_RELAY_PORT": "eighty"])
            #expect(port.contains("listen.port (STRATA_RELAY_PORT)=eighty is not a number"), "\(port)")
            let body = try await refusal([:], file: #"{ "maxBodyBytes": "large" }"#)
            #expect(body.contains("maxBodyBytes (STRATA_RELAY_MAX_BODY_BYTES)=large is not a number"), "\(body)")
            let metrics = try await refusal(["STRATA_RELAY_METRICS": "sometimes"])
            #expect(metrics.contains("metrics (STRATA_RELAY_METRICS)=sometimes is not true or false"), "\(metrics)")
            let claim = try await refusal([:], file: #"{ "jwt": { "userClaim": 7 } }"#)
            #expect(claim.contains("jwt.userClaim (STRATA_RELAY_JWT_USER_CLAIM) is not text"), "\(claim)")
            let broken = try await refusal([:], file: #"{ "jwt": "#)
            #expect(broken.contains("is not the relay's JSON"), "\(broken)")

            // The file limits bodies to 100 bytes and names another audience; the environment
            // says 4096 and the tokens' audience, and wins.
            let path = folder.path("relay.json")
            try #"{ "maxBodyBytes": 100, "jwt": { "audience": "someone-else" }, "listen": { "port": "not used" } }"#
                .write(toFile: path, atomically: true, encoding: .utf8)
            let relay = try await RelayProcess(test, keys: keys, environment: ["STRATA_RELAY_MAX_BODY_BYTES": "4096"], arguments: ["--config", path])
            defer { relay.stop() }
            // A device signs in (the environment's audience) and syncs (its hello makes the
            // server's tables).
            let device = try RelayDevice(folder.path("dora.sqlite"), relay: relay) { try await keys.token(user: "dora") }
            try await device.store.write { db in _ = try db.insert(Board(name: "The environment wins")) }
            #expect(try await device.sync.sync().pushedChanges == 1)
            await device.close()
            let pull = relay.url.appendingPathComponent("v1/pull")
            let padded = #"{"device":"8A1E07E4-6A55-4D7A-9B3C-0E9B1B0A8C11","cursor":0,"limit":10}"# + String(repeating: " ", count: 200)
            let answer = try await http("POST", pull, token: try await keys.token(user: "dora"), body: Data(padded.utf8))
            #expect(answer.status == 200, "\(answer.status) \(answer.refusal ?? [:])")
            #expect(try await http("POST", pull, token: try await keys.token(user: "dora"), body: Data(repeating: 32, count: 4097)).status == 413)
        }

        @Test(
            "The routes mounted in an app of one's own, under a prefix; the app stops gracefully with a signals stream open, the relay a service of the app or one before it in the group",
            arguments: [false, true])
        func mountedInAnApp(relayFirstInTheGroup: Bool) async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            var logger = Logger(label: "strata.relay.tests")
            logger.logLevel = .error
            let relay = try await SyncRelay(configuration: SyncRelayConfiguration(
                postgres: test.configuration, schema: StrataModel.schema,
                tokens: RelayTokenRules(keys: [.hs256(secret: keys.secret)], issuer: keys.issuer, audience: keys.audience),
                logger: logger))
            let router = Router()
            relay.addRoutes(to: router.group("sync"))
            let (ports, port) = AsyncStream<Int>.makeStream()
            var app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) }, logger: logger)
            // A group stops its services last first: with the relay first, the app stops while
            // the relay still runs, so the stream must end on the app's shutdown.
            if !relayFirstInTheGroup { app.addServices(relay) }
            let group = ServiceGroup(configuration: .init(services: relayFirstInTheGroup ? [relay, app] : [app], logger: logger))
            let running = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let bound = try #require(await iterator.next())
            let url = try #require(URL(string: "http://127.0.0.1:\(bound)/sync"))

            let folder = try TemporaryDirectory()
            let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
            let b = try RelayDevice(folder.path("b.sqlite"), url: url) { try await keys.token(user: "b") }
            try await a.store.write { db in _ = try db.insert(Board(name: "Mounted")) }
            try await settle([a, b])
            try await expectConverged([a, b], test)
            #expect(try await b.store.fetchAll(Board.self).map(\.name) == ["Mounted"])

            // A signals stream is open (and counted) when the app stops: it ends, and so does the app.
            let signals = try await b.server.changeSignals()
            var events = signals.makeAsyncIterator()
            _ = try await events.next()  // ready
            #expect(relay.connectedDevices == 1)
            let stopping = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(stopping.duration(to: .now) < .seconds(10))
            _ = try? await events.next()
            await a.close()
            await b.close()
        }

        /// What the app answers at `/v1/snapshot` instead of the relay.
        enum SnapshotStandIn: Sendable {
            /// 404: a relay of an earlier version, without the route.
            case notFound
            /// A 200 whose stream ends after a first line that says more follows (the relay,
            /// or its database, failed midway).
            case cutAfterOneLine
            /// A 200 whose stream sends that line, then nothing for four seconds, then ends.
            case stallAfterOneLine
            /// The relay's own answer; the batch size the device asked is noted in `sizes`.
            case recordBatchSize(Sizes)
        }

        /// The batch sizes of the snapshot requests a relay saw.
        final class Sizes: @unchecked Sendable {
            private let lock = NSLock()
            private var asked: [Int] = []
            func append(_ size: Int) { lock.withLock { asked.append(size) } }
            var all: [Int] { lock.withLock { asked } }
        }

        /// Answers `/v1/snapshot` as `standIn` says (nil: the relay answers).
        struct SnapshotMiddleware<Context: RequestContext>: RouterMiddleware {
            let standIn: @Sendable () -> SnapshotStandIn?
            func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
                guard request.uri.path.hasSuffix("/snapshot"), let standIn = standIn() else { return try await next(request, context) }
                switch standIn {
                case .notFound:
                    return Response(status: .notFound)
                case .cutAfterOneLine:
                    return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody(byteBuffer: ByteBuffer(string: Self.line)))
                case .stallAfterOneLine:
                    return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: Self.line))
                        try? await Task.sleep(for: .seconds(4))
                        try await writer.finish(nil)
                    })
                case .recordBatchSize(let sizes):
                    var request = request
                    let body = try await request.body.collect(upTo: 1 << 16)
                    sizes.append(try JSONDecoder().decode(SyncSnapshotRequest.self, from: Data(body.readableBytesView)).batchSize)
                    request.body = RequestBody(buffer: body)
                    return try await next(request, context)
                }
            }

            static var line: String {
                #"{"cursor":1,"hasMore":true,"changes":[],"objects":[{"table":"Board","columns":["name"],"ids":["8a1e07e4-6a55-4d7a-9b3c-0e9b1b0a8c11"],"rows":[["Half"]]}]}"# + "\n"
            }
        }

        /// A relay's routes in an app of the test's own whose `/v1/snapshot` answers as
        /// `standIn` says, running while `body` runs.
        static func withRelay(
            connections: Int = 4, requestTimeout: Duration = .seconds(60), snapshot standIn: @escaping @Sendable () -> SnapshotStandIn?,
            _ body: (URL, TestServer, TestKeys) async throws -> Void
        ) async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            var logger = Logger(label: "strata.relay.tests")
            logger.logLevel = .error
            let relay = try await SyncRelay(configuration: SyncRelayConfiguration(
                postgres: test.configuration, schema: StrataModel.schema,
                tokens: RelayTokenRules(keys: [.hs256(secret: keys.secret)], issuer: keys.issuer, audience: keys.audience),
                connections: connections, requestTimeout: requestTimeout, logger: logger))
            let router = Router()
            router.add(middleware: SnapshotMiddleware(standIn: standIn))
            relay.addRoutes(to: router)
            let (ports, port) = AsyncStream<Int>.makeStream()
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) }, logger: logger)
            let group = ServiceGroup(configuration: .init(services: [app, relay], logger: logger))
            let running = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let bound = try #require(await iterator.next())
            do {
                try await body(try #require(URL(string: "http://127.0.0.1:\(bound)")), test, keys)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await running.value
        }

        @Test(
            "A relay without the snapshot route (an earlier version): an empty store's first sync reads the log, and holds the same",
            arguments: [RelaySyncServer.Transport.urlSession, .asyncHTTPClient])
        func aRelayWithoutSnapshots(transport: RelaySyncServer.Transport) async throws {
            try await Self.withRelay(snapshot: { .notFound }) { url, _, keys in
                let folder = try TemporaryDirectory()
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in
                    for name in ["One", "Two", "Three"] { _ = try db.insert(Board(name: name)) }
                }
                try await a.sync.sync()
                let store = try Store(schema: StrataModel.schema, path: folder.path("b.sqlite"))
                let watcher = SnapshotWatcher(RelaySyncServer(url: url, transport: transport) { try await keys.token(user: "b") })
                let b = try StoreSync(store: store, server: watcher)
                #expect(try await b.sync().pulledChanges == 3)
                #expect(watcher.offered == [false])
                #expect(try b.contents() == a.sync.contents())
                await b.stop()
                try store.close()
                await a.close()
            }
        }

        @Test(
            "A snapshot cut before its last line applies nothing and fails; the next sync reads it whole",
            arguments: [RelaySyncServer.Transport.urlSession, .asyncHTTPClient])
        func aSnapshotCutMidway(transport: RelaySyncServer.Transport) async throws {
            let cut = Flag()
            cut.set()
            try await Self.withRelay(snapshot: { cut.isSet ? .cutAfterOneLine : nil }) { url, _, keys in
                let folder = try TemporaryDirectory()
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in
                    for name in ["One", "Two"] { _ = try db.insert(Board(name: name)) }
                }
                try await a.sync.sync()
                let b = try RelayDevice(folder.path("b.sqlite"), url: url, transport: transport) { try await keys.token(user: "b") }
                await #expect { try await b.sync.sync() } throws: { error in
                    (error as? SyncRelayError)?.error == "incomplete_snapshot"
                }
                // Not even the line that came.
                #expect(try await b.store.fetchAll(Board.self).isEmpty)
                cut.clear()
                try await b.sync.sync()
                #expect(try b.sync.contents() == a.sync.contents())
                #expect(Set(try await b.store.fetchAll(Board.self).map(\.name)) == ["One", "Two"])
                await a.close()
                await b.close()
            }
        }

        @Test(
            "A snapshot's lines hold at most 5,000 objects: a device asks for four pull batches a line, never more than 5,000",
            arguments: [RelaySyncServer.Transport.urlSession, .asyncHTTPClient])
        func aSnapshotsLinesAreCapped(transport: RelaySyncServer.Transport) async throws {
            let sizes = Sizes()
            try await Self.withRelay(snapshot: { .recordBatchSize(sizes) }) { url, _, keys in
                let folder = try TemporaryDirectory()
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in
                    for index in 0..<30 { _ = try db.insert(Board(name: "Board \(index)")) }
                }
                try await a.sync.sync()
                // The default pull batch (5,000) would ask for 20,000 objects a line; 7 asks for 28.
                for (name, batch, asked) in [("b", 5_000, 5_000), ("c", 7, 28)] {
                    let device = try RelayDevice(
                        folder.path("\(name).sqlite"), url: url, options: SyncOptions(pullBatchSize: batch), transport: transport
                    ) { try await keys.token(user: "a") }
                    try await device.sync.sync()
                    #expect(sizes.all.last == asked, "pull batch \(batch): asked \(sizes.all)")
                    #expect(try device.sync.contents() == a.sync.contents(), "pull batch \(batch): the snapshot read whole")
                    await device.close()
                }
                #expect(sizes.all.count == 2, "one snapshot for each empty store (\(sizes.all))")
                // The relay holds a line to the size asked: 30 boards in lines of at most 7.
                let reader = try RelayDevice(folder.path("d.sqlite"), url: url, transport: transport) { try await keys.token(user: "a") }
                let lines = Sizes()
                #expect(try await reader.server.readSnapshot(batchSize: 7) { batch in
                    lines.append(batch.result.changes.count + (batch.result.objects?.reduce(0) { $0 + $1.ids.count } ?? 0))
                    return true
                })
                #expect(lines.all.allSatisfy { $0 <= 7 } && lines.all.reduce(0, +) == 30, "lines of \(lines.all)")
                await reader.close()
                await a.close()
            }
        }

        @Test(
            "A snapshot that stops coming: the sync fails with URLError.timedOut after the request timeout, having applied nothing",
            arguments: [RelaySyncServer.Transport.urlSession, .asyncHTTPClient])
        func aSnapshotThatStalls(transport: RelaySyncServer.Transport) async throws {
            try await Self.withRelay(snapshot: { .stallAfterOneLine }) { url, _, keys in
                let folder = try TemporaryDirectory()
                let store = try Store(schema: StrataModel.schema, path: folder.path("b.sqlite"))
                let server = RelaySyncServer(url: url, requestTimeout: .seconds(1), transport: transport) { try await keys.token(user: "b") }
                let b = try StoreSync(store: store, server: server)
                let started = ContinuousClock.now
                await #expect { try await b.sync() } throws: { error in
                    (error as? URLError)?.code == .timedOut
                }
                // Past the timeout, and before the relay's stream would have ended by itself.
                let waited = started.duration(to: .now)
                #expect(waited >= .seconds(1) && waited < .seconds(4), "\(waited)")
                #expect(try await store.fetchAll(Board.self).isEmpty)
                await b.stop()
                try store.close()
            }
        }

        @Test(
            "A snapshot line longer than the 8 MiB a device reads ahead (2,000 labels of 8 KiB: one line of 16 MiB): an empty store's first sync reads it whole",
            arguments: [RelaySyncServer.Transport.urlSession, .asyncHTTPClient])
        func aSnapshotLineLongerThanTheReadAhead(transport: RelaySyncServer.Transport) async throws {
            try await Self.withRelay(snapshot: { nil }) { url, test, keys in
                let folder = try TemporaryDirectory()
                // A device's sync makes the server's tables; then the labels, all in the
                // snapshot's first line (a line holds up to 5,000 objects).
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in _ = try db.insert(Board(name: "Before")) }
                try await a.sync.sync()
                await a.close()
                let labels = 2_000, size = 8 << 10
                try await test.psql(
                    "INSERT INTO \"Label\" (id, name) SELECT gen_random_uuid(), repeat(md5(g::text), \(size / 32)) FROM generate_series(1, \(labels)) g")

                // (A sync held for ever, waiting for the rest of the line, fails here after a
                // minute; it is left behind, and its store open.)
                let b = try RelayDevice(folder.path("b.sqlite"), url: url, transport: transport) { try await keys.token(user: "b") }
                let sync = b.sync
                let pulled = try await within(.seconds(60)) { try await sync.sync().pulledChanges }
                guard pulled != nil else {
                    Issue.record("the first sync did not end within 60 seconds")
                    return
                }
                let names = try await b.store.fetchAll(Label.self).map(\.name)
                #expect(names.count == labels && names.allSatisfy { $0.utf8.count == size }, "\(names.count) labels")
                #expect(try await b.store.fetchAll(Board.self).map(\.name) == ["Before"])
                await b.close()
            }
        }

        @Test("A device that stops reading a snapshot, its connection left open: the relay ends the snapshot's transaction after its request timeout, serves other devices meanwhile, and the answer ends without its last line")
        func aDeviceThatStopsReadingASnapshot() async throws {
            let timeout = Duration.seconds(2)
            try await Self.withRelay(requestTimeout: timeout, snapshot: { nil }) { url, test, keys in
                let folder = try TemporaryDirectory()
                // A device's sync makes the server's tables; then 12,000 labels of 1 KiB each: a
                // snapshot of 12 MiB, far more than the connection's buffers hold (about 4 MiB
                // here), in lines of 5,000 for a device (under the 8 MiB it buffers).
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in _ = try db.insert(Board(name: "Before")) }
                try await a.sync.sync()
                await a.close()
                let labels = 12_000
                try await test.psql(
                    "INSERT INTO \"Label\" (id, name) SELECT gen_random_uuid(), repeat(md5(g::text), 32) FROM generate_series(1, \(labels)) g")
                // The transactions open on the test's database (the relay's, not this query's), a line each.
                func openTransactions() async throws -> [String] {
                    try await test.psql("""
                        SELECT pid || ' ' || state || ' ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 100) FROM pg_stat_activity \
                        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
                        """).split(separator: "\n").map(String.init)
                }
                #expect(try await eventually(.seconds(10)) { try await openTransactions().isEmpty })

                // A device asks for the snapshot, reads the head and the first piece of the
                // answer, then nothing more, its connection open.
                let connection = try RawConnection(url)
                defer { connection.close() }
                let token = try await keys.token(user: "b")
                let request = #"{"batchSize":100}"#
                let first = try await offThePool { () -> Data in
                    connection.send(
                        RawConnection.head("POST", "/v1/snapshot", token: token, headers: ["Content-Type: application/json", "Content-Length: \(request.utf8.count)"])
                            + request)
                    return connection.read(timeout: .seconds(30)) { RawConnection.parseStart($0).map { !$0.body.isEmpty } ?? false }.data
                }
                let stopped = ContinuousClock.now
                let answer = try #require(RawConnection.parseStart(first), "no answer came")
                #expect(answer.status == 200 && answer.headers["content-type"] == "application/x-ndjson", "\(answer.status) \(answer.headers)")

                // Half the timeout later, the snapshot's transaction is open: the relay waits
                // for the device.
                try await Task.sleep(for: timeout / 2)
                var open = try await openTransactions()
                #expect(open.contains { $0.contains("strata_snapshot") }, "the snapshot's transaction was not open: \(open)")
                // It ends within the timeout and a margin, the device still connected and silent.
                while !open.isEmpty, stopped.duration(to: .now) < timeout + .seconds(5) {
                    try await Task.sleep(for: .milliseconds(100))
                    open = try await openTransactions()
                }
                let waited = stopped.duration(to: .now)
                #expect(open.isEmpty, "still open \(waited) after the device stopped reading (the timeout is \(timeout)): \(open)")

                // Another device's first sync, snapshot and all, goes through meanwhile.
                let c = try RelayDevice(folder.path("c.sqlite"), url: url) { try await keys.token(user: "c") }
                try await c.sync.sync()
                #expect(try await c.store.fetchAll(Label.self).count == labels)
                #expect(try await c.store.fetchAll(Board.self).map(\.name) == ["Before"])
                await c.close()

                // The silent device reads again: the answer ends (its last chunk, or the
                // connection closed) without its last line, so a device applies none of it.
                let rest = try await offThePool {
                    connection.read(timeout: .seconds(30)) { $0.suffix(7).elementsEqual("\r\n0\r\n\r\n".utf8) }
                }
                let whole = first + rest.data
                #expect(rest.closed || whole.suffix(7).elementsEqual("\r\n0\r\n\r\n".utf8), "the answer did not end (\(whole.count) bytes)")
                let body = try #require(RawConnection.parseStart(whole)).body
                var lines = body.split(separator: UInt8(ascii: "\n"))
                if body.last != UInt8(ascii: "\n") { lines.removeLast() }  // a line cut short
                let results = try lines.map { try JSONDecoder().decode(SyncPullResult.self, from: Data($0)) }
                let sent = results.reduce(0) { $0 + ($1.objects?.reduce(0) { $0 + $1.ids.count } ?? 0) }
                #expect(!results.isEmpty && results.allSatisfy(\.hasMore), "the last line came, after \(results.count - 1) others")
                #expect(sent < labels + 1, "\(sent) objects sent: the whole snapshot")
            }
        }

        @Test("Thirty devices syncing at once through a relay of one request connection: every sync goes through, and the relay never holds more than its bound of database connections")
        func aRelayUnderLoadHoldsItsBoundOfConnections() async throws {
            try await Self.withRelay(connections: 1, snapshot: { nil }) { url, test, keys in
                let folder = try TemporaryDirectory()
                let a = try RelayDevice(folder.path("a.sqlite"), url: url) { try await keys.token(user: "a") }
                try await a.store.write { db in
                    for name in (0..<50).map({ "Board \($0)" }) { _ = try db.insert(Board(name: name)) }
                }
                try await a.sync.sync()
                // Sampled while the devices sync: the relay's connections to the test's database.
                let sampling = Task {
                    var most = 0
                    while !Task.isCancelled {
                        let count = try await test.psql(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
                        most = max(most, Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0)
                        try? await Task.sleep(for: .milliseconds(50))
                    }
                    return most
                }
                let devices = try (0..<30).map { index in
                    try RelayDevice(folder.path("d\(index).sqlite"), url: url) { try await keys.token(user: "d\(index)") }
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for device in devices {
                        group.addTask {
                            try await device.sync.sync()  // a hello, the snapshot, a pull
                            try await device.store.write { db in _ = try db.insert(Label(name: "mine")) }
                            try await device.sync.sync()  // a push
                        }
                    }
                    try await group.waitForAll()
                }
                sampling.cancel()
                let most = try await sampling.value
                // One request connection and its second, one listening, one trying the database
                // while requests wait.
                #expect(most >= 1 && most <= 4, "the relay held \(most) connections")
                for device in devices {
                    #expect(try await device.store.fetchAll(Board.self).count == 50)
                    await device.close()
                }
                await a.close()
            }
        }
    }
}