import Foundation
import Logging
import NIOCore
import PostgresNIO
import Strata

/// An empty store's first pull read as one snapshot of the tables (see
/// ``SyncServer/readSnapshot(batchSize:into:)``).
extension PostgresSyncServer {
    /// Reads every object and link of the synced tables in one snapshot of the database (a
    /// `REPEATABLE READ` transaction), table by table in the order of their references, a
    /// batch of `batchSize` rows at a time through a cursor: no log is read but its last
    /// position, which every batch carries. The snapshot holds every transaction up to that
    /// position and none after it, as the log's positions are handed out in commit order.
    ///
    /// The snapshot takes as long as `body` takes with its batches, so no deadline holds the
    /// whole of it: each statement must be answered within `requestTimeout` (its connection
    /// is closed otherwise, and this fails with ``SyncTimeoutError``).
    public func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        try await readSnapshot(batchSize: batchSize, user: nil, into: body)
        return true
    }

    /// ``readSnapshot(batchSize:into:)`` for `user` (a relay's device): where the model declares
    /// per-user data, only the objects of the user's data, and the links between two of them.
    package func readSnapshot(batchSize: Int, user: String?, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws {
        let size = max(1, batchSize)
        let timeout = requestTimeout
        try await race(timeout: nil) {
            try await self.readSnapshot(size, user: user, timeout: timeout, body)
        }
    }

    private func readSnapshot(
        _ size: Int, user: String?, timeout: Duration, _ body: @escaping @Sendable (SyncPullBatch) async -> Bool
    ) async throws {
        let access = schema.access
        let filters = user != nil && access.isDeclared
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            let logger = self.logger
            @discardableResult
            func run(_ sql: String) async throws -> [PostgresRow] {
                try await connection.run(PostgresQuery(unsafeSQL: sql), logger: logger, within: timeout)
            }
            if let user, filters {
                try await connection.run(PostgresQuery(unsafeSQL: ServerAccess.setUser, binds: binds(user)), logger: logger, within: timeout)
            }
            let cursor = try await run("SELECT coalesce(max(seq), 0)::int8 FROM strata_sync_log").first?.decode(Int64.self) ?? 0
            var objects: [PullBatch.Objects] = []
            var links: [SyncChange] = []
            var count = 0
            // Hands the batch read so far to `body`: false when it wants no more.
            func handOver(last: Bool) async -> Bool {
                let batch = PullBatch(objects: objects, links: links, cursor: cursor, hasMore: !last)
                objects = []
                links = []
                count = 0
                return await body(SyncPullBatch(batch: batch))
            }
            // Reads `select`'s rows through a cursor, at most a batch's room at a time, handing
            // each to `read`; false when `body` wants no more.
            func readAll(_ select: String, _ read: ([PostgresRow]) throws -> Void) async throws -> Bool {
                try await run("DECLARE strata_snapshot NO SCROLL CURSOR FOR \(select)")
                while true {
                    let room = size - count
                    let rows = try await run("FETCH FORWARD \(room) FROM strata_snapshot")
                    try read(rows)
                    count += rows.count
                    if count >= size, await !handOver(last: false) { return false }
                    if rows.count < room { break }
                }
                try await run("CLOSE strata_snapshot")
                return true
            }
            let entities = Dictionary(uniqueKeysWithValues: schema.tables.entities.map { ($0.name, $0) })
            for name in schema.tables.dependencyOrder {
                guard let entity = entities[name] else { continue }
                let list = Self.selectList(of: entity, key: "t.\(quoted(entity.primaryKey))", exists: "true")
                let visible = filters ? " WHERE \(access.visible(entity.name, "t"))" : ""
                let going = try await readAll("SELECT \(list) FROM \(quoted(entity.name)) t\(visible)") { rows in
                    let read = try Self.objects(of: entity, rows, ordered: false)
                    if !read.ids.isEmpty { objects.append(read) }
                }
                if !going { return }
            }
            for join in schema.tables.joins {
                let visible =
                    filters ? " WHERE \(access.linkVisible(join, a: "j.\(quoted(join.column))", b: "j.\(quoted(join.inverseColumn))"))" : ""
                let going = try await readAll(
                    "SELECT j.\(quoted(join.column)), j.\(quoted(join.inverseColumn)) FROM \(quoted(join.name)) j\(visible)"
                ) { rows in
                    for (a, b) in try rows.decode((UUID, UUID).self) {
                        links.append(SyncChange(kind: .link, table: join.name, link: [join.column: a, join.inverseColumn: b]))
                    }
                }
                if !going { return }
            }
            _ = await handOver(last: true)
        }
    }
}

extension PostgresConnection {
    /// ``run(_:logger:)``, the connection closed when `query` is not answered within `timeout`
    /// (and then ``SyncTimeoutError`` thrown).
    ///
    /// The deadline is a task scheduled on the connection's event loop and cancelled with the
    /// answer: a snapshot runs a statement per batch, and a sleeping task raced against each
    /// (as before) was cancelled at once but kept until its deadline by the runtime's timer
    /// queue, a minute of memory for every statement of every snapshot.
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger, within timeout: Duration) async throws -> [PostgresRow] {
        let expired = Locked(false)
        let deadline = eventLoop.scheduleTask(in: TimeAmount(timeout)) { [self] in
            expired.withLock { $0 = true }
            let closing: EventLoopFuture<Void> = close()
            closing.whenComplete { _ in withExtendedLifetime(self) {} }
        }
        defer { deadline.cancel() }
        do {
            let rows = try await run(query, logger: logger)
            if expired.withLock({ $0 }) { throw SyncTimeoutError(timeout: timeout) }
            return rows
        } catch {
            if expired.withLock({ $0 }) { throw SyncTimeoutError(timeout: timeout) }
            throw error
        }
    }
}
