import Dispatch
import Foundation
import GRDB
import Testing
@testable import Strata

/// A many-to-many that is its own inverse (`Person.friends` ↔ `Person.friends`, ``SocialModel``)
/// is symmetric wherever it is read: a join row (a, b) makes b a friend of a and a a friend of
/// b, in SQL (``SQLQueryBuilder``), in memory (``ObjectGraph``), in relationship requests and
/// in results controllers; link and unlink treat both orders of a pair as one link.
@Suite("Symmetric many-to-many")
struct SymmetricRelationshipTests {
    typealias Context = QueryPropertyTests.Context

    /// A store with people a, b, c, d, e (ids 1 to 5) and the join rows `links`, as stored.
    private func store(links: [(Int64, Int64)]) throws -> Store {
        let store = try Store.inMemory(schema: Person.schema)
        try store.write { db in
            for name in ["a", "b", "c", "d", "e"] { try db.insert(Person(name: name)) }
            for (person, friend) in links {
                try db.execute(
                    sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (?, ?)", arguments: [person, friend])
            }
        }
        return store
    }

    /// The ids of the people matching `predicate` in SQLite; records an issue when the
    /// in-memory evaluation differs.
    private func matching(_ store: Store, _ predicate: PredicateNode, _ label: @autoclosure () -> String = "") throws -> [Int64] {
        let (sql, graph) = try store.read { db -> ([Int64], ObjectGraph) in
            var builder = try SQLQueryBuilder(schema: Person.schema, rootEntity: "Person")
            let query = try builder.select(SQL(sql: "\(builder.rootAlias).\"id\""), where: predicate, orderBy: [])
            return (try Int64.fetchAll(db, SQLRequest<Int64>(literal: query)), try ObjectGraph.load(db, schema: Person.schema))
        }
        let inMemory = try (graph.rows["Person"] ?? [:]).keys.sorted().filter { id in
            try PredicateEvaluator.evaluate(predicate, on: try #require(graph.subject("Person", id: id)))
        }
        #expect(sql == inMemory, "SQL and in-memory evaluation differ on \(predicate) \(label())")
        return sql
    }

    /// The names of the people matching `predicate` (typed fetch, by id), checked against the
    /// in-memory evaluation.
    private func names(_ store: Store, _ predicate: EntityPredicate<Person>) throws -> [String] {
        let people = try store.read { db in try db.fetchAll(Person.self, where: predicate) }
        #expect(try matching(store, predicate.node) == people.map(\.id.rawValue))
        return people.map(\.name)
    }

    /// The names of `id`'s friends, through the to-many request, by id.
    private func friends(_ store: Store, of id: Int64) throws -> [String] {
        try store.read { db in try db.fetchAll(Person.friends, of: Person.ID(rawValue: id)) }.map(\.name)
    }

    /// The join rows as stored.
    private func rows(_ store: Store) throws -> [[Int64]] {
        try store.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT personID, friendsID FROM Person_friends ORDER BY personID, friendsID")
                .map { [$0[0] as Int64, $0[1] as Int64] }
        }
    }

    // MARK: - Examples

    @Test("ANY, ALL, NONE, @count and the to-many request follow a link stored either way round",
          arguments: [false, true])
    func queriesFollowBothColumns(_ swapped: Bool) throws {
        // a–b, c–a, d–d (a person who is their own friend); e has none.
        let links: [(Int64, Int64)] = [(1, 2), (3, 1), (4, 4)].map { swapped ? ($0.1, $0.0) : $0 }
        let store = try store(links: links)

        #expect(try friends(store, of: 1) == ["b", "c"])
        #expect(try friends(store, of: 2) == ["a"])
        #expect(try friends(store, of: 3) == ["a"])
        #expect(try friends(store, of: 4) == ["d"], "a link to oneself counts once")
        #expect(try friends(store, of: 5) == [])

        #expect(try names(store, Person.friends.any(Person.name == "a")) == ["b", "c"])
        #expect(try names(store, Person.friends.any(Person.name == "b")) == ["a"])
        #expect(try names(store, Person.friends.any(Person.name == "d")) == ["d"])
        #expect(try names(store, Person.friends.count > 1) == ["a"])
        #expect(try names(store, Person.friends.count == 1) == ["b", "c", "d"])
        #expect(try names(store, Person.friends.count == 0) == ["e"])
        #expect(try names(store, Person.friends.all(Person.name == "a")) == ["b", "c", "e"])
        #expect(try names(store, Person.friends.none(Person.name == "a")) == ["a", "d", "e"])
        // Friends of friends: b's only friend is a, whose friends are b and c.
        #expect(try names(store, Person.friends.any(Person.friends.any(Person.name == "b"))) == ["b", "c"])

        // The same link stored in both orders (only raw SQL can do that) is still one friend.
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (?, ?)",
                           arguments: swapped ? [1, 2] : [2, 1])
        }
        #expect(try friends(store, of: 1) == ["b", "c"])
        #expect(try friends(store, of: 2) == ["a"])
        #expect(try names(store, Person.friends.count > 1) == ["a"])
        #expect(try names(store, Person.friends.count == 1) == ["b", "c", "d"])
    }

    @Test("link writes one row per pair, in either order; unlink removes it whichever way it is stored")
    func linkAndUnlink() throws {
        let store = try store(links: [])
        let (a, b, c) = (Person.ID(rawValue: 1), Person.ID(rawValue: 2), Person.ID(rawValue: 3))
        let recorder = CommitRecorder(store)

        try store.write { db in try db.link(b, Person.friends, a) }
        #expect(try rows(store) == [[2, 1]])
        recorder.reset()
        try store.write { db in
            try db.link(a, Person.friends, b)
            try db.link(b, Person.friends, a)
        }
        #expect(try rows(store) == [[2, 1]], "linking an existing pair, either way round, writes nothing")
        #expect(recorder.commits.allSatisfy { $0["Person_friends"].isEmpty })
        #expect(try friends(store, of: 1) == ["b"])
        #expect(try friends(store, of: 2) == ["a"])

        try store.write { db in
            try db.link(c, Person.friends, c)
            try db.link(c, Person.friends, c)
        }
        #expect(try rows(store) == [[2, 1], [3, 3]])
        #expect(try friends(store, of: 3) == ["c"])
        #expect(try names(store, Person.friends.count == 1) == ["a", "b", "c"])

        try store.write { db in try db.unlink(b, Person.friends, a) }
        #expect(try rows(store) == [[3, 3]], "unlink in the order the row was stored")
        try store.write { db in
            try db.link(a, Person.friends, b)
            try db.unlink(b, Person.friends, a)
        }
        #expect(try rows(store) == [[3, 3]], "unlink in the other order")
        try store.write { db in try db.unlink(c, Person.friends, c) }
        #expect(try rows(store) == [])

        // Both orders stored by raw SQL: one unlink removes both rows.
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (1, 2), (2, 1)")
            try db.unlink(a, Person.friends, b)
        }
        #expect(try rows(store) == [])
        #expect(try friends(store, of: 1) == [])
    }

    @Test("a results controller over a to-many predicate refetches when only the join table changes")
    func controllerReadsTheJoinTable() throws {
        let store = try store(links: [])
        let request = ResultsRequest<Person, NoSection>(where: Person.friends.any(Person.name == "a"))
        let plan = try ResultsQueryPlan(request: request, schema: Person.schema)
        #expect(plan.refetchTables.contains("Person_friends"))
        let controller = try ResultsController(
            store: store, request: request, deliveryQueue: DispatchQueue(label: "strata.tests.symmetric"))
        #expect(controller.snapshot.items.isEmpty)
        // The row names b first: b is a's friend, so a is b's.
        try store.write { db in try db.link(Person.ID(rawValue: 2), Person.friends, Person.ID(rawValue: 1)) }
        controller.waitForDeliveries()
        #expect(controller.snapshot.items.map(\.name) == ["b"])
        try store.write { db in try db.unlink(Person.ID(rawValue: 1), Person.friends, Person.ID(rawValue: 2)) }
        controller.waitForDeliveries()
        #expect(controller.snapshot.items.isEmpty)
    }

    // MARK: - Properties

    /// A random predicate over people and their friends, to `depth` levels of nesting.
    static func predicate(_ c: inout Context, depth: Int) -> PredicateNode {
        let name: DatabaseValue = c.pick(["a", "b", "c", "z"]).databaseValue
        let comparisons: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        switch c.int(0...(depth > 0 ? 8 : 3)) {
        case 0: return .compare(.path(["name"]), c.pick([.equal, .notEqual]), .value(name))
        case 1: return .compare(.count(["friends"]), c.pick(comparisons), .value(Int64(c.int(0...3)).databaseValue))
        case 2: return .compare(.path(["id"]), c.pick(comparisons), .value(Int64(c.int(0...6)).databaseValue))
        case 3: return .constant(c.bool())
        case 4, 5:
            return .quantified(c.pick([.any, .all, .none]), relationship: ["friends"], predicate(&c, depth: depth - 1))
        case 6: return .and([predicate(&c, depth: depth - 1), predicate(&c, depth: depth - 1)])
        case 7: return .or([predicate(&c, depth: depth - 1), predicate(&c, depth: depth - 1)])
        default: return .not(predicate(&c, depth: depth - 1))
        }
    }

    /// One random write: link, unlink (the pair picked either way round), a raw join row in
    /// the order given (possibly the second row of a pair), or a rename. Keeps `pairs` (each
    /// link as its smaller id first) up to date.
    static func randomWrite(_ db: Database, _ c: inout Context, people: [Int64], pairs: inout Set<[Int64]>) throws {
        let x = c.pick(people), y = c.pick(people)
        let (p, q) = (Person.ID(rawValue: x), Person.ID(rawValue: y))
        switch c.int(0...9) {
        case 0...3:
            try db.link(p, Person.friends, q)
            pairs.insert([x, y].sorted())
        case 4...6:
            try db.unlink(p, Person.friends, q)
            pairs.remove([x, y].sorted())
        case 7, 8:
            try db.execute(sql: "INSERT OR IGNORE INTO Person_friends (personID, friendsID) VALUES (?, ?)", arguments: [x, y])
            pairs.insert([x, y].sorted())
        default:
            try db.execute(sql: "UPDATE Person SET name = ? WHERE id = ?", arguments: [c.pick(["a", "b", "c"]), x])
        }
    }

    /// `id`'s friends according to `pairs`, by id.
    static func friends(of id: Int64, in pairs: Set<[Int64]>) -> [Int64] {
        Set(pairs.compactMap { $0[0] == id ? $0[1] : $0[1] == id ? $0[0] : nil }).sorted()
    }

    @Test("random links and unlinks: SQL, in-memory evaluation and the set of pairs agree")
    func randomLinks() throws {
        let base = QueryPropertyTests.baseSeed()
        for iteration in 0..<40 {
            let seed = base &+ UInt64(iteration)
            var c = Context(random: StoreRandom(seed: seed))
            let store = try Store.inMemory(schema: Person.schema)
            let people = try store.write { db in
                try (0..<c.int(2...5)).map { _ in try db.insert(Person(name: c.pick(["a", "b", "c"]))).id.rawValue }
            }
            var pairs: Set<[Int64]> = []
            for step in 0..<10 {
                let label = "seed \(seed) (STRATA_TEST_SEED=\(base), iteration \(iteration)), step \(step)"
                try store.write { db in
                    for _ in 0..<c.int(1...4) { try Self.randomWrite(db, &c, people: people, pairs: &pairs) }
                }
                var agree = true
                for id in people {
                    let expected = Self.friends(of: id, in: pairs)
                    let fetched = try store.read { db in
                        try db.fetchAll(Person.friends, of: Person.ID(rawValue: id)).map(\.id.rawValue)
                    }
                    #expect(fetched == expected, "friends of \(id), \(label)")
                    let counted = try matching(store, .compare(.count(["friends"]), .equal, .value(Int64(expected.count).databaseValue)), label)
                    #expect(counted.contains(id), "count of \(id)'s friends, \(label)")
                    agree = agree && fetched == expected && counted.contains(id)
                }
                for _ in 0..<8 {
                    let predicate = Self.predicate(&c, depth: 3)
                    _ = try matching(store, predicate, label)
                }
                if !agree { return }
            }
        }
    }

    /// Follows one controller: after each commit its batches replay from the shown snapshot
    /// to the new one, and it equals a fresh fetch (and, for a to-many request, the set of
    /// pairs).
    final class Follower: @unchecked Sendable {
        let store: Store
        let controller: ResultsController<Person, NoSection>
        let recorder = DeliveryRecorder<Person, NoSection>()
        let friendsOf: Int64?
        var shown: ResultsSnapshot<Person, NoSection>
        var seen = 1

        init(store: Store, request: ResultsRequest<Person, NoSection>, friendsOf: Int64? = nil) throws {
            self.store = store
            self.friendsOf = friendsOf
            controller = try ResultsController(
                store: store, request: request, deliveryQueue: DispatchQueue(label: "strata.tests.symmetric"))
            controller.checksInvariants = true
            controller.coordinate(recorder)
            controller.waitForDeliveries()
            shown = controller.snapshot
        }

        func check(_ pairs: Set<[Int64]>, _ context: String) throws -> Bool {
            controller.waitForDeliveries()
            let updates = recorder.updates
            guard replayBatches(updates[seen...], on: &shown, context) else { return false }
            seen = updates.count
            let fresh = try store.fetchAll(controller.request)
            guard controller.snapshot == shown, shown.items == fresh else {
                Issue.record("\(controller.request.predicate?.node as Any) differs from a fresh fetch \(context)\nshown: \(shown)\nfresh: \(fresh)")
                return false
            }
            if let friendsOf {
                let expected = SymmetricRelationshipTests.friends(of: friendsOf, in: pairs)
                guard shown.items.map(\.id.rawValue) == expected else {
                    Issue.record("friends of \(friendsOf): \(shown.items) instead of \(expected) \(context)")
                    return false
                }
            }
            return true
        }
    }

    @Test("results controllers over friends stay equal to a fresh fetch through random link and unlink commits")
    func controllersFollowRandomLinks() throws {
        let base = QueryPropertyTests.baseSeed()
        for iteration in 0..<12 {
            let seed = base &+ UInt64(iteration)
            var c = Context(random: StoreRandom(seed: seed))
            let store = try Store.inMemory(schema: Person.schema)
            let people = try store.write { db in
                try (0..<c.int(3...5)).map { _ in try db.insert(Person(name: c.pick(["a", "b", "c"]))).id.rawValue }
            }
            let sort = [Person.name.ascending]
            var followers = [
                try Follower(store: store, request: ResultsRequest(where: Person.friends.any(Person.name == "a"), sortedBy: sort)),
                try Follower(store: store, request: ResultsRequest(where: Person.friends.count >= 2)),
                try Follower(store: store, request: ResultsRequest(where: Person.friends.all(Person.name != "b"), sortedBy: sort)),
                try Follower(store: store, request: Store.request(Person.friends, of: Person.ID(rawValue: people[0])),
                             friendsOf: people[0]),
            ]
            for _ in 0..<2 {
                let predicate = Self.predicate(&c, depth: 2)
                followers.append(try Follower(store: store, request: ResultsRequest(where: EntityPredicate(predicate))))
            }
            var pairs: Set<[Int64]> = []
            for step in 0..<25 {
                try store.write { db in
                    for _ in 0..<c.int(1...3) { try Self.randomWrite(db, &c, people: people, pairs: &pairs) }
                }
                let label = "seed \(seed) (STRATA_TEST_SEED=\(base), iteration \(iteration)), step \(step)"
                for follower in followers {
                    if try !follower.check(pairs, label) { return }
                }
            }
        }
    }
}
