import Foundation
import Strata
import StrataSync

/// A ``SyncServer`` that keeps its tables in memory, for tests of the device's side (the
/// push, the pull, the applier, retries) without PostgreSQL. It answers the exchange as
/// `PostgresSyncServer` does for changes that break no rule:
///
/// - a push is applied once, in order: an insert writes the object (over the one there, if
///   any), an update writes the columns it names, a delete removes the object and its links,
///   a link or an unlink adds or removes the pair; a push seen before is answered with its recorded result
///   (`isRepeat`). An update of an object the server does not have is refused, as the
///   PostgreSQL server refuses it ("delete beats edit").
/// - a pull answers the log entries after the cursor, up to the request's limit, leaving out
///   the device's own unless it asks for them: each object the entries name as it is now
///   (an insert with every column, or a delete), then each link as it is now.
/// - every push wakes the change signals.
///
/// It checks no rule of the model: no unique value, count, reference, delete rule or value
/// check is enforced, and no access rule. Tests of those belong with the real server.
///
/// Faults, for tests: ``loseNextAnswers(_:)`` applies the next pushes and then throws
/// instead of answering, as a connection lost after the commit would.
public actor MemorySyncServer: SyncServer {
    /// An answer lost after the push was applied.
    public struct LostAnswer: Error, CustomStringConvertible {
        public var description: String { "the connection was lost before the answer (the push was applied)" }
    }

    private struct Entry {
        var sequence: Int64
        var table: String
        var object: UUID?
        var link: [String: UUID]?
        var origin: UUID
    }

    public let id: UUID
    private let joins: [String: (column: String, inverseColumn: String)]
    /// The entities in the schema's order: a pull answers their objects in it, as the
    /// PostgreSQL server does.
    private let tableOrder: [String]
    private var model: SyncModelVersion?
    private var objects: [String: [UUID: [String: String?]]] = [:]
    private var links: [String: Set<[String: UUID]>] = [:]
    private var log: [Entry] = []
    private var pushes: [UUID: SyncPushResult] = [:]
    private var signals: [UUID: AsyncThrowingStream<Void, any Error>.Continuation] = [:]
    private var answersToLose = 0

    /// How many pushes were applied (a repeated push is not counted again).
    public private(set) var appliedPushes = 0

    /// A server for the tables of `schema` (its join tables name the links' two sides).
    public init(schema: SchemaDescriptor, id: UUID = UUID()) {
        self.id = id
        var joins: [String: (String, String)] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships {
                if case .joinTable(let name, let column, let inverseColumn) = relationship.storage, joins[name] == nil {
                    joins[name] = (column, inverseColumn)
                }
            }
        }
        self.joins = joins
        tableOrder = schema.entities.map(\.name)
    }

    /// The next `count` pushes are applied, and their answers lost.
    public func loseNextAnswers(_ count: Int) { answersToLose = count }

    /// What the server's tables hold, comparable with a store's ``StoreSync/contents()``.
    public func contents() -> SyncContents {
        // Every table and join table, as a store's contents name them, empty or not.
        var result = SyncContents()
        for table in tableOrder { result.objects[table] = objects[table] ?? [:] }
        for (table, join) in joins {
            let pairs = links[table] ?? []
            result.links[table] = Set(pairs.compactMap { pair in
                guard let a = pair[join.column], let b = pair[join.inverseColumn] else { return nil }
                return "\(a.uuidString.lowercased()) \(b.uuidString.lowercased())"
            })
        }
        return result
    }

    // MARK: - SyncServer

    public func hello(_ hello: SyncHello) -> SyncWelcome {
        if model == nil { model = hello.model }
        return SyncWelcome(server: id, model: model!)
    }

    public func push(_ push: SyncPush) throws -> SyncPushResult {
        if var result = pushes[push.id] {
            result.isRepeat = true
            return result
        }
        var refused: [SyncRefusal] = []
        for (index, change) in push.changes.enumerated() {
            if let reason = apply(change) {
                refused.append(SyncRefusal(index: index, change: change, reason: reason, serverValues: nil))
            } else {
                log.append(Entry(
                    sequence: Int64(log.count + 1), table: change.table, object: change.id, link: change.link, origin: push.device))
            }
        }
        let result = SyncPushResult(push: push.id, refused: refused)
        pushes[push.id] = result
        appliedPushes += 1
        for continuation in signals.values { continuation.yield() }
        if answersToLose > 0 {
            answersToLose -= 1
            throw LostAnswer()
        }
        return result
    }

    /// Applies one change; the reason it is refused, if it is.
    private func apply(_ change: SyncChange) -> String? {
        switch change.kind {
        case .insert, .update:
            guard let id = change.id else { return "a change of an object without its id" }
            var row = objects[change.table, default: [:]][id]
            if row == nil {
                guard change.kind == .insert else { return "the object was deleted on the server" }
                row = [:]
            }
            for (column, value) in change.values { row![column] = value }
            objects[change.table, default: [:]][id] = row
        case .delete:
            guard let id = change.id else { return "a change of an object without its id" }
            objects[change.table]?[id] = nil
            // Its links go with it, as a join table's foreign keys take them on the server.
            for table in links.keys { links[table] = links[table]!.filter { !$0.values.contains(id) } }
        case .link:
            guard let link = change.link else { return "a link without its two objects" }
            links[change.table, default: []].insert(link)
        case .unlink:
            guard let link = change.link else { return "a link without its two objects" }
            links[change.table]?.remove(link)
        }
        return nil
    }

    public func pull(_ request: SyncPullRequest) -> SyncPullResult {
        let window = log.lazy.filter { $0.sequence > request.cursor }.prefix(max(1, request.limit))
        let cursor = window.last?.sequence ?? request.cursor
        var named: [String: [UUID]] = [:]
        var seen: Set<UUID> = []
        var pairs: [(table: String, link: [String: UUID])] = []
        for entry in window where request.includingOwnChanges || entry.origin != request.device {
            if let object = entry.object, seen.insert(object).inserted {
                named[entry.table, default: []].append(object)
            } else if let link = entry.link, !pairs.contains(where: { $0.table == entry.table && $0.link == link }) {
                pairs.append((entry.table, link))
            }
        }
        var changes: [SyncChange] = []
        for table in tableOrder {
            for id in named[table] ?? [] {
                if let row = objects[table]?[id] {
                    changes.append(SyncChange(kind: .insert, table: table, id: id, values: row))
                } else {
                    changes.append(SyncChange(kind: .delete, table: table, id: id))
                }
            }
        }
        for (table, link) in pairs {
            let linked = links[table]?.contains(link) ?? false
            changes.append(SyncChange(kind: linked ? .link : .unlink, table: table, link: link))
        }
        return SyncPullResult(changes: changes, cursor: cursor, hasMore: log.last.map { $0.sequence > cursor } ?? false)
    }

    public func changeSignals() -> AsyncThrowingStream<Void, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Void, any Error>.makeStream()
        let key = UUID()
        signals[key] = continuation
        continuation.onTermination = { _ in Task { await self.endSignals(key) } }
        return stream
    }

    private func endSignals(_ key: UUID) { signals[key] = nil }
}
