import Foundation
import StrataTestSupport

extension PostgresCluster {
    /// ``startBlocking()`` from a test: `initdb` and `pg_ctl` run off the cooperative pool.
    public static func start() async throws -> PostgresCluster {
        try await offThePool { try PostgresCluster.startBlocking() }
    }

    /// ``startServerBlocking()`` off the cooperative pool.
    public func startServer() async throws {
        try await offThePool { try self.startServerBlocking() }
    }

    /// ``stopBlocking(mode:)`` off the cooperative pool.
    public func stop(mode: String = "fast") async throws {
        try await offThePool { try self.stopBlocking(mode: mode) }
    }

    /// ``restartBlocking()`` off the cooperative pool.
    public func restart() async throws {
        try await offThePool { try self.restartBlocking() }
    }

    /// ``makeDatabaseBlocking()`` off the cooperative pool.
    public func makeDatabase() async throws -> String {
        try await offThePool { try self.makeDatabaseBlocking() }
    }

    /// ``psqlBlocking(_:user:database:)`` off the cooperative pool.
    @discardableResult
    public func psql(_ sql: String, user: String? = nil, database: String? = nil) async throws -> String {
        try await offThePool { try self.psqlBlocking(sql, user: user, database: database) }
    }
}

extension PostgresCluster {
    /// ``startTLSBlocking()`` off the cooperative pool.
    public static func startTLS() async throws -> PostgresCluster {
        try await offThePool { try PostgresCluster.startTLSBlocking() }
    }
}
