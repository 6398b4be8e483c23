import Foundation
import Strata
import StrataSync

// The recipe's cluster: a Unix socket in $NOTES_PG, the role and the database "notes".
let folder = ProcessInfo.processInfo.environment["NOTES_PG"] ?? "notes-pg"
let store = try Store(schema: StrataModel.schema, path: "notes.sqlite")
let server = try PostgresSyncServer(
    configuration: .init(unixSocketPath: folder + "/.s.PGSQL.5432", username: "notes", password: nil, database: "notes"),
    schema: StrataModel.schema)
let sync = try StoreSync(store: store, server: server)

try store.insert(Note(title: "Hello from \(sync.device)", updatedAt: Date()))
let report = try await sync.sync()   // push, then pull until nothing is left
print(report)                        // pushed 1 (0 refused by the server), pulled 0 (0 conflicts); 0 conflicts recorded

for conflict in try sync.conflicts(since: 0) {   // 0: all; then the last one's sequence
    print(conflict.kind, conflict.table, conflict.reason)
}

await sync.start()    // from now on: on every local commit, every NOTIFY of the server, and a timer
try await Task.sleep(for: .seconds(1))           // … the program's work …
await sync.stop()     // stops the background sync (a sync under way finishes first)
await server.close()
print("synced through", try sync.cursor())
