import Foundation
import GRDB
import Strata

extension StoreSync {
    /// Every synced object and link of the store, by sync id, values as wire text: what the
    /// server's tables should hold once everything is synced (for tests and diagnostics).
    public nonisolated func contents() throws -> SyncContents {
        let tables = tables
        return try store.read { db in
            let rows = LocalSyncState(tables: tables)
            var result = SyncContents()
            for entity in tables.entities { result.objects[entity.name] = try rows.liveObjects(entity, db) }
            for join in tables.joins { result.links[join.name] = try rows.liveLinks(join, db) }
            return result
        }
    }
}

/// Synced data by sync id, with values as wire text: a store's (``StoreSync/contents()``)
/// or a server's (``PostgresSyncServer/contents()``), comparable with `==`.
public struct SyncContents: Hashable, Sendable, Codable {
    /// Entity → sync id → column → wire text.
    public var objects: [String: [UUID: [String: String?]]] = [:]
    /// Join table → links, each "`a` `b`" (the two sync ids, lowercase).
    public var links: [String: Set<String>] = [:]

    public init() {}

    /// How many objects there are, in every entity.
    public var objectCount: Int { objects.values.reduce(0) { $0 + $1.count } }

    /// The first difference from `other`, in words (nil when equal).
    public func difference(from other: SyncContents) -> String? {
        for table in Set(objects.keys).union(other.objects.keys).sorted() {
            let mine = objects[table] ?? [:], theirs = other.objects[table] ?? [:]
            // Only the first difference is named: look for one before sorting anything.
            guard mine != theirs else { continue }
            for id in Set(mine.keys).union(theirs.keys).sorted(by: { $0.syncText < $1.syncText }) where mine[id] != theirs[id] {
                return "\(table) \(id): \(mine[id].map { "\($0)" } ?? "absent") vs \(theirs[id].map { "\($0)" } ?? "absent")"
            }
        }
        for table in Set(links.keys).union(other.links.keys).sorted() where links[table] != other.links[table] {
            let mine = links[table] ?? [], theirs = other.links[table] ?? []
            return "\(table): links only in the first \(mine.subtracting(theirs).sorted()), only in the second \(theirs.subtracting(mine).sorted())"
        }
        return nil
    }
}
