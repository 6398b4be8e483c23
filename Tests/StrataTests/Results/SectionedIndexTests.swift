import Foundation
import GRDB
import Testing
@testable import Strata

/// The sectioned index on its own, as swift-collections tests its structures: random
/// operation sequences (seeded; the seed is in every failure), the index's invariants checked
/// after every mutation, and its whole content compared after every step with a plain
/// reference — here SQLite itself: the same rows in an in-memory table, read with the
/// `ORDER BY` a fresh fetch would use. Keys mix NULL, integers, reals, text and blobs, so
/// the ordering of every storage class is exercised.
@Suite("Sectioned index, alone")
struct SectionedIndexTests {
    /// A keyed index over `(k, s)`: sections by `k`, items by `s`, ties by id.
    struct Model {
        var index: SectionedIndex<Int, FullIndexKeys>
        let reference: DatabaseQueue
        let sectionDescending: Bool
        let itemDescending: Bool

        init(sectionDescending: Bool, itemDescending: Bool) throws {
            index = SectionedIndex(
                kind: .key(path: ["k"], descending: sectionDescending, firstLetter: false), itemDescending: [itemDescending])
            reference = try DatabaseQueue()
            try reference.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, s)") }
            self.sectionDescending = sectionDescending
            self.itemDescending = itemDescending
        }

        static func keys(_ k: Int64, _ s: DatabaseValue) -> IndexKeys {
            IndexKeys(sort: [s], key: k.databaseValue, keyOrder: k.databaseValue)
        }

        mutating func insert(_ id: Int64, k: Int64, s: DatabaseValue) throws {
            _ = try index.insert(id, Self.keys(k, s))
            try reference.write { db in try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [id, k, s]) }
        }

        mutating func remove(_ id: Int64) throws {
            _ = try index.remove(id)
            try reference.write { db in try db.execute(sql: "DELETE FROM t WHERE id = ?", arguments: [id]) }
        }

        mutating func replaceInBulk(gone: Set<Int64>, fetched: [(id: Int64, k: Int64, s: DatabaseValue)]) throws {
            _ = try index.replaceInBulk(
                gone: gone, fetched: fetched.map { ($0.id, Self.keys($0.k, $0.s)) }, refetched: Set(fetched.map(\.id)),
                parallelMinimum: 8)
            try reference.write { db in
                for id in gone { try db.execute(sql: "DELETE FROM t WHERE id = ?", arguments: [id]) }
                for row in fetched {
                    try db.execute(sql: "INSERT OR REPLACE INTO t VALUES (?, ?, ?)", arguments: [row.id, row.k, row.s])
                }
            }
        }

        /// The sections (by key) and their ids, as SQLite orders them.
        func expected() throws -> [(key: Int64, ids: [Int64])] {
            let order = "k \(sectionDescending ? "DESC" : "ASC"), s \(itemDescending ? "DESC" : "ASC"), id"
            let rows = try reference.read { db in try GRDB.Row.fetchAll(db, sql: "SELECT k, id FROM t ORDER BY \(order)") }
            var result: [(key: Int64, ids: [Int64])] = []
            for row in rows {
                let k: Int64 = row["k"], id: Int64 = row["id"]
                if result.last?.key == k { result[result.count - 1].ids.append(id) } else { result.append((k, [id])) }
            }
            return result
        }

        func check(_ context: @autoclosure () -> String) throws {
            index._checkInvariants()
            let actual = zip(index.sections.keys, index.sections.values).map { id, section -> (key: Int64?, ids: [Int64]) in
                guard case .key(let value) = id else { return (nil, Array(section.items)) }
                return (Int64.fromDatabaseValue(value), Array(section.items))
            }
            let expected = try expected()
            let same = actual.count == expected.count && zip(actual, expected).allSatisfy { $0.key == $1.key && $0.ids == $1.ids }
            #expect(same, "\(context()): index \(actual.map { "\($0.key ?? -1):\($0.ids)" }) vs SQLite \(expected.map { "\($0.key):\($0.ids)" })")
            #expect(index.count == expected.reduce(0) { $0 + $1.ids.count })
            for (key, ids) in expected {
                for (position, id) in ids.enumerated() {
                    let place = try index.place(of: id)
                    #expect(place?.index == position && place?.section == .key(key.databaseValue), "\(context()): place of \(id)")
                }
            }
        }
    }

    static func randomValue(_ random: inout SeededGenerator) -> DatabaseValue {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: .null
        case 1, 2: Int64.random(in: -3...3, using: &random).databaseValue
        case 3: (Double(Int.random(in: -6...6, using: &random)) / 2).databaseValue
        case 4: ["", "a", "B", "b", "é", "e\u{301}"].randomElement(using: &random)!.databaseValue
        default: Data([UInt8.random(in: 0...2, using: &random)]).databaseValue
        }
    }

    @Test("random inserts, removals, updates and bulk replacements match SQLite's ORDER BY", arguments: [
        (false, false), (true, false), (false, true), (true, true),
    ])
    func randomOperations(_ directions: (sectionDescending: Bool, itemDescending: Bool)) throws {
        let seed = UInt64.random(in: 1...1_000_000)
        var random = SeededGenerator(seed: seed)
        var model = try Model(sectionDescending: directions.sectionDescending, itemDescending: directions.itemDescending)
        var present: Set<Int64> = []
        var nextID: Int64 = 1
        for step in 0..<400 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let id = nextID
                nextID += 1
                try model.insert(id, k: Int64.random(in: 0..<4, using: &random), s: Self.randomValue(&random))
                present.insert(id)
            case 4, 5:
                guard let id = present.randomElement(using: &random) else { continue }
                try model.remove(id)
                present.remove(id)
            case 6, 7:
                // An update: removed, then placed again with new keys (what a commit does).
                guard let id = present.randomElement(using: &random) else { continue }
                try model.remove(id)
                try model.insert(id, k: Int64.random(in: 0..<4, using: &random), s: Self.randomValue(&random))
            default:
                // A bulk commit: some rows gone, some re-read (kept or new).
                let gone = Set(present.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)))
                var fetched: [(id: Int64, k: Int64, s: DatabaseValue)] = []
                for id in gone where Bool.random(using: &random) {
                    fetched.append((id, Int64.random(in: 0..<4, using: &random), Self.randomValue(&random)))
                }
                for _ in 0..<Int.random(in: 0...4, using: &random) {
                    fetched.append((nextID, Int64.random(in: 0..<4, using: &random), Self.randomValue(&random)))
                    nextID += 1
                }
                try model.replaceInBulk(gone: gone.union(fetched.map(\.id)), fetched: fetched)
                present.subtract(gone)
                present.formUnion(fetched.map(\.id))
            }
            try model.check(context)
        }
    }

    @Test("removing an id the index does not hold, and inserting into an emptied keyed section")
    func edges() throws {
        var model = try Model(sectionDescending: false, itemDescending: false)
        try model.remove(42)
        try model.check("removing an unknown id")
        try model.insert(1, k: 1, s: .null)
        try model.remove(1)
        #expect(model.index.sections.isEmpty, "a keyed section goes with its last item")
        try model.insert(2, k: 1, s: "x".databaseValue)
        try model.check("a section made again")
    }

    /// The order check of the invariants, on a compact index: it reads both items' keys (as
    /// the engine does while it applies a commit) and says whether the first precedes the
    /// second, ties by id, in either direction; without a reader it cannot tell.
    @Test func aCompactIndexChecksTheOrderWithTheKeysItReads() {
        var keys = CompactIndexKeys()
        let values: [Int64: DatabaseValue] = [1: 5.databaseValue, 2: 3.databaseValue, 3: 3.databaseValue]
        #expect(keys._inOrder(1, 2, descending: [false]))  // no reader: nothing to tell by
        keys.keyReader = { id in [values[id] ?? .null] }
        #expect(keys._inOrder(2, 1, descending: [false]))
        #expect(!keys._inOrder(1, 2, descending: [false]))
        #expect(keys._inOrder(1, 2, descending: [true]))
        #expect(!keys._inOrder(2, 1, descending: [true]))
        // Equal keys: by id, whatever the direction.
        #expect(keys._inOrder(2, 3, descending: [false]) && keys._inOrder(2, 3, descending: [true]))
        #expect(!keys._inOrder(3, 2, descending: [false]) && !keys._inOrder(3, 2, descending: [true]))
        #expect(!keys._inOrder(2, 2, descending: [false]))
    }

    /// The compact index of batched loading keeps no keys: its searches read them from the
    /// database (here the reference table, in the state after each operation, as the engine
    /// reads them in the commit's state) and a removal finds the item by a scan.
    @Test("a compact index (keys read from the database) matches SQLite's ORDER BY", arguments: [
        (false, false), (true, true),
    ])
    func randomOperationsOnACompactIndex(_ directions: (sectionDescending: Bool, itemDescending: Bool)) throws {
        let seed = UInt64.random(in: 1...1_000_000)
        var random = SeededGenerator(seed: seed)
        var index = SectionedIndex<Int, CompactIndexKeys>(
            kind: .key(path: ["k"], descending: directions.sectionDescending, firstLetter: false),
            itemDescending: [directions.itemDescending])
        let reference = try DatabaseQueue()
        try reference.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, s)") }
        index.keyReader = { id in
            try reference.read { db in [try DatabaseValue.fetchOne(db, sql: "SELECT s FROM t WHERE id = ?", arguments: [id]) ?? .null] }
        }
        var present: Set<Int64> = []
        var nextID: Int64 = 1
        func insert(_ id: Int64) throws {
            let k = Int64.random(in: 0..<4, using: &random), s = Self.randomValue(&random)
            try reference.write { db in try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [id, k, s]) }
            _ = try index.insert(id, Model.keys(k, s))
        }
        // A removal may come with a hint of the item's place (a user edit's row): right,
        // at another index, or in another section; the result must not depend on it.
        func remove(_ id: Int64) throws {
            let place = try #require(try index.place(of: id))
            let sections = Array(index.sections.keys)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: index.placeHints[id] = (place.section, place.index)
            case 1: index.placeHints[id] = (place.section, Int.random(in: -1...index.count + 1, using: &random))
            case 2: index.placeHints[id] = (sections.randomElement(using: &random)!, place.index)
            default: break
            }
            let removal = try index.remove(id)
            index.placeHints.removeAll()
            #expect(removal?.section == place.section && removal?.index == place.index, "seed \(seed): removal of \(id)")
            try reference.write { db in try db.execute(sql: "DELETE FROM t WHERE id = ?", arguments: [id]) }
        }
        for step in 0..<300 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                try insert(nextID)
                present.insert(nextID)
                nextID += 1
            case 5, 6:
                guard let id = present.randomElement(using: &random) else { continue }
                try remove(id)
                present.remove(id)
            default:
                guard let id = present.randomElement(using: &random) else { continue }
                try remove(id)
                try insert(id)
            }
            index._checkInvariants()
            let order = "k \(directions.sectionDescending ? "DESC" : "ASC"), s \(directions.itemDescending ? "DESC" : "ASC"), id"
            let rows = try reference.read { db in try GRDB.Row.fetchAll(db, sql: "SELECT k, id FROM t ORDER BY \(order)") }
            var expected: [[Int64]] = []
            var lastKey: Int64?
            for row in rows {
                let k: Int64 = row["k"], id: Int64 = row["id"]
                if lastKey == k { expected[expected.count - 1].append(id) } else { expected.append([id]) }
                lastKey = k
            }
            let actual = index.sections.values.map { Array($0.items) }
            #expect(actual == expected, "seed \(seed), step \(step)")
            for ids in expected {
                for (position, id) in ids.enumerated() {
                    #expect(try index.place(of: id)?.index == position, "seed \(seed), step \(step): place of \(id)")
                }
            }
            if actual != expected { return }
        }
    }
}
