import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Store delete rules")
struct DeleteRuleTests {
    /// Parent 1 with children 1 and 2; parent 2 with child 3.
    private func seedOneToMany(_ store: Store) throws {
        try store.write { db in
            try db.execute(sql: "INSERT INTO Parent (id, name) VALUES (1, 'p1'), (2, 'p2')")
            try db.execute(sql: "INSERT INTO Child (id, name, parentID) VALUES (1, 'c1', 1), (2, 'c2', 1), (3, 'c3', 2)")
        }
    }

    /// Left 1 linked to rights 1 and 2; left 2 linked to right 2.
    private func seedManyToMany(_ store: Store) throws {
        try store.write { db in
            try db.execute(sql: "INSERT INTO Left (id, name) VALUES (1, 'l1'), (2, 'l2')")
            try db.execute(sql: "INSERT INTO Right (id, name) VALUES (1, 'r1'), (2, 'r2')")
            try db.execute(sql: "INSERT INTO Left_rights (leftID, rightID) VALUES (1, 1), (1, 2), (2, 2)")
        }
    }

    @Test("to-many rule, deleting the source", arguments: DeleteRule.allCases)
    func toManyRule(_ rule: DeleteRule) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: RulesModel.schema(children: rule), path: directory.path("rules.sqlite"))
        try seedOneToMany(store)
        let recorder = CommitRecorder(store)
        let deletion = Result { try store.write { db in try db.execute(sql: "DELETE FROM Parent WHERE id = 1") } }
        let (parents, children, parentIDs) = try store.read { db in
            (try db.ids("Parent"), try db.ids("Child"), try Int64?.fetchAll(db, sql: "SELECT parentID FROM Child ORDER BY id"))
        }
        switch rule {
        case .nullify:
            #expect(parents == [2])
            #expect(children == [1, 2, 3])
            #expect(parentIDs == [nil, nil, 2])
            #expect(recorder.commits.count == 1)
            #expect(recorder.commits.first?["Parent"].deleted == [1])
            #expect(recorder.commits.first?["Child"].updated == [1, 2])
            #expect(recorder.commits.first?["Child"].updatedColumns.contains("parentID") == true)
        case .cascade:
            #expect(parents == [2])
            #expect(children == [3])
            #expect(recorder.commits.first?["Parent"].deleted == [1])
            #expect(recorder.commits.first?["Child"].deleted == [1, 2])
        case .deny:
            #expect(throws: DeleteDeniedError(entity: "Parent", relationship: "children")) { try deletion.get() }
            #expect(parents == [1, 2])
            #expect(children == [1, 2, 3])
            #expect(parentIDs == [1, 1, 2])
            #expect(recorder.commits.isEmpty)
        case .noAction:
            #expect(parents == [2])
            #expect(children == [1, 2, 3])
            #expect(parentIDs == [1, 1, 2], "references dangle")
            #expect(recorder.commits.first?.tables.keys.sorted() == ["Parent"])
        }
        if rule != .deny { try deletion.get() }
    }

    @Test("to-one rule, deleting the source", arguments: DeleteRule.allCases)
    func toOneRule(_ rule: DeleteRule) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: RulesModel.schema(parent: rule), path: directory.path("rules.sqlite"))
        try seedOneToMany(store)
        let recorder = CommitRecorder(store)
        let deletion = Result { try store.write { db in try db.execute(sql: "DELETE FROM Child WHERE id = 1") } }
        let (parents, children, parentIDs) = try store.read { db in
            (try db.ids("Parent"), try db.ids("Child"), try Int64?.fetchAll(db, sql: "SELECT parentID FROM Child ORDER BY id"))
        }
        switch rule {
        case .nullify, .noAction:
            #expect(parents == [1, 2])
            #expect(children == [2, 3])
            #expect(recorder.commits.first?.tables.keys.sorted() == ["Child"])
        case .cascade:
            // Parent 1 goes too; its own rule (nullify) then releases child 2.
            #expect(parents == [2])
            #expect(children == [2, 3])
            #expect(parentIDs == [nil, 2])
            #expect(recorder.commits.first?["Parent"].deleted == [1])
            #expect(recorder.commits.first?["Child"].deleted == [1])
            #expect(recorder.commits.first?["Child"].updated == [2])
        case .deny:
            #expect(throws: DeleteDeniedError(entity: "Child", relationship: "parent")) { try deletion.get() }
            #expect(parents == [1, 2])
            #expect(children == [1, 2, 3])
            #expect(recorder.commits.isEmpty)
        }
        if rule != .deny { try deletion.get() }
    }

    @Test("to-one deny allows the delete once the relationship is nil")
    func toOneDenyWhenNil() throws {
        let store = try Store.inMemory(schema: RulesModel.schema(parent: .deny))
        try seedOneToMany(store)
        try store.write { db in
            try db.execute(sql: "UPDATE Child SET parentID = NULL WHERE id = 1")
            try db.execute(sql: "DELETE FROM Child WHERE id = 1")
        }
        let children = try store.read { db in try db.ids("Child") }
        #expect(children == [2, 3])
    }

    @Test("many-to-many rule, both directions", arguments: DeleteRule.allCases, [false, true])
    func manyToManyRule(_ rule: DeleteRule, fromRight: Bool) throws {
        let directory = try TemporaryDirectory()
        let schema = fromRight ? RulesModel.schema(lefts: rule) : RulesModel.schema(rights: rule)
        let store = try Store(schema: schema, path: directory.path("rules.sqlite"))
        try seedManyToMany(store)
        let recorder = CommitRecorder(store)
        // Delete left 1 (linked to rights 1, 2), or right 2 (linked to lefts 1, 2).
        let (source, other, sourceID) = fromRight ? ("Right", "Left", 2) : ("Left", "Right", 1)
        let deletion = Result { try store.write { db in try db.execute(sql: "DELETE FROM \(source) WHERE id = \(sourceID)") } }
        let sources = try store.read { db in try db.ids(source) }
        let others = try store.read { db in try db.ids(other) }
        let links = try store.read { db in try db.links() }
        let relationship = fromRight ? "lefts" : "rights"
        switch rule {
        case .nullify:
            #expect(sources == (fromRight ? [1] : [2]))
            #expect(others == [1, 2])
            #expect(links == (fromRight ? [[1, 1]] : [[2, 2]]))
            #expect(recorder.commits.first?["Left_rights"].deleted.count == 2)
        case .cascade:
            #expect(sources == (fromRight ? [1] : [2]))
            #expect(others == [], "both destinations deleted")
            #expect(links == [])
            #expect(recorder.commits.first?[other].deleted == [1, 2])
            #expect(recorder.commits.first?["Left_rights"].deleted.count == 3)
        case .deny:
            #expect(throws: DeleteDeniedError(entity: source, relationship: relationship)) { try deletion.get() }
            #expect(sources == [1, 2])
            #expect(others == [1, 2])
            #expect(links == [[1, 1], [1, 2], [2, 2]])
            #expect(recorder.commits.isEmpty)
        case .noAction:
            #expect(sources == (fromRight ? [1] : [2]))
            #expect(others == [1, 2])
            #expect(links == [[1, 1], [1, 2], [2, 2]], "join rows dangle")
        }
        if rule != .deny { try deletion.get() }
    }

    @Test("deny inside a cascade rolls back the whole transaction")
    func denyInsideCascade() throws {
        // Deleting left 1 cascades to rights 1 and 2; right 2 is still linked to left 2, and
        // Right.lefts has the deny rule.
        let store = try Store.inMemory(schema: RulesModel.schema(rights: .cascade, lefts: .deny))
        try seedOneToMany(store)
        try seedManyToMany(store)
        let recorder = CommitRecorder(store)
        #expect(throws: DeleteDeniedError(entity: "Right", relationship: "lefts")) {
            try store.write { db in
                try db.execute(sql: "DELETE FROM Parent WHERE id = 2")  // allowed, but rolled back with the rest
                try db.execute(sql: "DELETE FROM Left WHERE id = 1")
            }
        }
        let state = try store.read { db in
            [try db.ids("Parent"), try db.ids("Child"), try db.ids("Left"), try db.ids("Right"),
             [Int64(try db.count("Left_rights"))]]
        }
        #expect(state == [[1, 2], [1, 2, 3], [1, 2], [1, 2], [3]])
        #expect(recorder.commits.isEmpty)

        // Once right 2 is unlinked from left 2, the cascade goes through.
        try store.write { db in try db.execute(sql: "DELETE FROM Left_rights WHERE leftID = 2") }
        try store.write { db in try db.execute(sql: "DELETE FROM Left WHERE id = 1") }
        let rights = try store.read { db in try db.ids("Right") }
        #expect(rights == [])
    }

    @Test("notes fixture: deleting a notebook cascades to notes and their tag links")
    func notebookCascade() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"))
        let (notebook, tag) = try store.write { db in
            let notebook = try db.insert(Notebook(name: "Work"))
            let other = try db.insert(Notebook(name: "Home"))
            let tag = try db.insert(Tag(name: "urgent"))
            for index in 0..<3 {
                let note = try db.insert(Note(title: "n\(index)", updatedAt: Date(), notebookID: index < 2 ? notebook.id : other.id))
                try db.link(note.id, Note.tags, tag.id)
            }
            return (notebook, tag)
        }
        let recorder = CommitRecorder(store)
        try store.delete(notebook)
        let commit = try #require(recorder.commits.first)
        #expect(commit["Notebook"].deleted == [notebook.id.rawValue])
        #expect(commit["Note"].deleted == [1, 2])
        #expect(commit["Note_tags"].deleted.count == 2)
        #expect(commit["Tag"].isEmpty)
        let titles = try store.read { db in try db.fetchAll(Note.self).map(\.title) }
        let tagged = try store.read { db in try db.fetchAll(Tag.notes, of: tag.id).map(\.title) }
        #expect(titles == ["n2"])
        #expect(tagged == ["n2"])
    }

    // MARK: - Refusals the caller catches

    @Test("a deny refusal caught inside the write still fails the whole transaction")
    func caughtDenyFailsTheTransaction() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: RulesModel.schema(children: .deny, rights: .cascade, lefts: .deny),
                              path: directory.path("rules.sqlite"))
        try seedOneToMany(store)
        try seedManyToMany(store)
        let recorder = CommitRecorder(store)
        let caught = LockedValue<[DeleteDeniedError?]>([])
        #expect(throws: DeleteDeniedError(entity: "Parent", relationship: "children")) {
            try store.write { db in
                try db.execute(sql: "INSERT INTO Parent (id, name) VALUES (3, 'p3')")
                do {
                    try db.execute(sql: "DELETE FROM Parent WHERE id = 1")
                } catch {
                    caught.withLock { $0.append(DeleteDeniedError(error)) }
                }
                // Refused deep inside a cascade (Right.lefts), and swallowed.
                do {
                    try db.execute(sql: "DELETE FROM Left WHERE id = 1")
                } catch {
                    caught.withLock { $0.append(DeleteDeniedError(error)) }
                }
                try db.execute(sql: "UPDATE Child SET name = 'changed'")
            }
        }
        #expect(caught.withLock { $0 } == [
            DeleteDeniedError(entity: "Parent", relationship: "children"),
            DeleteDeniedError(entity: "Right", relationship: "lefts"),
        ])
        let state = try store.read { db in
            [try db.ids("Parent"), try db.ids("Left"), try db.ids("Right"),
             try String.fetchAll(db, sql: "SELECT name FROM Child ORDER BY id").map { Int64($0.count) }]
        }
        #expect(state == [[1, 2], [1, 2], [1, 2], [2, 2, 2]])
        #expect(recorder.commits.isEmpty)

        // The next transaction starts afresh.
        try store.write { db in try db.execute(sql: "INSERT INTO Parent (id, name) VALUES (3, 'p3')") }
        #expect(try store.read { db in try db.ids("Parent") } == [1, 2, 3])
    }

    @Test("the asynchronous write fails on a caught deny refusal too")
    func caughtDenyFailsTheAsyncTransaction() async throws {
        let store = try Store.inMemory(schema: RulesModel.schema(children: .deny))
        try seedOneToMany(store)
        await #expect(throws: DeleteDeniedError(entity: "Parent", relationship: "children")) {
            try await store.write { db in
                try db.execute(sql: "INSERT INTO Parent (id, name) VALUES (3, 'p3')")
                try? db.execute(sql: "DELETE FROM Parent WHERE id = 1")
            }
        }
        try await store.write { db in try db.execute(sql: "INSERT INTO Parent (id, name) VALUES (4, 'p4')") }
        #expect(try await store.read { db in try db.ids("Parent") } == [1, 2, 4])
    }

    /// The notes model with `deny` on Note.tags, in a file store, watched by a results
    /// controller: notebook "Work" with notes "a" and "b" (tagged), and note "c". Deleting
    /// "Work" cascades to its notes and is refused at "b", after SQLite's update hook
    /// reported the notebook and "a" deleted.
    private func taggedNotesDeny(_ directory: TemporaryDirectory) throws -> Harness<NoSection> {
        var schema = NotesModel.schema
        let note = try #require(schema.entities.firstIndex { $0.name == "Note" })
        let tags = try #require(schema.entities[note].relationships.firstIndex { $0.name == "tags" })
        schema.entities[note].relationships[tags].deleteRule = .deny
        let store = try Store(schema: schema, path: directory.path("notes.sqlite"))
        return try Harness(store: store, Note.Fetches.all) { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
            let tagged = try db.note("b", in: work)
            try db.note("c")
            let tag = try db.insert(Tag(name: "urgent"))
            try db.link(tagged.id, Note.tags, tag.id)
        }
    }

    @Test("a deny refusal caught in a write made directly on the writer commits no phantom deletes")
    func caughtDenyOnTheWriterReportsNoPhantomDeletes() throws {
        let directory = try TemporaryDirectory()
        let h = try taggedNotesDeny(directory)
        let store = h.store
        let recorder = CommitRecorder(store)
        let refusal = try store.writer.write { db -> DeleteDeniedError? in
            var refusal: DeleteDeniedError?
            do {
                _ = try db.delete(try db.notebook(named: "Work"))
            } catch {
                refusal = DeleteDeniedError(error)
            }
            try db.note("d")
            return refusal
        }
        h.controller.waitForDeliveries()
        #expect(refusal == DeleteDeniedError(entity: "Note", relationship: "tags"))
        let (notebooks, titles) = try store.read { db in
            (try db.ids("Notebook"), try String.fetchAll(db, sql: "SELECT title FROM Note ORDER BY title"))
        }
        #expect(notebooks == [1])
        #expect(titles == ["a", "b", "c", "d"])
        // The commit claims no delete; what it cannot detail, it invalidates.
        let commit = try #require(recorder.commits.first)
        #expect(recorder.commits.count == 1)
        #expect(commit.tables.values.map(\.deleted).allSatisfy { $0.isEmpty })
        #expect(commit.invalidatedTables.isSuperset(of: ["Notebook", "Note"]))
        #expect(lines(h.recorder.updates, text).last == "i+[[0, 3]] | [a b c d]")
        try h.check()

        // The next commit on the writer is detailed again.
        recorder.reset()
        try store.writer.write { db in _ = try db.note("e") }
        #expect(recorder.commits.map(\.invalidatedTables) == [[]])
        #expect(recorder.commits.map { $0["Note"].inserted.count } == [1])
    }

    @Test("a deny refusal outside any transaction leaves no phantom deletes for the next commit")
    func refusedStatementOutsideATransaction() throws {
        let directory = try TemporaryDirectory()
        let h = try taggedNotesDeny(directory)
        let store = h.store
        let recorder = CommitRecorder(store)
        // One statement in autocommit mode: SQLite rolls it back, and GRDB tells observers
        // nothing, so the changes the hook reported stay behind until the next commit.
        let refusal = store.writer.writeWithoutTransaction { db -> DeleteDeniedError? in
            do {
                try db.execute(sql: "DELETE FROM Notebook WHERE name = 'Work'")
                return nil
            } catch {
                return DeleteDeniedError(error)
            }
        }
        #expect(refusal == DeleteDeniedError(entity: "Note", relationship: "tags"))
        #expect(recorder.commits.isEmpty)
        try h.write { db in try db.note("d") }
        let commit = try #require(recorder.commits.first)
        #expect(commit.tables.values.map(\.deleted).allSatisfy { $0.isEmpty })
        #expect(try store.read { db in try db.ids("Notebook") } == [1])
        try h.check()
    }

    // MARK: - Self-referencing relationships

    @Test("self-inverse to-one rule, deleting one of two twins", arguments: DeleteRule.allCases)
    func selfInverseToOneRule(_ rule: DeleteRule) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: TwinModel.schema(twin: rule), path: directory.path("twins.sqlite"))
        // Twins 1 ↔ 2 and 3 ↔ 4; node 5 has none.
        try store.write { db in
            try db.execute(sql: "INSERT INTO Node (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e')")
            try db.execute(sql: "UPDATE Node SET twinID = CASE id WHEN 1 THEN 2 WHEN 2 THEN 1 WHEN 3 THEN 4 WHEN 4 THEN 3 END")
        }
        let recorder = CommitRecorder(store)
        let deletion = Result { try store.write { db in try db.execute(sql: "DELETE FROM Node WHERE id = 1") } }
        let (nodes, twins) = try store.read { db in
            (try db.ids("Node"), try Int64?.fetchAll(db, sql: "SELECT twinID FROM Node ORDER BY id"))
        }
        switch rule {
        case .nullify:
            #expect(nodes == [2, 3, 4, 5])
            #expect(twins == [nil, 4, 3, nil])
            #expect(recorder.commits.first?["Node"].deleted == [1])
            #expect(recorder.commits.first?["Node"].updated == [2])
        case .cascade:
            #expect(nodes == [3, 4, 5])
            #expect(twins == [4, 3, nil])
            #expect(recorder.commits.first?["Node"].deleted == [1, 2])
        case .deny:
            #expect(throws: DeleteDeniedError(entity: "Node", relationship: "twin")) { try deletion.get() }
            #expect(nodes == [1, 2, 3, 4, 5])
            #expect(twins == [2, 1, 4, 3, nil])
            #expect(recorder.commits.isEmpty)
        case .noAction:
            #expect(nodes == [2, 3, 4, 5])
            #expect(twins == [1, 4, 3, nil], "the reference dangles")
        }
        if rule != .deny { try deletion.get() }
        // A node without a twin goes under every rule, and touches no other node.
        recorder.reset()
        try store.write { db in try db.execute(sql: "DELETE FROM Node WHERE id = 5") }
        #expect(recorder.commits.map { $0["Node"].deleted } == [[5]])
        #expect(recorder.commits.map { $0["Node"].updated } == [[]])
    }

    @Test("self-inverse to-one deny: a one-sided reference to the deleted node denies too")
    func selfInverseDenyOneSided() throws {
        let store = try Store.inMemory(schema: TwinModel.schema(twin: .deny))
        try store.write { db in
            try db.execute(sql: "INSERT INTO Node (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
            try db.execute(sql: "UPDATE Node SET twinID = 1 WHERE id = 2")  // 2 → 1, 1 → nothing
            try db.execute(sql: "UPDATE Node SET twinID = 3 WHERE id = 3")  // its own twin
        }
        #expect(throws: DeleteDeniedError(entity: "Node", relationship: "twin")) {
            try store.write { db in try db.execute(sql: "DELETE FROM Node WHERE id = 1") }
        }
        try store.write { db in try db.execute(sql: "DELETE FROM Node WHERE id = 3") }
        #expect(try store.read { db in try db.ids("Node") } == [1, 2])
    }

    @Test("self-referencing many-to-many: each join column follows its own side's rule", arguments: [false, true])
    func selfReferencingManyToManySides(_ friendsDangle: Bool) throws {
        let directory = try TemporaryDirectory()
        let schema = friendsDangle
            ? FriendsModel.schema(friends: .noAction, friendOf: .nullify)
            : FriendsModel.schema(friends: .nullify, friendOf: .noAction)
        let store = try Store(schema: schema, path: directory.path("friends.sqlite"))
        // 1 → 2 (1's friend is 2) and 3 → 1.
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
            try db.execute(sql: "INSERT INTO Person_friends (personID, friendID) VALUES (1, 2), (3, 1)")
        }
        try store.write { db in try db.execute(sql: "DELETE FROM Person WHERE id = 1") }
        let links = try store.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT personID, friendID FROM Person_friends ORDER BY personID")
                .map { [$0[0] as Int64, $0[1] as Int64] }
        }
        // `friends` (noAction) leaves 1's own links dangling; `friendOf` (nullify) removes
        // the links to 1 — and the other way round.
        #expect(links == (friendsDangle ? [[1, 2]] : [[3, 1]]))
        // The column of the side with a rule other than noAction still references Person.
        let (checked, unchecked) = friendsDangle
            ? ("INSERT INTO Person_friends (personID, friendID) VALUES (2, 99)", "INSERT INTO Person_friends (personID, friendID) VALUES (99, 2)")
            : ("INSERT INTO Person_friends (personID, friendID) VALUES (99, 2)", "INSERT INTO Person_friends (personID, friendID) VALUES (2, 99)")
        // Refused with the linked object named: the person whose link points to no one.
        let missing = RuleViolationError(
            entity: "Person", id: 2, member: friendsDangle ? "friends" : "friendOf", rule: .missingDestination("Person"))
        #expect(throws: missing) { try store.write { db in try db.execute(sql: checked) } }
        try store.write { db in try db.execute(sql: unchecked) }
    }

    // MARK: - A many-to-many that is its own inverse

    /// The links of `Person_friends` as unordered pairs (smaller id first), sorted.
    private func friendships(_ store: Store) throws -> [[Int64]] {
        try store.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT personID, friendsID FROM Person_friends").map { row in
                [row[0] as Int64, row[1] as Int64].sorted()
            }.sorted { $0.lexicographicallyPrecedes($1) }
        }
    }

    /// The pairs the join rows reported deleted by `commit` linked (smaller id first), sorted.
    private func unlinked(_ commit: CommittedChanges?) -> [[Int64]] {
        guard let changes = commit?["Person_friends"] else { return [] }
        return changes.deleted.compactMap { rowID in
            changes.joinRows[rowID].map { [$0["personID"] ?? 0, $0["friendsID"] ?? 0].sorted() }
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    @Test("self-inverse many-to-many rule, links stored either way round",
          arguments: DeleteRule.allCases, [false, true])
    func selfInverseManyToManyRule(_ rule: DeleteRule, swapped: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: SocialModel.schema(friends: rule), path: directory.path("social.sqlite"))
        // Friendships 1–2, 1–3, 2–4, 3–4 (a cycle, but not one that following the stored
        // order goes round) and 5–6; 1's links are stored once with 1 in the first column and
        // once in the second, the other way round when `swapped`.
        let stored: [(Int64, Int64)] = [(1, 2), (3, 1), (2, 4), (3, 4), (6, 5)].map { swapped ? ($0.1, $0.0) : $0 }
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f')")
            for (person, friend) in stored {
                try db.execute(sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (?, ?)", arguments: [person, friend])
            }
        }
        let recorder = CommitRecorder(store)
        let deletion = Result { try store.write { db in try db.execute(sql: "DELETE FROM Person WHERE id = 1") } }
        let people = try store.read { db in try db.ids("Person") }
        let links = try friendships(store)
        let commit = recorder.commits.first
        switch rule {
        case .nullify:
            #expect(people == [2, 3, 4, 5, 6])
            #expect(links == [[2, 4], [3, 4], [5, 6]])
            #expect(commit?["Person"].deleted == [1])
            #expect(unlinked(commit) == [[1, 2], [1, 3]])
        case .cascade:
            // 2 and 3 go with 1, and 4 with them (Core Data cascades from each deleted object).
            #expect(people == [5, 6])
            #expect(links == [[5, 6]])
            #expect(commit?["Person"].deleted == [1, 2, 3, 4])
            #expect(unlinked(commit) == [[1, 2], [1, 3], [2, 4], [3, 4]])
        case .deny:
            #expect(throws: DeleteDeniedError(entity: "Person", relationship: "friends")) { try deletion.get() }
            #expect(people == [1, 2, 3, 4, 5, 6])
            #expect(links == [[1, 2], [1, 3], [2, 4], [3, 4], [5, 6]])
            #expect(recorder.commits.isEmpty)
        case .noAction:
            #expect(people == [2, 3, 4, 5, 6])
            #expect(links == [[1, 2], [1, 3], [2, 4], [3, 4], [5, 6]], "join rows dangle")
            #expect(commit?.tables.keys.sorted() == ["Person"])
        }
        if rule != .deny { try deletion.get() }
        #expect(recorder.commits.count == (rule == .deny ? 0 : 1))

        // A person whose only friend is itself goes under every rule; the link goes too,
        // except with noAction, where it dangles.
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person (id, name) VALUES (7, 'g')")
            try db.execute(sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (7, 7)")
        }
        recorder.reset()
        try store.write { db in try db.execute(sql: "DELETE FROM Person WHERE id = 7") }
        #expect(try store.read { db in try db.ids("Person") }.contains(7) == false)
        #expect(try friendships(store).contains([7, 7]) == (rule == .noAction))
        #expect(recorder.commits.map { $0["Person"].deleted } == [[7]])
        #expect(unlinked(recorder.commits.first) == (rule == .noAction ? [] : [[7, 7]]))
    }

    @Test("self-inverse many-to-many deny: one link in either column refuses the delete", arguments: [false, true])
    func selfInverseManyToManyDenyEitherColumn(_ swapped: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: SocialModel.schema(friends: .deny), path: directory.path("social.sqlite"))
        try store.write { db in
            try db.execute(sql: "INSERT INTO Person (id, name) VALUES (1, 'a'), (2, 'b')")
            try db.execute(sql: "INSERT INTO Person_friends (personID, friendsID) VALUES (?, ?)",
                           arguments: swapped ? [2, 1] : [1, 2])
        }
        let recorder = CommitRecorder(store)
        for id in [1, 2] {
            #expect(throws: DeleteDeniedError(entity: "Person", relationship: "friends")) {
                try store.write { db in try db.execute(sql: "DELETE FROM Person WHERE id = ?", arguments: [id]) }
            }
        }
        #expect(try store.read { db in try db.ids("Person") } == [1, 2])
        #expect(try friendships(store) == [[1, 2]])
        #expect(recorder.commits.isEmpty)

        // Once unlinked, both go.
        try store.write { db in try db.execute(sql: "DELETE FROM Person_friends") }
        try store.write { db in try db.execute(sql: "DELETE FROM Person") }
        #expect(try store.read { db in try db.ids("Person") } == [])
    }
}
