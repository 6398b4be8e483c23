import Foundation

// The exchange between a device and the server, as plain values: each is `Codable`, so
// that the same exchange can go through a relay service over HTTP (JSON bodies) when a
// device must not hold database credentials. ``PostgresSyncServer`` answers them directly.

/// One change of one object or link, with values as wire text (see the sync article).
public struct SyncChange: Codable, Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// A new object: `values` holds every column.
        case insert
        /// Columns of an existing object: `values` holds those that changed.
        case update
        /// The object is gone.
        case delete
        /// A many-to-many link between `link`'s two objects exists.
        case link
        /// That link is gone.
        case unlink
    }

    public var kind: Kind
    /// The entity's (or join table's) name.
    public var table: String
    /// The object's sync id (nil for links).
    public var id: UUID?
    /// Column name → wire text (nil for NULL); references hold the destination's sync id.
    public var values: [String: String?]
    /// For links: join column name → the sync id of the object it holds.
    public var link: [String: UUID]?

    /// A change.
    public init(kind: Kind, table: String, id: UUID? = nil, values: [String: String?] = [:], link: [String: UUID]? = nil) {
        self.kind = kind
        self.table = table
        self.id = id
        self.values = values
        self.link = link
    }
}

/// A device's first words to the server: who it is and which model it has.
public struct SyncHello: Codable, Hashable, Sendable {
    /// The device's id, made once per store file.
    public var device: UUID
    /// The model's name and fingerprint (see ``SyncModelVersion``).
    public var model: SyncModelVersion
    /// Every synced table with its columns: what this device reads and writes.
    public var tables: [String: [String]]

    public init(device: UUID, model: SyncModelVersion, tables: [String: [String]]) {
        self.device = device
        self.model = model
        self.tables = tables
    }
}

/// The name and fingerprint of a model version: the model's name, and a hash of its synced
/// tables and columns with their types.
public struct SyncModelVersion: Codable, Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var fingerprint: String

    public init(name: String, fingerprint: String) {
        self.name = name
        self.fingerprint = fingerprint
    }

    public var description: String { "\(name) (\(fingerprint))" }
}

/// The server's answer to ``SyncHello``.
public struct SyncWelcome: Codable, Hashable, Sendable {
    /// The server's id: a device that finds another id than the one it synced with before is
    /// talking to another server (or one restored from an older backup).
    public var server: UUID
    /// The model version the server's tables were last created or extended for.
    public var model: SyncModelVersion

    public init(server: UUID, model: SyncModelVersion) {
        self.server = server
        self.model = model
    }
}

/// What a device pushes: its changes since its last acknowledged push, once, under an id
/// that makes a retry harmless.
public struct SyncPush: Codable, Hashable, Sendable {
    /// The push's id: the server applies a push once, and answers a retry with the
    /// first answer.
    public var id: UUID
    public var device: UUID
    /// In the order the server applies them: inserts (destinations first), updates, links,
    /// unlinks, deletes.
    public var changes: [SyncChange]

    public init(id: UUID, device: UUID, changes: [SyncChange]) {
        self.id = id
        self.device = device
        self.changes = changes
    }
}

/// A change the server refused, with why and what the server holds instead.
public struct SyncRefusal: Codable, Hashable, Sendable {
    /// The index of the change in the push.
    public var index: Int
    public var change: SyncChange
    /// Why, as the server said it (a unique constraint, a missing destination, …).
    public var reason: String
    /// The object's row on the server now (nil when it has none): the device takes it.
    public var serverValues: [String: String?]?

    public init(index: Int, change: SyncChange, reason: String, serverValues: [String: String?]?) {
        self.index = index
        self.change = change
        self.reason = reason
        self.serverValues = serverValues
    }
}

/// The server's answer to a push.
public struct SyncPushResult: Codable, Hashable, Sendable {
    public var push: UUID
    /// The changes it did not apply; every other change was applied.
    public var refused: [SyncRefusal]
    /// True when this answer repeats the one given to an earlier delivery of the same push.
    public var isRepeat: Bool

    public init(push: UUID, refused: [SyncRefusal], isRepeat: Bool = false) {
        self.push = push
        self.refused = refused
        self.isRepeat = isRepeat
    }
}

/// A device asking what changed on the server after its cursor.
public struct SyncPullRequest: Codable, Hashable, Sendable {
    public var device: UUID
    /// The server's change-log position the device has applied (0 before the first pull).
    public var cursor: Int64
    /// The most log entries to answer with.
    public var limit: Int
    /// Whether the answer holds the device's own changes too (left out otherwise): a device
    /// that reads the server again from the start (``StoreSync`` does after a table of its
    /// store was rebuilt, say) takes the server's state of its own objects as well. Absent
    /// from the messages of earlier versions (false).
    public var includingOwnChanges: Bool
    /// Whether the answer may hold its inserted objects by table, in
    /// ``SyncPullResult/objects`` (each table's columns named once, each row's values in
    /// their order), rather than one ``SyncChange`` each: less to encode and decode. Absent
    /// from the messages of earlier versions (false); a server of an earlier version ignores it
    /// and answers with changes.
    public var columnar: Bool

    public init(device: UUID, cursor: Int64, limit: Int, includingOwnChanges: Bool = false, columnar: Bool = false) {
        self.device = device
        self.cursor = cursor
        self.limit = limit
        self.includingOwnChanges = includingOwnChanges
        self.columnar = columnar
    }

    private enum CodingKeys: String, CodingKey {
        case device, cursor, limit, includingOwnChanges, columnar
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        device = try container.decode(UUID.self, forKey: .device)
        cursor = try container.decode(Int64.self, forKey: .cursor)
        limit = try container.decode(Int.self, forKey: .limit)
        includingOwnChanges = try container.decodeIfPresent(Bool.self, forKey: .includingOwnChanges) ?? false
        columnar = try container.decodeIfPresent(Bool.self, forKey: .columnar) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(device, forKey: .device)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(limit, forKey: .limit)
        if includingOwnChanges { try container.encode(true, forKey: .includingOwnChanges) }
        if columnar { try container.encode(true, forKey: .columnar) }
    }
}

/// A device's request for the server's snapshot (``SyncServer/readSnapshot(batchSize:into:)``)
/// through a relay: `POST /v1/snapshot`, answered with one columnar ``SyncPullResult`` per line
/// (`application/x-ndjson`), the last with `hasMore` false.
/// A device's user is the token's; the snapshot names no device (the device's hello, before
/// any pull, bound it to the user).
public struct SyncSnapshotRequest: Codable, Hashable, Sendable {
    /// About how many objects or links each line holds (the relay may hold fewer).
    public var batchSize: Int

    public init(batchSize: Int) { self.batchSize = batchSize }
}

/// The server's changes after a cursor: the current state of every object and link that
/// changed (not each intermediate step), and the cursor to ask from next.
public struct SyncPullResult: Codable, Hashable, Sendable {
    /// Inserts (full rows: the device inserts or updates), deletes, links and unlinks. The
    /// device's own pushes are left out. With ``objects``, the changes that come after them.
    public var changes: [SyncChange]
    public var cursor: Int64
    /// True when the log holds more after `cursor`.
    public var hasMore: Bool
    /// The answer's objects by table, before ``changes`` (only when the request was
    /// ``SyncPullRequest/columnar``; nil otherwise).
    public var objects: [SyncPullObjects]?

    public init(changes: [SyncChange], cursor: Int64, hasMore: Bool, objects: [SyncPullObjects]? = nil) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.objects = objects
    }

    /// Every change of the answer, in its order: the objects' (an insert with the columns its
    /// row holds, or a delete), then ``changes``; read as the sync reads the answer.
    public var allChanges: [SyncChange] {
        guard objects != nil else { return changes }
        return PullBatch(self).changes
    }
}

/// The objects of one table in a ``SyncPullResult``: the columns once, then per object its id
/// and its row's values as wire text in the columns' order (nil: the object was deleted).
public struct SyncPullObjects: Codable, Hashable, Sendable {
    public var table: String
    public var columns: [String]
    public var ids: [UUID]
    /// Per id, its row (a value per column, nil for NULL), or nil when the object is deleted.
    public var rows: [[String?]?]

    public init(table: String, columns: [String], ids: [UUID], rows: [[String?]?]) {
        self.table = table
        self.columns = columns
        self.ids = ids
        self.rows = rows
    }
}

/// A server of record that devices push to and pull from. ``PostgresSyncServer`` is one,
/// connected to PostgreSQL directly; a relay that forwards these messages over HTTP to a
/// service holding a ``PostgresSyncServer`` is another.
public protocol SyncServer: Sendable {
    /// Checks the device's model against the server's tables (creating or extending them
    /// when allowed) and answers with the server's id.
    func hello(_ hello: SyncHello) async throws -> SyncWelcome
    /// Applies a push once.
    func push(_ push: SyncPush) async throws -> SyncPushResult
    /// Answers what changed after a cursor.
    func pull(_ request: SyncPullRequest) async throws -> SyncPullResult
    /// ``pull(_:)``'s answer as the sync applies it. The default makes it from ``pull(_:)``;
    /// ``PostgresSyncServer`` reads the rows straight into the values the store keeps.
    func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch
    /// Reads every object and link the server holds in one snapshot of it, for an empty
    /// store's first pull: `body` is given one batch of about `batchSize` objects or links
    /// at a time (awaited before the next is read; it returns false to stop), each with the
    /// log position the snapshot holds every change up to, the last one marked as such; an
    /// object's references lead to objects of its own batch or of earlier ones, where the
    /// model's references allow that order. Returns false, having called `body` never, when
    /// the server does not offer it: the default. The sync then reads the log from its start.
    func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool
    /// Signals (promptly, best effort) when the server's data changed: the sync pulls on
    /// each. Ends when the server connection is lost; the sync then calls again after a
    /// backoff.
    func changeSignals() async throws -> AsyncThrowingStream<Void, any Error>
}

extension SyncServer {
    /// ``pull(_:)``'s answer, as it came (the sync prepares the store's values from its wire
    /// text).
    public func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch {
        SyncPullBatch(try await pull(request))
    }

    /// No snapshot offered: an empty store's first pull reads the log.
    public func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
        false
    }
}

/// One answer to a pull as the sync applies it: what ``SyncServer/pullBatch(_:)`` returns.
/// Make one from a ``SyncPullResult`` (its wire text); what it holds besides is the sync's.
public struct SyncPullBatch: Sendable {
    var batch: PullBatch

    /// The batch of `result`.
    public init(_ result: SyncPullResult) { batch = PullBatch(result) }

    init(batch: PullBatch) { self.batch = batch }

    /// The changes it holds, as wire text.
    public var result: SyncPullResult { batch.result }
}
