// The demo's private PostgreSQL cluster (the sync tests' fixture), apart from the demo's
// model: the fixture's module has a model of its own.
import StrataSyncFixture

/// A private cluster with one database, reached over its Unix socket.
struct DemoCluster: Sendable {
    let socketPath: String
    let user: String
    let database: String
    let destroy: @Sendable () -> Void

    static func start() throws -> DemoCluster {
        let cluster = try PostgresCluster.startBlocking()
        let database = try cluster.makeDatabaseBlocking()
        return DemoCluster(socketPath: cluster.socketPath, user: cluster.user, database: database) { cluster.destroy() }
    }
}
