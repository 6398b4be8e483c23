import Foundation
import GRDB
import Logging
import Strata

/// Keeps a store in sync with a server of record: pushes what this device changed, pulls
/// what other devices and services changed, and applies it in one local transaction per
/// pull, so that live results receive it as ordinary batches.
///
/// ```swift
/// let store = try Store(schema: StrataModel.schema, path: path)
/// let server = try PostgresSyncServer(configuration: config, schema: StrataModel.schema)
/// let sync = try StoreSync(store: store, server: server)
/// await sync.start()            // push on every local commit, pull on every server change
/// ```
///
/// See <doc:SyncThroughPostgreSQL> in the StrataSync documentation for identity, conflict
/// rules and faults.
public actor StoreSync {
    /// The synced store.
    public nonisolated let store: Store
    /// This device's id, made once per store file.
    public nonisolated let device: UUID
    let server: any SyncServer
    let tables: SyncedTables
    let options: SyncOptions
    let version: SyncModelVersion
    private var welcomed = false
    private var loop: Task<Void, Never>?
    private var commitObservation: CommitObservation?
    /// One push or pull at a time (a background sync and a call of yours may overlap).
    private let gate = AsyncGate()

    /// Prepares the store file for sync (its sync tables and triggers, a sync id for every
    /// object that has none yet); nothing is sent until ``sync()`` or ``start()``.
    public init(store: Store, server: any SyncServer, options: SyncOptions = SyncOptions()) throws {
        guard store.options.recordsHistory else { throw SyncSetupError.historyNotRecorded }
        let tables = try SyncedTables(schema: store.schema, only: options.entities)
        self.store = store
        self.server = server
        self.tables = tables
        self.options = options
        self.version = PostgresSchema(tables: tables).version
        let start = try store.historyToken()
        device = try store.write(author: options.author) { db in
            try LocalSyncState.prepare(tables, db)
            if try LocalSyncState.value("pushed", db) == nil {
                // Everything before now is sent as it is (every object is new to the server).
                try LocalSyncState.set("pushed", String(start.rawValue), db)
                try LocalSyncState.set("seedLinks", "1", db)
            }
            if let text = try LocalSyncState.value("device", db), let id = SyncValue.uuid(text) { return id }
            let id = UUID()
            try LocalSyncState.set("device", id.syncText, db)
            return id
        }
    }

    // MARK: - Running

    /// Pushes this device's changes, then pulls the server's until there are none left.
    @discardableResult
    public func sync() async throws -> SyncReport {
        var report = try await push()
        let pulled = try await pull()
        report.pulledChanges = pulled.pulledChanges
        report.conflictsWhilePulling = pulled.conflictsWhilePulling
        lastError = nil
        return report
    }

    /// Whether a change of the last pull could not be applied here, so that the next pull
    /// reads the server again from the start (after the push that may settle it).
    func rescanPending() async throws -> Bool {
        try await store.read { db in try LocalSyncState.value("rescan", db) != nil }
    }

    /// Syncs now, then on every local commit, every change signal of the server, and every
    /// ``SyncOptions/pollInterval``; retries failures with a backoff. Stop with ``stop()``.
    public func start() {
        guard loop == nil else { return }
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let author = options.author
        commitObservation = store.observeCommits { changes in
            if !changes.authors.contains(author) { wake.yield() }
        }
        let server = server
        let options = options
        let listener = Task {
            var delay = options.retryDelays.lowerBound
            while !Task.isCancelled {
                do {
                    let signals = try await server.changeSignals()
                    delay = options.retryDelays.lowerBound
                    wake.yield()
                    for try await _ in signals { wake.yield() }
                } catch {}
                try? await Task.sleep(for: delay)
                delay = Self.next(delay, options.retryDelays)
            }
        }
        let timer = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: options.pollInterval)
                wake.yield()
            }
        }
        loop = Task { [weak self] in
            wake.yield()
            var delay = options.retryDelays.lowerBound
            for await _ in wakes {
                guard let self, !Task.isCancelled else { break }
                while !Task.isCancelled {
                    do {
                        try await self.sync()
                        // A pulled change this store could not apply: the next pull reads the
                        // server again, after the push that may settle it. That is now, not at
                        // the next commit, signal or timer.
                        if try await self.rescanPending() { try await self.sync() }
                        delay = options.retryDelays.lowerBound
                        break
                    } catch where Task.isCancelled {
                        break  // stopped: what the stop cut short is not the sync's failure
                    } catch {
                        options.logger.warning("background sync failed, retrying in \(delay): \(error)")
                        await self.failed(error)
                        try? await Task.sleep(for: delay)
                        delay = Self.next(delay, options.retryDelays)
                    }
                }
            }
            listener.cancel()
            timer.cancel()
        }
    }

    /// Stops what ``start()`` started (a sync under way finishes first).
    public func stop() async {
        commitObservation?.cancel()
        commitObservation = nil
        let loop = loop
        self.loop = nil
        loop?.cancel()
        await loop?.value
    }

    /// The last error of the background sync; nil before any failure and after any
    /// ``sync()`` that succeeded (the background's or yours).
    public private(set) var lastError: (any Error)?

    private func failed(_ error: any Error) { lastError = error }

    static func next(_ delay: Duration, _ range: ClosedRange<Duration>) -> Duration {
        let doubled = delay * 2
        let jitter = Double.random(in: 0.8...1.2)
        return min(range.upperBound, max(range.lowerBound, doubled * jitter))
    }

    /// The conflicts recorded after `sequence`, oldest first: all of them from 0 (the
    /// default); then pass the ``SyncConflict/sequence`` of the last one you handled (and
    /// keep it), to read only those recorded since.
    ///
    /// ```swift
    /// var seen: Int64 = 0                              // persisted by the app
    /// for conflict in try sync.conflicts(since: seen) {
    ///     print(conflict.kind, conflict.table, conflict.reason)
    ///     seen = conflict.sequence
    /// }
    /// ```
    public nonisolated func conflicts(since sequence: Int64 = 0) throws -> [SyncConflict] {
        try store.read { db in try SyncConflict.fetch(since: sequence, db) }
    }

    /// The server's log position this device has pulled through.
    public nonisolated func cursor() throws -> Int64 {
        try store.read { db in try LocalSyncState.cursor(db) }
    }

    /// The history token whose changes have been pushed (or are in the push under way):
    /// the sync no longer needs the history before it (see ``Store/pruneHistory(through:)``).
    public nonisolated func pushedToken() throws -> HistoryToken {
        try store.read { db in try LocalSyncState.pushedToken(db) }
    }

    /// The sync id of the object with local key `id` of `entity` (nil when it has none).
    public nonisolated func syncID(of entity: String, id: Int64) throws -> UUID? {
        let rows = LocalSyncState(tables: tables)
        return try store.read { db in try rows.liveSyncID(entity, id, db) }
    }

    // MARK: - Hello

    func helloIfNeeded() async throws {
        guard !welcomed else { return }
        let hello = SyncHello(device: device, model: version, tables: PostgresSchema(tables: tables).columnTypes.mapValues { Array($0.keys) })
        let welcome = try await server.hello(hello)
        let server = welcome.server.syncText
        try await store.write(author: options.author) { db in
            if let known = try LocalSyncState.value("server", db), known != server {
                throw SyncModelError.anotherServer(expected: SyncValue.uuid(known) ?? UUID(), found: welcome.server)
            }
            try LocalSyncState.set("server", server, db)
        }
        welcomed = true
    }

    // MARK: - Push

    /// Pushes what this device changed (the push under way first, after a crash or a lost
    /// answer), until nothing is left.
    @discardableResult
    public func push() async throws -> SyncReport {
        await gate.enter()
        defer { gate.leave() }
        try await helloIfNeeded()
        var report = SyncReport()
        while true {
            guard let push = try await preparePush() else { break }
            let result = try await server.push(push)
            let logger = options.logger
            logger.debug("push \(push.id): \(push.changes.count) changes, \(result.refused.count) refused")
            if logger.logLevel <= .trace {
                for change in push.changes { logger.trace("push \(change.kind) \(change.table) \(change.id?.uuidString ?? "\(change.link ?? [:])")") }
            }
            for refusal in result.refused { logger.debug("refused \(refusal.change.table) \(refusal.change.id?.uuidString ?? "-"): \(refusal.reason)") }
            try await acknowledge(push, result)
            report.pushedChanges += push.changes.count
            report.changesRefusedByServer += result.refused.count
        }
        return report
    }

    /// The push under way, or a new one with what changed since the last (nil: nothing).
    func preparePush() async throws -> SyncPush? {
        let device = device
        if let pending = try await store.read({ db in try LocalSyncState.pendingPush(db) }) {
            let changes = try JSONDecoder().decode([SyncChange].self, from: pending.body)
            return SyncPush(id: pending.id, device: device, changes: changes)
        }
        let builder = PushBuilder(tables: tables, options: options)
        let applier = PullApplier(tables: tables, options: options, store: store)
        let store = store, author = options.author
        return try await store.write(author: options.author) { db in
            // What changed, read in the transaction that reads the rows' values and records the
            // push: a local transaction committed meanwhile is in both or in neither, so that
            // it is never pushed in part (its rows' new values without the history naming its
            // other rows).
            let pushedToken = try LocalSyncState.pushedToken(db)
            var history: HistoryChanges?
            do {
                history = try store.changes(since: pushedToken, excludingAuthors: [author], db)
            } catch is HistoryPrunedError {
                history = nil  // every object is compared with its base
            } catch is HistoryTokenAheadError {
                history = nil
            }
            let now = try store.historyToken(db)
            guard let built = try builder.build(history: history, db) else {
                if let history { try LocalSyncState.set("pushed", String(history.token.rawValue), db) }
                return nil
            }
            let id = UUID(), changes = built.changes
            if built.complete {
                let token = history?.token ?? now
                try LocalSyncState.set("pushed", String(token.rawValue), db)
                try LocalSyncState.remove("seedLinks", db)
            }
            try LocalSyncState.writePush(id, body: LocalSyncState.outboxBody(changes), db)
            // The server applies the outbox's push once, whenever it arrives: from now on its
            // objects and links are the server's as far as this store is concerned (their bases
            // and agreed states move now, not at the answer). An object of the push deleted
            // here before the answer then leaves a tombstone, whose deletion is pushed after it;
            // before, it was taken for an object never pushed, and the server kept it.
            // (Deletions' tombstones stay until the answer; a refusal is settled then.)
            try builder.agree(built, applier, db)
            try LocalSyncState.set("agreedPush", SyncValue.text(of: id), db)
            return SyncPush(id: id, device: device, changes: changes)
        }
    }

    /// Records what the server did with a push: bases move to the values pushed, tombstones
    /// of pushed deletions go, and each refusal is recorded while the device takes the
    /// server's state of the object.
    func acknowledge(_ push: SyncPush, _ result: SyncPushResult) async throws {
        let applier = PullApplier(tables: tables, options: options, store: store)
        try await store.write(author: options.author) { db in
            let refused = Dictionary(result.refused.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
            // Bases already moved when the push was written (see preparePush), unless an
            // earlier version wrote the outbox; a deletion's tombstone goes only now.
            let agreed = try LocalSyncState.value("agreedPush", db) == SyncValue.text(of: push.id)
            guard !refused.isEmpty || !agreed else {
                // Nothing here changes but the state of the sync: the deletions' tombstones go.
                for change in push.changes where change.kind == .delete { try applier.applied(change, db) }
                try LocalSyncState.removePush(push.id, db)
                try LocalSyncState.remove("agreedPush", db)
                return
            }
            try applier.withSyncDeletes(db) {
                var recorded: Set<String> = []
                for (index, change) in push.changes.enumerated() {
                    if let refusal = refused[index] {
                        try applier.takeServerState(after: refusal, db)
                        if let id = change.id { recorded.insert(id.syncText) }
                    } else if change.kind == .delete || !agreed {
                        try applier.applied(change, db)
                    }
                }
                return recorded
            }
            try LocalSyncState.removePush(push.id, db)
            try LocalSyncState.remove("agreedPush", db)
        }
    }

    // MARK: - Pull

    /// How many times ``SyncOptions/pullBatchSize`` a pull from the log's beginning reads
    /// per batch after its first.
    static let initialPullBatchFactor = 4

    /// The SQLite page cache of the writer while a pull's batch is applied (at least).
    static let pullCacheBytes = 64 << 20

    /// Pulls what changed on the server after this device's cursor, and applies it in one
    /// local transaction: however many batches it takes to read, the store goes from one
    /// state the server had to a later one (each batch is read in one snapshot of the
    /// server, and the last reaches the end of the log in its snapshot; an object that
    /// changed after an earlier batch read it is in a later batch). Live results receive one
    /// batch per pull. While the pull is read, the store's other writers wait.
    @discardableResult
    public func pull() async throws -> SyncReport {
        await gate.enter()
        defer { gate.leave() }
        try await helloIfNeeded()
        // A change of an earlier pull that a rule of this store refused (an object of the
        // same unique name, created here and not pushed yet, say): the push before this pull
        // has settled that, so read the server again from the start.
        let logger = options.logger
        // The device's own objects are read again too (`rescanning`, until a pull from the start
        // has been applied), so that the server's state wins for rows whose changes no trigger
        // saw. Not while a push is under way: the server's state of its objects would be older
        // than the store's; the push goes first (``sync()``), then the pull reads again.
        try await store.write(author: options.author) { db in
            if try LocalSyncState.value("rescan", db) != nil, try LocalSyncState.pendingPush(db) == nil {
                logger.debug("reading the server again from the start")
                try LocalSyncState.remove("rescan", db)
                try LocalSyncState.set("cursor", "0", db)
                try LocalSyncState.set("rescanning", "1", db)
            }
        }
        var bulk = options.insertsInBulk
        while true {
            do {
                if let report = try await pullOnce(bulk: bulk) { return report }
                // Another pull moved the cursor meanwhile: read again from where the store is.
            } catch is PullApplier.BulkInsertRefused where bulk {
                // A rule of this store refused a batch's bulk insert: the transaction was rolled
                // back, and the pull goes again, change by change.
                bulk = false
            }
        }
    }

    /// One pull in one local transaction (see ``pull()``); nil when another pull moved the
    /// cursor first (nothing applied).
    private func pullOnce(bulk: Bool) async throws -> SyncReport? {
        let applier = PullApplier(tables: tables, options: options, store: store)
        let logger = options.logger
        let from = try cursor()
        // Whether the store has no sync id at all (an initial sync): then a batch none of
        // whose objects came in an earlier batch of this pull goes in bulk without the store
        // being searched for them (see `PullApplier.apply`).
        let rows = LocalSyncState(tables: tables)
        let (startedEmpty, includingOwn, pushing) = try await store.read { db in
            (try !rows.hasObjects(db), try LocalSyncState.value("rescanning", db) != nil, try LocalSyncState.pendingPush(db) != nil)
        }
        // A store that has never known an object, with nothing to push, reads the server's
        // snapshot of its tables where the server offers one (no log to group by object).
        let snapshot = options.readsSnapshots && bulk && from == 0 && startedEmpty && !includingOwn && !pushing
        // A pull from the log's beginning (an initial sync, a rescan) reads larger batches
        // after its first: fewer statements, each rewriting fewer pages of the sync-id index
        // (its ids are random) per object. The first stays small, so that the store starts
        // applying while the second is read.
        let batch = options.pullBatchSize
        let limit = from == 0 ? min(batch, Int.max / Self.initialPullBatchFactor) * Self.initialPullBatchFactor : batch
        // The batches are read from the server, and their new objects prepared for the bulk
        // insert, while the transaction applies the ones before.
        let handOver = BatchHandOver<(PullBatch, PullApplier.NewObjects?)>(capacity: 2)
        let server = server, device = device
        let reader = Task {
            var request = SyncPullRequest(device: device, cursor: from, limit: batch, includingOwnChanges: includingOwn)
            do {
                if snapshot {
                    let offered = try await server.readSnapshot(batchSize: limit) { answer in
                        var batch = answer.batch
                        batch.isSnapshot = true
                        return await handOver.put((batch, applier.prepare(batch)))
                    }
                    if offered {
                        handOver.finish(.success(()))
                        return
                    }
                }
                while !Task.isCancelled {
                    let result = try await server.pullBatch(request).batch
                    guard await handOver.put((result, bulk ? applier.prepare(result) : nil)) else { return }
                    if !result.hasMore { break }
                    request = SyncPullRequest(device: device, cursor: result.cursor, limit: limit, includingOwnChanges: includingOwn)
                }
                handOver.finish(.success(()))
            } catch {
                handOver.finish(.failure(error))
            }
        }
        defer {
            handOver.close()
            reader.cancel()
        }
        return try await store.write(author: options.author) { db -> SyncReport? in
            defer { handOver.close() }
            // Another pull of this store may have moved the cursor meanwhile.
            guard try LocalSyncState.cursor(db) == from else { return nil }
            // A batch dirties pages all over the sync-id index (the ids are random): with
            // SQLite's default cache (2 MB) they were spilled to the WAL and read back again and
            // again within the transaction, about four page writes per object. The cache is
            // larger while the pull is applied, then back to the store's.
            let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
            let bytes = cache < 0 ? -cache * 1_024 : cache * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4_096)
            if bytes < Self.pullCacheBytes { try db.execute(sql: "PRAGMA cache_size = -\(Self.pullCacheBytes / 1_024)") }
            defer { if bytes < Self.pullCacheBytes { try? db.execute(sql: "PRAGMA cache_size = \(cache)") } }
            let before = try LocalSyncState.lastConflict(db)
            var report = SyncReport()
            var cursor = from
            var rescan = false
            var readSnapshot = false
            var earlier: Set<UUID> = []  // the objects of this pull's batches so far, while `startedEmpty`
            while let (result, prepared) = try handOver.take() {
                let count = result.count
                if result.cursor == cursor && count == 0 { break }
                logger.debug("pull \(cursor) → \(result.cursor): \(count) changes")
                if logger.logLevel <= .trace {
                    for change in result.changes { logger.trace("pull \(change.kind) \(change.table) \(change.id?.uuidString ?? "\(change.link ?? [:])")") }
                }
                // (Every batch's objects count, also those of a batch that does not go in bulk.)
                let assumingNew: Bool
                if startedEmpty {
                    let ids = result.insertedIDs
                    assumingNew = prepared != nil && !ids.contains(where: earlier.contains)
                    earlier.formUnion(ids)
                } else {
                    assumingNew = false
                }
                var batchApplier = applier
                batchApplier.checksCounts = !result.isSnapshot
                if try batchApplier.apply(result, prepared: prepared, assumingNew: assumingNew, db) { rescan = true }
                cursor = result.cursor
                report.pulledChanges += count
                readSnapshot = readSnapshot || result.isSnapshot
            }
            // A snapshot's counts hold once its last batch is in: when a count rule of this
            // store is broken then, the pull is read again from the log, change by change.
            if readSnapshot, let broken = try applier.store.brokenCountRules(db).first {
                logger.debug("a snapshot refused in bulk, read again from the log change by change: \(broken)")
                throw PullApplier.BulkInsertRefused(error: broken)
            }
            if rescan { try LocalSyncState.set("rescan", "1", db) }
            if includingOwn { try LocalSyncState.remove("rescanning", db) }
            try LocalSyncState.set("cursor", String(cursor), db)
            report.conflictsWhilePulling = try LocalSyncState.conflictCount(after: before, db)
            return report
        }
    }
}
