import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// Sync over TCP with TLS, against a real server: each test starts a cluster that listens on
/// 127.0.0.1 with `ssl=on` inside a network namespace of its own (nothing listens on the
/// machine's network), whose `pg_hba.conf` accepts TCP connections only with TLS, and device
/// processes started in that namespace. The namespace needs root: as another user these
/// tests fail, saying so.
@Suite("Sync over TLS", .serialized)
struct SyncTLSTests {
    /// A cluster and its database, and device processes in its namespace.
    final class Setup {
        let cluster: PostgresCluster
        let database: String
        let folder: TemporaryDirectory
        var devices: [DeviceRunner] = []

        init() async throws {
            try #require(FileManager.default.isExecutableFile(atPath: DeviceRunner.executable), "build first: swift build --build-tests")
            cluster = try await PostgresCluster.startTLS()
            do {
                database = try await cluster.makeDatabase()
                folder = try TemporaryDirectory()
                // The server's tables, made here (over the Unix socket), so that what reaches
                // them can be read before any device got through.
                try await cluster.psql(try PostgresSchema(schema: StrataModel.schema).sql, database: database)
            } catch {
                cluster.destroy()
                throw error
            }
        }

        /// Kills the devices left, stops the server, deletes its folder and namespace.
        func destroy() {
            for device in devices { device.kill() }
            cluster.destroy()
        }

        /// A device process in the server's network namespace.
        func device(_ name: String) throws -> DeviceRunner {
            let device = try DeviceRunner(name: name, launcher: cluster.namespaceCommand)
            devices.append(device)
            return device
        }

        /// The device command that opens `store` over TLS to 127.0.0.1, trusting `ca` (the
        /// cluster's own CA unless given), for `serverName` (the certificate's name,
        /// `localhost`, unless given; "-" for none). The certificate lists no IP address, so
        /// the name is what is verified.
        func openTLS(_ store: String, seed: Int, ca: URL? = nil, serverName: String = PostgresCluster.tlsServerName) -> String {
            "open-tls \(folder.path(store)) \(PostgresCluster.tlsHost) \(cluster.port) \(database) \(seed) "
                + "\((ca ?? cluster.certificateAuthority).path) \(serverName)"
        }

        /// What the server's tables hold, read over the Unix socket.
        func serverContents() async throws -> SyncContents {
            let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
            do {
                let contents = try await server.contents()
                await server.close()
                return contents
            } catch {
                await server.close()
                throw error
            }
        }

        /// How many pushes the server applied.
        func pushCount() async throws -> Int {
            Int(try await cluster.psql("SELECT count(*) FROM strata_sync_pushes", database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }

        /// The connections to the database over TCP, from the server's statistics: TLS on
        /// ("t" or "f"), its protocol, the client's address; one line each.
        func tcpSessions() async throws -> [String] {
            try await cluster.psql("""
                SELECT s.ssl, coalesce(s.version, '-'), a.client_addr
                FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid
                WHERE a.datname = '\(database)' AND a.client_addr IS NOT NULL
                ORDER BY a.backend_start
                """).split(separator: "\n").map(String.init)
        }

        /// The server log's lines.
        func serverLog() -> [Substring] {
            ((try? String(contentsOf: cluster.logFile, encoding: .utf8)) ?? "").split(separator: "\n")
        }
    }

    /// Syncs each device in turn, `rounds` times round.
    func settle(_ devices: [DeviceRunner], rounds: Int = 2) async throws {
        for _ in 0..<rounds {
            for device in devices { try await device.send("sync") }
        }
    }

    /// The titles of the cards in `contents`.
    func cardTitles(_ contents: SyncContents) -> Set<String> {
        Set((contents.objects["Card"] ?? [:]).values.compactMap { $0["title"] ?? nil })
    }

    func linkCount(_ contents: SyncContents) -> Int { contents.links.values.reduce(0) { $0 + $1.count } }

    @Test("Two device processes sync over TLS with the server's certificate verified, and converge")
    func twoDevicesConvergeOverTLS() async throws {
        let setup = try await Setup()
        defer { setup.destroy() }
        let a = try setup.device("a"), b = try setup.device("b")
        try await a.send(setup.openTLS("a.sqlite", seed: 21))
        try await b.send(setup.openTLS("b.sqlite", seed: 22))

        // Each makes a board, cards, a label and a link; then each edits, deletes and links
        // what the other made.
        try await a.send("scripted A insert")
        try await b.send("scripted B insert")
        try await settle([a, b])
        try await a.send("scripted B change")
        try await b.send("scripted A change")
        try await settle([a, b])
        let server = try await setup.serverContents()
        #expect(cardTitles(server) == ["A first, edited", "A third", "B first, edited", "B third"])
        #expect(linkCount(server) == 4)
        for device in [a, b] {
            let contents = try await device.contents()
            #expect(contents.difference(from: server) == nil, "\(device.name): \(contents.difference(from: server) ?? "")")
        }

        // Then seeded random changes on both (cascades and unique names included).
        try await a.send("write 40")
        try await b.send("write 40")
        try await settle([a, b], rounds: 3)
        let final = try await setup.serverContents()
        #expect(final.objectCount > 0)
        let left = try await a.contents(), right = try await b.contents()
        #expect(left.difference(from: right) == nil, "a and b differ: \(left.difference(from: right) ?? "")")
        #expect(left.difference(from: final) == nil, "a differs from the server: \(left.difference(from: final) ?? "")")
        #expect(right.difference(from: final) == nil, "b differs from the server: \(right.difference(from: final) ?? "")")
        _ = try await a.send("check")
        _ = try await b.send("check")

        // Each device keeps its connection open between syncs: the server sees both, each
        // with TLS, from its namespace's loopback.
        let sessions = try await setup.tcpSessions()
        #expect(sessions.count == 2, "\(sessions)")
        for session in sessions {
            let fields = session.split(separator: "|").map(String.init)
            #expect(fields.count == 3 && fields[0] == "t" && ["TLSv1.2", "TLSv1.3"].contains(fields[1]) && fields[2] == "127.0.0.1",
                    "a TCP session without TLS: \(session)")
        }
        // And its log (log_connections) says so of every connection made to the database.
        let authorized = setup.serverLog().filter { $0.contains("connection authorized") && $0.contains("database=\(setup.database)") }
        let overTLS = authorized.filter { $0.contains("SSL enabled") }
        #expect(overTLS.count >= 2, "\(authorized)")
        try await a.send("quit")
        try await b.send("quit")
    }

    @Test("A device that does not trust the server's CA cannot sync, and keeps its data")
    func untrustedServerIsRefused() async throws {
        let setup = try await Setup()
        defer { setup.destroy() }
        // A CA of its own, unrelated to the one that signed the server's certificate.
        let otherCA = try PostgresCluster.makeCertificateAuthority(in: setup.folder.url.appendingPathComponent("other-ca"), name: "Unrelated CA")
        let device = try setup.device("untrusting")
        try await device.send(setup.openTLS("c.sqlite", seed: 31, ca: otherCA))
        try await device.send("scripted C insert")
        try await device.send("write 20")
        let local = try await device.contents()
        #expect(local.objectCount > 0)

        let failure = await #expect(throws: DeviceRunner.DeviceError.self) { try await device.send("sync") }
        let message = failure?.description ?? ""
        #expect(message.contains("CERTIFICATE_VERIFY_FAILED"), "\(message)")
        #expect(try await device.contents() == local, "the device lost data when its sync failed")
        #expect(try await setup.serverContents().objectCount == 0, "data reached the server without a verified certificate")
        #expect(try await setup.pushCount() == 0)
        try await device.send("quit")

        // Reopened with the server's CA and name, the same store syncs all it has.
        let trusting = try setup.device("trusting")
        try await trusting.send(setup.openTLS("c.sqlite", seed: 33))
        #expect(try await trusting.contents() == local)
        try await trusting.send("sync")
        let server = try await setup.serverContents()
        #expect(server.objectCount == local.objectCount)
        #expect(local.difference(from: server) == nil, "\(local.difference(from: server) ?? "")")
        #expect(try await setup.tcpSessions().allSatisfy { $0.hasPrefix("t|") })
        try await trusting.send("quit")
    }

    @Test("A device that connects without TLS is refused by the server, and keeps its data")
    func connectionWithoutTLSIsRefused() async throws {
        let setup = try await Setup()
        defer { setup.destroy() }
        let plain = try setup.device("plain")
        try await plain.send("open-tcp \(setup.folder.path("d.sqlite")) \(PostgresCluster.tlsHost) \(setup.cluster.port) \(setup.database) 41")
        try await plain.send("scripted D insert")
        try await plain.send("write 20")
        let local = try await plain.contents()
        #expect(local.objectCount > 0)

        let failure = await #expect(throws: DeviceRunner.DeviceError.self) { try await plain.send("sync") }
        let message = failure?.description ?? ""
        #expect(message.contains("pg_hba.conf rejects connection") && message.contains("no encryption"), "\(message)")
        #expect(try await plain.contents() == local, "the device lost data when its sync failed")
        #expect(try await setup.serverContents().objectCount == 0, "data reached the server without TLS")
        #expect(try await setup.pushCount() == 0)
        try await plain.send("quit")

        // The same store, over TLS (for the certificate's name, localhost): everything it had
        // reaches the server.
        let tls = try setup.device("tls")
        try await tls.send(setup.openTLS("d.sqlite", seed: 42))
        try await tls.send("sync")
        let server = try await setup.serverContents()
        #expect(server.objectCount == local.objectCount)
        #expect(local.difference(from: server) == nil, "\(local.difference(from: server) ?? "")")
        try await tls.send("quit")
    }

    @Test("A device that trusts the server's CA but asks for another name cannot sync, and keeps its data")
    func wrongServerNameIsRefused() async throws {
        let setup = try await Setup()
        defer { setup.destroy() }
        // The right CA, at the right address, for a name the certificate does not hold: the
        // chain verifies, the name does not (and the certificate lists no address to fall
        // back on).
        let device = try setup.device("misnamed")
        try await device.send(setup.openTLS("e.sqlite", seed: 51, serverName: "db.example.com"))
        try await device.send("scripted E insert")
        try await device.send("write 20")
        let local = try await device.contents()
        #expect(local.objectCount > 0)

        let failure = await #expect(throws: DeviceRunner.DeviceError.self) { try await device.send("sync") }
        let message = failure?.description ?? ""
        #expect(message.contains("failedToValidateHostname") && message.contains("Couldn't find db.example.com in certificate from peer"),
                "\(message)")
        #expect(!message.contains("CERTIFICATE_VERIFY_FAILED"), "the chain should verify: \(message)")
        #expect(try await device.contents() == local, "the device lost data when its sync failed")
        #expect(try await setup.serverContents().objectCount == 0, "data reached the server for a name its certificate does not hold")
        #expect(try await setup.pushCount() == 0)
        // The handshake is the client's to refuse: the server never saw a TLS client log in.
        let overTLS = setup.serverLog().filter { $0.contains("connection authorized") && $0.contains("SSL enabled") }
        #expect(overTLS.isEmpty, "\(overTLS)")
        try await device.send("quit")

        // Nor one that asks for no name: connected to 127.0.0.1, it looks for that address in
        // the certificate, which lists none.
        let unnamed = try setup.device("unnamed")
        try await unnamed.send(setup.openTLS("e.sqlite", seed: 52, serverName: "-"))
        let unnamedFailure = await #expect(throws: DeviceRunner.DeviceError.self) { try await unnamed.send("sync") }
        let unnamedMessage = unnamedFailure?.description ?? ""
        #expect(unnamedMessage.contains("failedToValidateHostname") && unnamedMessage.contains("Couldn't find <none> in certificate from peer"),
                "\(unnamedMessage)")
        #expect(try await unnamed.contents() == local, "the device lost data when its sync failed")
        #expect(try await setup.pushCount() == 0)
        try await unnamed.send("quit")

        // Reopened with the certificate's name, the same store syncs all it has.
        let named = try setup.device("named")
        try await named.send(setup.openTLS("e.sqlite", seed: 53, serverName: PostgresCluster.tlsServerName))
        #expect(try await named.contents() == local)
        try await named.send("sync")
        let server = try await setup.serverContents()
        #expect(server.objectCount == local.objectCount)
        #expect(local.difference(from: server) == nil, "\(local.difference(from: server) ?? "")")
        #expect(try await setup.tcpSessions().allSatisfy { $0.hasPrefix("t|") })
        try await named.send("quit")
    }
}
