import Foundation
import GRDB
import Strata
import StrataTestSupport
import Testing

// The Keys model (Resources/Keys.yaml) compiled and used on real store files: primary keys
// named `objectID` (the file's `primaryKey:`) and `localID` (an entity's own), beside
// attributes named `id`, and an entity that names its key `id` again. What ModelLanguage.md
// promises of `primaryKey:`: the key's property and column take the name, every relationship
// storage points at it, the typed API, generated fetches, live results, rules and decoding
// errors find rows by it, and a file whose keys had other names keeps every row and link.

private func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("strata-keys-\(UUID().uuidString).sqlite").path
}

private func columns(_ db: Database, _ table: String) throws -> [String] {
    try db.columns(in: table).map(\.name)
}

/// The primary key column of `table`, as SQLite reports it.
private func primaryKey(_ db: Database, _ table: String) throws -> [String] {
    try db.primaryKey(table).columns
}

@Suite struct PrimaryKeyNameTests {
    @Test func theKeyTakesTheNameOfTheFileOrOfTheEntity() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        try store.read { (db: Database) throws in
            #expect(try columns(db, "Account") == ["objectID", "id", "name", "biographyID", "mentorID"])
            #expect(try primaryKey(db, "Account") == ["objectID"])
            #expect(try columns(db, "Biography") == ["objectID", "bio"])
            #expect(try columns(db, "Repo") == ["localID", "id", "name", "stars", "ownerID", "ownerPosition"])
            #expect(try primaryKey(db, "Repo") == ["localID"])
            #expect(try columns(db, "Ticket") == ["id", "title", "number", "repoID"])
            #expect(try primaryKey(db, "Ticket") == ["id"])
        }
        #expect(KeysModel.schema.entity(named: "Account")?.primaryKey == "objectID")
        #expect(KeysModel.schema.entity(named: "Repo")?.primaryKey == "localID")
        #expect(KeysModel.schema.entity(named: "Ticket")?.primaryKey == "id")
    }

    @Test func anAttributeNamedIDIsAnOrdinaryValue() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let ada = try store.insert(Account(id: "srv-ada", name: "Ada"))
        #expect(ada.objectID.isSaved)
        #expect(ada.id == "srv-ada")
        let read = try #require(try store.fetchOne(Account.self, id: ada.objectID))
        #expect(read == ada)
        // The object's id is the rowid; the server id is a column like any other.
        try store.read { (db: Database) throws in
            #expect(try Int64.fetchOne(db, sql: "SELECT rowid FROM Account WHERE id = 'srv-ada'") == ada.objectID.rawValue)
        }
        // Codable keeps both names, as a server's JSON has them.
        let json = try JSONEncoder().encode(read)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["id"] as? String == "srv-ada")
        #expect(object["objectID"] as? Int64 == ada.objectID.rawValue)
        // The typed columns: `Account.id` is the attribute, `Account.objectID` the key.
        #expect(try store.fetchAll(Account.self, where: Account.id == "srv-ada").map(\.objectID) == [ada.objectID])
        #expect(try store.fetchAll(Account.self, where: Account.objectID == ada.objectID).map(\.id) == ["srv-ada"])
        // Updating the server id writes that column, never the key.
        var renamed = read
        renamed.id = "srv-ada-2"
        #expect(try store.update(renamed))
        #expect(try store.fetchOne(Account.self, id: ada.objectID)?.id == "srv-ada-2")
        #expect(try store.delete(renamed))
        #expect(try store.fetchAll(Account.self).isEmpty)
    }

    @Test func aServersJSONWithoutTheKeyDecodesAsAnUnsavedObject() throws {
        let decoder = JSONDecoder()
        // What the initializer requires, a JSON object requires; the rest takes the
        // initializer's defaults: the key `.unsaved`, `stars` 0, a nil owner.
        let account = try decoder.decode(Account.self, from: Data(#"{"id": "srv-ada", "name": "Ada"}"#.utf8))
        #expect(account == Account(id: "srv-ada", name: "Ada"))
        #expect(!account.objectID.isSaved)
        let repo = try decoder.decode(Repo.self, from: Data(#"{"id": 7, "name": "strata"}"#.utf8))
        #expect(repo == Repo(id: 7, name: "strata"))
        #expect(repo.stars == 0 && repo.ownerID == nil && !repo.localID.isSaved)
        // An explicit null is nil, a present value wins over the default.
        let nulls = try decoder.decode(Repo.self, from: Data(#"{"id": null, "name": "n", "stars": 3, "ownerID": null}"#.utf8))
        #expect(nulls == Repo(id: nil, name: "n", stars: 3))
        // A value without a default is required, as in the initializer.
        #expect(throws: DecodingError.self) { try decoder.decode(Account.self, from: Data(#"{"id": "srv-ada"}"#.utf8)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Ticket.self, from: Data(#"{"title": "t", "number": 1}"#.utf8)) }

        // A decoded object inserts like a constructed one, and a stored one round-trips with
        // its key.
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let stored = try store.insert(account)
        #expect(stored.objectID.isSaved)
        let again = try decoder.decode(Account.self, from: JSONEncoder().encode(stored))
        #expect(again == stored)
        let ticket = Ticket(id: Ticket.ID(rawValue: 5), title: "t", number: 1, repoID: Repo.ID(rawValue: 9))
        #expect(try decoder.decode(Ticket.self, from: JSONEncoder().encode(ticket)) == ticket)
    }

    @Test func anEntityWithItsKeyNamedIDIsIdentifiableThroughIt() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let owner = try store.insert(Account(id: "a", name: "A"))
        let repo = try store.write { db in try db.insert(Repo(id: 7, name: "strata", ownerID: owner.objectID)) }
        let issue = try store.insert(Ticket(title: "crash", number: 1, repoID: repo.localID))
        // `Ticket` names its key `id`: Identifiable, and `objectID` is the same value.
        func identity<T: Identifiable>(_ value: T) -> T.ID { value.id }
        #expect(identity(issue) == issue.objectID)
        #expect(try store.fetchOne(Ticket.self, id: issue.id)?.title == "crash")
        #expect(try store.read { db in try db.fetchOne(Ticket.repo, of: issue.id) }?.localID == repo.localID)
    }

    @Test func everyRelationshipStoragePointsAtTheRenamedKeys() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        try store.write { (db: Database) throws in
            let ada = try db.insert(Account(id: "ada", name: "Ada"))
            let bob = try db.insert(Account(id: "bob", name: "Bob"))
            // Ordered to-many: positions among the owner's repos.
            var repos: [Repo] = []
            for name in ["c", "a", "b"] { repos.append(try db.insert(Repo(name: name, ownerID: ada.objectID))) }
            _ = try db.move(repos[2].localID, in: Account.repos, of: ada.objectID, to: 0)
            #expect(try db.fetchOrdered(Account.repos, of: ada.objectID).map(\.name) == ["b", "c", "a"])
            // Many-to-many through the join table, both directions.
            try db.link(bob.objectID, Account.starred, repos[0].localID)
            try db.link(bob.objectID, Account.starred, repos[1].localID)
            #expect(try db.fetchAll(Account.starred, of: bob.objectID, sortedBy: [Repo.name.ascending]).map(\.name) == ["a", "c"])
            #expect(try db.fetchAll(Repo.stargazers, of: repos[1].localID).map(\.id) == ["bob"])
            try db.unlink(bob.objectID, Account.starred, repos[0].localID)
            #expect(try db.fetchAll(Account.starred, of: bob.objectID).map(\.name) == ["a"])
            // One-to-one stored on Account, read from both sides.
            let profile = try db.insert(Biography(bio: "hi"))
            var withProfile = ada
            withProfile.biographyID = profile.objectID
            #expect(try db.update(withProfile))
            #expect(try db.fetchOne(Account.biography, of: ada.objectID)?.bio == "hi")
            #expect(try db.fetchOne(Biography.account, of: profile.objectID)?.id == "ada")
            // A to-one that is its own inverse.
            var mentored = bob
            mentored.mentorID = ada.objectID
            #expect(try db.update(mentored))
            #expect(try db.fetchAll(Account.self, where: Account.mentor.id == "ada").map(\.id) == ["bob"])
            #expect(try db.fetchOne(Account.mentor, of: bob.objectID)?.id == "ada")
            // GRDB's associations follow the keys too.
            let owned = try Account.filter(Column("objectID") == ada.objectID.rawValue)
                .including(all: Account.Associations.repos).asRequest(of: Row.self).fetchOne(db)
            #expect((owned?.prefetchedRows["repos"]?.count) == 3)
        }
    }

    @Test func deleteRulesFollowTheRenamedKeys() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let (ada, profile, repo) = try store.write { (db: Database) throws in
            let profile = try db.insert(Biography(bio: "x"))
            let ada = try db.insert(Account(id: "ada", name: "Ada", biographyID: profile.objectID))
            let bob = try db.insert(Account(id: "bob", name: "Bob", mentorID: ada.objectID))
            let repo = try db.insert(Repo(name: "r", ownerID: ada.objectID))
            try db.link(bob.objectID, Account.starred, repo.localID)
            _ = try db.insert(Ticket(title: "t", number: 1, repoID: repo.localID))
            return (ada, profile, repo)
        }
        // `Repo.issues` denies: the cascade from the account stops at the repo's ticket.
        #expect(throws: DeleteDeniedError.self) { try store.write { db in try db.delete(ada) } }
        #expect(try store.fetchOne(Account.self, id: ada.objectID) != nil)
        try store.write { (db: Database) throws in
            _ = try db.execute(sql: "DELETE FROM Ticket")
            #expect(try db.delete(ada))
            // Cascade to the repos and the profile; nullify the mentor and the join rows.
            #expect(try db.fetchOne(Repo.self, id: repo.localID) == nil)
            #expect(try db.fetchOne(Biography.self, id: profile.objectID) == nil)
            #expect(try Account.fetchAll(db).map(\.mentorID) == [nil])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Account_starred") == 0)
        }
    }

    @Test func rawSQLOfAnotherProgramKeepsTheRules() throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Strata.Store(schema: KeysModel.schema, path: path)
        let owner = try store.insert(Account(id: "o", name: "O"))
        // A second, plain connection: the stored triggers and foreign keys name the keys.
        let other = try DatabaseQueue(path: path)
        try other.write { (db: Database) throws in
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            try db.execute(sql: "INSERT INTO Repo (localID, name, ownerID) VALUES (50, 'raw', ?)", arguments: [owner.objectID])
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO Repo (localID, name, ownerID) VALUES (51, 'dangling', 999)")
            }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE Repo SET stars = -1 WHERE localID = 50") }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE Repo SET localID = 52 WHERE localID = 50") }
            try db.execute(sql: "DELETE FROM Account WHERE objectID = ?", arguments: [owner.objectID])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Repo") == 0)
        }
        try other.close()
    }

    @Test func ruleViolationsAndDecodingErrorsNameTheRowByItsKey() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let owner = try store.insert(Account(id: "o", name: "O"))
        let repo = try store.insert(Repo(id: 1, name: "r", ownerID: owner.objectID))
        var broken = repo
        broken.stars = -1
        do {
            try store.update(broken)
            Issue.record("a negative star count was stored")
        } catch let error as RuleViolationError {
            #expect(error.entity == "Repo" && error.id == repo.localID.rawValue && error.member == "stars")
        }
        try store.writer.write { (db: Database) throws in
            try db.execute(sql: "UPDATE Repo SET name = x'00ff' WHERE localID = ?", arguments: [repo.localID])
        }
        do {
            _ = try store.fetchOne(Repo.self, id: repo.localID)
            Issue.record("a blob was read as a name")
        } catch let error as ValueDecodingError {
            #expect(error.entity == "Repo" && error.column == "name" && error.id == repo.localID.rawValue)
        }
    }

    @Test func generatedFetchesCompareTheKeysAndTheAttributesNamedID() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let (ada, bob) = try store.write { (db: Database) throws in
            let ada = try db.insert(Account(id: "ada", name: "Ada"))
            let bob = try db.insert(Account(id: "bob", name: "Bob"))
            let one = try db.insert(Repo(id: 10, name: "one", stars: 3, ownerID: ada.objectID))
            _ = try db.insert(Repo(id: 20, name: "two", stars: 5, ownerID: ada.objectID))
            let three = try db.insert(Repo(id: nil, name: "three", ownerID: bob.objectID))
            try db.link(bob.objectID, Account.starred, one.localID)
            try db.link(bob.objectID, Account.starred, three.localID)
            return (ada, bob)
        }
        #expect(try store.fetchAll(Repo.Fetches.ownedBy(owner: ada.objectID)).map(\.name) == ["two", "one"])
        #expect(try store.fetchAll(Repo.Fetches.ownedBy(owner: bob.objectID)).map(\.name) == ["three"])
        #expect(try store.fetchAll(Repo.Fetches.withServerIDAbove(minimum: 10)).map(\.name) == ["two"])
        #expect(try store.fetchAll(Repo.Fetches.starredBy(account: "bob")).map(\.name) == ["one", "three"])
        #expect(try store.fetchAll(Repo.Fetches.starredBy(account: "ada")).isEmpty)
        #expect(try store.fetchAll(Account.Fetches.byName).map(\.id) == ["ada", "bob"])
        #expect(try store.fetchAll(Repo.self, where: Repo.owner.id == "bob").map(\.name) == ["three"])
        #expect(try store.fetchAll(Repo.self, where: Repo.owner.objectID == ada.objectID).count == 2)
        #expect(try store.fetchAll(Repo.self, where: Repo.owner.isNil).isEmpty)
        // Sort keys that name the keys: the owner's `objectID`, then `localID` descending.
        let byOwnerKey = try store.fetchAll(Repo.Fetches.byOwnerKey)
        let expected = try store.fetchAll(Repo.self).sorted {
            ($0.ownerID!.rawValue, -$0.localID.rawValue) < ($1.ownerID!.rawValue, -$1.localID.rawValue)
        }
        #expect(byOwnerKey.map(\.localID) == expected.map(\.localID))
        #expect(byOwnerKey.map(\.name) == ["two", "one", "three"])
    }

    @Test func aKeyNamedIDSortsAsTheKey() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        let repo = try store.write { (db: Database) throws in
            let owner = try db.insert(Account(id: "o", name: "O"))
            let repo = try db.insert(Repo(name: "r", ownerID: owner.objectID))
            for number in [3, 1, 2] { _ = try db.insert(Ticket(title: "t\(number)", number: number, repoID: repo.localID)) }
            return repo
        }
        #expect(try store.fetchAll(Ticket.Fetches.newest(repo: repo.localID)).map(\.number) == [2, 1, 3])
    }

    @Test("live sectioned results over renamed keys: every batch replays and equals a fresh fetch")
    func liveResults() throws {
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        var generator = SplitMix(seed: 0x5EED_0015)
        let accounts = try store.write { (db: Database) throws in
            try (0..<4).map { try db.insert(Account(id: "a\($0)", name: "Account \($0)")) }
        }
        // Lists whose batches are replayed on the snapshot before them, as a list view applies them.
        let (ownerController, byOwner) = try ResultsController.replaying(store: store, request: Repo.Fetches.byOwner)
        let (repoController, byRepo) = try ResultsController.replaying(store: store, request: Ticket.Fetches.byRepo)
        var repos: [Repo.ID] = []
        for step in 0..<120 {
            try store.write { (db: Database) throws in
                let owner = accounts[Int(generator.next() % 4)].objectID
                switch generator.next() % 6 {
                case 0, 1:
                    let repo = try db.insert(Repo(id: Int(generator.next() % 50), name: "r\(step)", ownerID: owner))
                    repos.append(repo.localID)
                    _ = try db.insert(Ticket(title: "i\(step)", number: step, repoID: repo.localID))
                case 2 where !repos.isEmpty:
                    let id = repos[Int(generator.next() % UInt64(repos.count))]
                    let parent = try #require(try db.fetchOne(Repo.self, id: id)?.ownerID)
                    _ = try db.move(id, in: Account.repos, of: parent, to: 0)
                case 3 where !repos.isEmpty:
                    let id = repos.remove(at: Int(generator.next() % UInt64(repos.count)))
                    _ = try db.execute(sql: "DELETE FROM Ticket WHERE repoID = ?", arguments: [id])
                    #expect(try db.delete(Repo.self, id: id))
                case 4:
                    var account = try #require(try db.fetchOne(Account.self, id: owner))
                    account.name = "Account \(generator.next() % 100)"
                    _ = try db.update(account)
                default:
                    if let id = repos.last, var repo = try db.fetchOne(Repo.self, id: id) {
                        repo.name = "renamed \(step)"
                        _ = try db.update(repo)
                    }
                }
            }
        }
        // Checked at the end against a fresh controller on the same request.
        #expect(try byOwner.problems(ownerController, store: store) == [])
        #expect(try byRepo.problems(repoController, store: store) == [])
        #expect((byOwner.shown?.sections.count ?? 0) > 0, "the list is empty")
        #expect((byRepo.shown?.sections.count ?? 0) > 0, "the list is empty")
    }

    // MARK: - Migrations

    /// The Keys model as a file written before it named its keys: every key `id`, the
    /// account's server id stored as `serverID`, and no server id on repos.
    private static let olderSchema: SchemaDescriptor = {
        var schema = KeysModel.schema
        for (e, entity) in schema.entities.enumerated() {
            schema.entities[e].primaryKey = "id"
            if entity.name == "Account" {
                schema.entities[e].attributes[0].name = "serverID"
            }
            if entity.name == "Repo" { schema.entities[e].attributes.removeAll { $0.name == "id" } }
        }
        return schema
    }()

    /// The Keys model, with the account's `id` renamed from `serverID`.
    private static let renamingSchema: SchemaDescriptor = {
        var schema = KeysModel.schema
        for (e, entity) in schema.entities.enumerated() where entity.name == "Account" {
            schema.entities[e].attributes[0].renamedFrom = "serverID"
        }
        return schema
    }()

    @Test func aFileWhoseKeysWereNamedIDKeepsEveryRowAndLink() throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var before: [String: [[DatabaseValue]]] = [:]
        do {
            let old = try Strata.Store(schema: Self.olderSchema, path: path)
            try old.writer.write { (db: Database) throws in
                try db.execute(sql: "INSERT INTO Biography (id, bio) VALUES (3, 'p')")
                try db.execute(sql: "INSERT INTO Account (id, serverID, name, biographyID) VALUES (7, 'ada', 'Ada', 3), (9, 'bob', 'Bob', NULL)")
                try db.execute(sql: "UPDATE Account SET mentorID = 7 WHERE id = 9")
                try db.execute(sql: "INSERT INTO Repo (id, name, stars, ownerID) VALUES (40, 'x', 1, 7), (41, 'y', 2, 7)")
                try db.execute(sql: "INSERT INTO Account_starred (accountID, repoID) VALUES (9, 41)")
                try db.execute(sql: "INSERT INTO Ticket (id, title, number, repoID) VALUES (100, 't', 1, 41)")
                before["Repo"] = try Row.fetchAll(db, sql: "SELECT id, name, ownerID, ownerPosition FROM Repo ORDER BY id").map { Array($0.databaseValues) }
            }
        }
        do {
            // The key renames and the server id's rename together.
            _ = try Strata.Store(schema: Self.renamingSchema, path: path)
        }
        let store = try Strata.Store(schema: KeysModel.schema, path: path)
        try store.read { (db: Database) throws in
            #expect(try columns(db, "Account") == ["objectID", "id", "name", "biographyID", "mentorID"])
            let accounts: [[DatabaseValue]] = try Row.fetchAll(
                db, sql: "SELECT objectID, id, biographyID, mentorID FROM Account ORDER BY objectID"
            ).map { Array($0.databaseValues) }
            let expected: [[DatabaseValue]] = [
                [7.databaseValue, "ada".databaseValue, 3.databaseValue, .null],
                [9.databaseValue, "bob".databaseValue, .null, 7.databaseValue],
            ]
            #expect(accounts == expected)
            let repos: [[DatabaseValue]] = try Row.fetchAll(
                db, sql: "SELECT localID, name, ownerID, ownerPosition FROM Repo ORDER BY localID"
            ).map { Array($0.databaseValues) }
            #expect(repos == before["Repo"])
            #expect(try Repo.fetchAll(db).map(\.id) == [nil, nil])
            #expect(try db.fetchOrdered(Account.repos, of: Account.ID(rawValue: 7)).map(\.name) == ["x", "y"])
            #expect(try db.fetchAll(Account.starred, of: Account.ID(rawValue: 9)).map(\.name) == ["y"])
            #expect(try db.fetchOne(Ticket.repo, of: Ticket.ID(rawValue: 100))?.localID.rawValue == 41)
            #expect(try db.fetchOne(Account.biography, of: Account.ID(rawValue: 7))?.bio == "p")
        }
        // New rows continue after the old ids, and the stored rules still hold.
        let next = try store.insert(Account(id: "cy", name: "Cy"))
        #expect(next.objectID.rawValue == 10)
        #expect(throws: DeleteDeniedError.self) {
            try store.write { db in try db.delete(Repo.self, id: Repo.ID(rawValue: 41)) }
        }
    }
}

/// Two models open in one process (an app's old and new model versions, two apps' models in
/// one server) that share an identical entity but not the keys of the entities it relates
/// to: typed queries through relationships follow the model of the entity's own type, never
/// another open model that happens to describe the entity the same way.
@Suite struct TwoModelsInOneProcessTests {
    /// The Keys model, with Repo's key named `id` (and no server `id`): Ticket is described
    /// exactly as in the Keys model, Repo is not.
    static let otherModel: SchemaDescriptor = {
        var schema = KeysModel.schema
        schema.name = "KeysWithRepoKeyID"
        let index = schema.entities.firstIndex { $0.name == "Repo" }!
        schema.entities[index].primaryKey = "id"
        schema.entities[index].attributes.removeAll { $0.name == "id" }
        return schema
    }()

    @Test func typedQueriesFollowTheModelOfTheirEntityType() throws {
        #expect(Self.otherModel.entity(named: "Ticket") == KeysModel.schema.entity(named: "Ticket"))
        #expect(Ticket.schemaDescriptor == KeysModel.schema)
        let store = try Strata.Store.inMemory(schema: KeysModel.schema)
        // Opened after the Keys store, so it is the last open model that has Ticket.
        let other = try Strata.Store.inMemory(schema: Self.otherModel)
        defer { try? other.close() }
        // Server ids differ from the local keys, so a join through the wrong key finds
        // other repositories (or none).
        let (ada, strata, grdb) = try store.write { (db: Database) throws in
            let ada = try db.insert(Account(id: "ada", name: "Ada"))
            let strata = try db.insert(Repo(id: 2, name: "strata", ownerID: ada.objectID))
            let grdb = try db.insert(Repo(id: 1, name: "grdb", ownerID: ada.objectID))
            return (ada, strata, grdb)
        }
        #expect(strata.localID.rawValue == 1 && grdb.localID.rawValue == 2)
        let crash = try store.insert(Ticket(title: "crash", number: 1, repoID: strata.localID))
        let leak = try store.insert(Ticket(title: "leak", number: 2, repoID: grdb.localID))

        try store.read { (db: Database) throws in
            #expect(try db.fetchAll(Ticket.self, where: Ticket.repo.name == "strata").map(\.title) == ["crash"])
            #expect(try db.fetchCount(Ticket.self, where: Ticket.repo.name == "grdb") == 1)
            #expect(try db.fetchAll(Ticket.self, sortedBy: [Ticket.repo.name.ascending]).map(\.title) == ["leak", "crash"])
            #expect(try db.fetchAll(Ticket.Fetches.byRepo).map(\.title) == ["leak", "crash"])
            #expect(try db.fetchOne(Ticket.repo, of: crash.id)?.name == "strata")
            #expect(try db.fetchOne(Ticket.repo.owner, of: leak.id)?.objectID == ada.objectID)
            #expect(try db.fetchAll(Repo.self, where: Repo.owner.name == "Ada").count == 2)
        }
        #expect(try store.write { (db: Database) throws in try db.delete(Ticket.self, where: Ticket.repo.name == "grdb") } == 1)
        #expect(try store.read { (db: Database) throws in try db.fetchAll(Ticket.self).map(\.title) } == ["crash"])
        try store.close()
    }
}
