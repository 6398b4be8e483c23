import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// A sync that cannot log in, finds no database, or lacks a privilege fails with an error
/// that says so in its description (not only in `String(reflecting:)`), naming the role, the
/// database, the table and what to grant, and never the password.
@Suite("Sync connection errors in words")
struct SyncConnectionErrorTests {
    /// The sync's error for `configuration`, after an insert to push.
    static func failure(_ configuration: PostgresConnection.Configuration, policy: PostgresSyncServer.SchemaPolicy = .createAndExtend) async throws -> any Error {
        let folder = try TemporaryDirectory()
        let server = try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema, policy: policy)
        let device = try Device(folder.path("a.sqlite"), server: server)
        defer { Task { await device.close() } }
        try await device.store.write { db in _ = try db.insert(Board(name: "Inbox")) }
        do {
            try await device.sync.sync()
        } catch {
            #expect(try await device.store.fetchAll(Board.self).map(\.name) == ["Inbox"], "nothing is given up")
            return error
        }
        throw SyncTestError("the sync succeeded")
    }

    struct SyncTestError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test("a wrong password: authentication failed for the role (28P01)")
    func wrongPassword() async throws {
        let test = try await TestServer()
        let role = "pw_" + UUID().uuidString.prefix(8).lowercased()
        try await test.psql("CREATE ROLE \(role) LOGIN PASSWORD 'right-password'")
        // This role alone logs in with a password on the cluster's socket.
        let hba = test.cluster.dataFolder.appendingPathComponent("pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("local all \(role) scram-sha-256\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        try await test.psql("SELECT pg_reload_conf()")
        var configuration = test.cluster.configuration(user: role, database: test.database)
        configuration.password = "wrong-password"
        let error = try await Self.failure(configuration)
        let typed = try #require(error as? SyncConnectionError, "\(String(reflecting: error))")
        #expect(typed.reason == .authenticationFailed(role: role))
        #expect(typed.sqlState == "28P01")
        let text = "\(error)"
        #expect(text.contains("refused the password of the role \"\(role)\""), "\(text)")
        #expect(!text.contains("wrong-password") && !String(reflecting: typed.reason).contains("wrong-password"))
        #expect(error.localizedDescription == text)
    }

    @Test("a database that does not exist (3D000)")
    func missingDatabase() async throws {
        let test = try await TestServer()
        let error = try await Self.failure(test.cluster.configuration(database: "no_such_database"))
        let typed = try #require(error as? SyncConnectionError, "\(String(reflecting: error))")
        #expect(typed.reason == .databaseDoesNotExist(database: "no_such_database"))
        #expect(typed.sqlState == "3D000")
        #expect("\(error)".contains("the database \"no_such_database\" does not exist"), "\(error)")
    }

    @Test("a role without a privilege: the object, what sync needs on it, the GRANT (42501)")
    func missingPrivilege() async throws {
        let test = try await TestServer()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        // The article's role without its grants on the entity and join tables.
        let role = try await SyncRoleTests.makeRole(
            test, statements: try SyncRoleTests.articleStatements().filter { !$0.contains("UPDATE, DELETE") })
        let error = try await Self.failure(test.cluster.configuration(user: role, database: test.database), policy: .requireExisting)
        let typed = try #require(error as? SyncConnectionError, "\(String(reflecting: error))")
        guard case .insufficientPrivilege(role, let object, "SELECT, INSERT, UPDATE, DELETE", _) = typed.reason else {
            Issue.record("\(typed.reason)")
            return
        }
        #expect(object.hasPrefix("table \""), "\(object)")
        #expect(typed.sqlState == "42501")
        #expect("\(error)".contains("GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE \""), "\(error)")
        #expect("\(error)".contains("TO \"\(role)\""), "\(error)")
    }

    @Test("the log's sequence: USAGE")
    func missingSequencePrivilege() async throws {
        let test = try await TestServer()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        let role = try await SyncRoleTests.makeRole(
            test, statements: try SyncRoleTests.articleStatements().filter { !$0.contains("SEQUENCE") })
        let error = try await Self.failure(test.cluster.configuration(user: role, database: test.database), policy: .requireExisting)
        let typed = try #require(error as? SyncConnectionError, "\(String(reflecting: error))")
        #expect(typed.reason == .insufficientPrivilege(
            role: role, object: "sequence strata_sync_log_seq_seq", privileges: "USAGE", statement: typed.statementKind))
        #expect("\(error)".contains("GRANT USAGE ON SEQUENCE strata_sync_log_seq_seq TO \"\(role)\""), "\(error)")
    }

    @Test("no server where the configuration points")
    func noServer() async throws {
        let folder = try TemporaryDirectory()
        let socket = folder.path(".s.PGSQL.5432")
        let error = try await Self.failure(.init(unixSocketPath: socket, username: "nobody", password: nil, database: "none"))
        let typed = try #require(error as? SyncConnectionError, "\(String(reflecting: error))")
        #expect(typed.reason == .connectionFailed(endpoint: "the socket \(socket)"))
        #expect("\(error)".contains("the connection to the PostgreSQL server at the socket \(socket) failed"), "\(error)")
    }
}

extension SyncConnectionError {
    /// The statement kind of an insufficient privilege, for comparisons.
    var statementKind: String? {
        if case .insufficientPrivilege(_, _, _, let statement) = reason { return statement }
        return nil
    }
}
