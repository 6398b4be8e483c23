import Foundation
import StrataSyncFixture

func say(_ items: Any...) { FileHandle.standardOutput.write(Data((items.map { "\($0)" }.joined(separator: " ") + "\n").utf8)) }
say("starting cluster")
let cluster = try PostgresCluster.start()
defer { cluster.destroy() }
say("cluster at", cluster.socketPath)
let database = try cluster.makeDatabase()
say("db", database)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dev-\(UUID())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let store = try Store(schema: StrataModel.schema, path: folder.appendingPathComponent("a.sqlite").path)
say("store")
let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
let sync = try StoreSync(store: store, server: server)
say("sync made")
try store.write { db in
    let board = try db.insert(Board(name: "Inbox"))
    _ = try db.insert(Card(title: "x", boardID: board.id))
}
say("written")
let report = try await sync.sync()
say("synced", report)
say(try await server.contents())
