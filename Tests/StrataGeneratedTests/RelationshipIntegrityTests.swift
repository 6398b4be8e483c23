import Foundation
import GRDB
import Strata
import Testing

// Pairs.yaml at the boundaries of its relationships, through every write path: the typed
// API, GRDB records and raw SQL on the store's writer, and files written without the checks.
// Docs/ModelLanguage.md (Relationships, Required to-ones checked at commit) and
// Docs/Decisions.md (One-to-ones are kept one-to-one; Keys that point to no object) are the
// contract.
@Suite("Relationship integrity")
struct RelationshipIntegrityTests {
    /// The error a write throws, if any.
    func failure<T>(_ body: () throws -> T) -> (any Error)? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    func ruleError<T>(_ body: () throws -> T) -> RuleViolationError? {
        failure(body) as? RuleViolationError
    }

    static let cardOwner = RuleViolationError.Rule.oneToOne("Person.card")

    // MARK: - One-to-one, key on the other side (Card.owner)

    @Test func secondCardOfAPersonIsRefusedByTheTypedAPI() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let (ann, first) = try store.write { db in
            let ann = try db.insert(Person(name: "Ann"))
            return (ann, try db.insert(Card(number: "1", ownerID: ann.id)))
        }
        let error = ruleError { try store.insert(Card(number: "2", ownerID: ann.id)) }
        #expect(error == RuleViolationError(entity: "Card", id: nil, member: "owner", rule: Self.cardOwner))
        #expect(error?.description == "Card: owner points to a Person that another object already points to (one-to-one with Person.card)")
        #expect(try store.read { db in try db.fetchAll(Card.self) } == [first])
        #expect(try store.read { db in try db.fetchOne(Person.card, of: ann.id) } == first)

        // An update that gives a second card the same owner names the card.
        let second = try store.insert(Card(number: "2"))
        var moved = second
        moved.ownerID = ann.id
        #expect(ruleError { try store.update(moved) }
            == RuleViolationError(entity: "Card", id: second.id.rawValue, member: "owner", rule: Self.cardOwner))
        #expect(try store.read { db in try db.fetchOne(Card.self, id: second.id) }?.ownerID == nil)
    }

    @Test func aCardMovesWhenItsPartnerIsUnlinkedFirst() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let ann = try store.insert(Person(name: "Ann"))
        let first = try store.insert(Card(number: "1", ownerID: ann.id))
        var second = try store.insert(Card(number: "2"))
        try store.write { db in
            var unlinked = first
            unlinked.ownerID = nil
            try db.update(unlinked)
            second.ownerID = ann.id
            try db.update(second)
        }
        #expect(try store.read { db in try db.fetchOne(Person.card, of: ann.id) } == second)
        // Updating the holder itself, or writing its key unchanged, is no conflict.
        try store.write { db in
            try db.execute(sql: "UPDATE Card SET ownerID = ownerID, number = 'two' WHERE id = ?", arguments: [second.id])
        }
        // Many cards may have no owner.
        _ = try store.insert(Card(number: "3"))
        _ = try store.insert(Card(number: "4"))
    }

    @Test func secondCardOfAPersonIsRefusedForGRDBRecordsAndRawSQL() throws {
        let directory = try TemporaryFolder()
        let store = try Strata.Store(schema: PairsModel.schema, path: directory.path("pairs.sqlite"))
        let ann = try store.insert(Person(name: "Ann"))
        let first = try store.insert(Card(number: "1", ownerID: ann.id))
        let other = try store.insert(Card(number: "9"))
        let expected = RuleViolationError(entity: "Card", id: nil, member: "owner", rule: Self.cardOwner)

        // A GRDB record written on the store's writer: GRDB's error converts.
        let recordError = failure {
            try store.writer.write { db in
                var card = Card(number: "2", ownerID: ann.id)
                try card.insert(db)
            }
        }
        #expect(recordError.flatMap { RuleViolationError($0) } == expected)
        let updateError = failure {
            try store.writer.write { db in
                var card = other
                card.ownerID = ann.id
                try card.update(db)
            }
        }
        #expect(updateError.flatMap { RuleViolationError($0) }
            == RuleViolationError(entity: "Card", id: other.id.rawValue, member: "owner", rule: Self.cardOwner))

        // Raw SQL inside store.write, and INSERT OR REPLACE of another row.
        #expect(ruleError {
            try store.write { db in try db.execute(sql: "INSERT INTO Card (number, ownerID) VALUES ('3', ?)", arguments: [ann.id]) }
        } == expected)
        #expect(ruleError {
            try store.write { db in try db.execute(sql: "UPDATE Card SET ownerID = ? WHERE id = ?", arguments: [ann.id, other.id]) }
        } == RuleViolationError(entity: "Card", id: other.id.rawValue, member: "owner", rule: Self.cardOwner))
        #expect(ruleError {
            try store.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO Card (id, number, ownerID) VALUES (?, 'x', ?)", arguments: [other.id, ann.id])
            }
        } == RuleViolationError(entity: "Card", id: other.id.rawValue, member: "owner", rule: Self.cardOwner))
        // Replacing the holder's own row keeps its owner.
        try store.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO Card (id, number, ownerID) VALUES (?, 'one', ?)", arguments: [first.id, ann.id])
        }

        // Another program writing the file: the unique index stored in it refuses.
        let queue = try DatabaseQueue(path: directory.path("pairs.sqlite"))
        let sqliteError = failure {
            try queue.write { db in try db.execute(sql: "INSERT INTO Card (number, ownerID) VALUES ('4', ?)", arguments: [ann.id]) }
        } as? DatabaseError
        #expect(sqliteError?.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE)
        try queue.close()

        #expect(try store.read { db in try db.fetchAll(Card.self).filter { $0.ownerID == ann.id }.map(\.id) } == [first.id])
        try store.close()
    }

    // MARK: - One-to-one, key on this side (Person.seat)

    @Test func twoPeopleOnOneSeatAreRefused() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let seat = try store.insert(Seat(label: "A1"))
        let ann = try store.insert(Person(name: "Ann", seatID: seat.id))
        let rule = RuleViolationError.Rule.oneToOne("Seat.occupant")
        #expect(ruleError { try store.insert(Person(name: "Bob", seatID: seat.id)) }
            == RuleViolationError(entity: "Person", id: nil, member: "seat", rule: rule))
        var bob = try store.insert(Person(name: "Bob"))
        bob.seatID = seat.id
        #expect(ruleError { try store.update(bob) } == RuleViolationError(entity: "Person", id: bob.id.rawValue, member: "seat", rule: rule))
        #expect(try store.read { db in try db.fetchOne(Seat.occupant, of: seat.id) } == ann)
    }

    // MARK: - Both sides required (Country.flag ↔ Flag.country)

    @Test func theRequiredSideWithoutTheKeyIsCheckedAtCommit() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        // A flag without a country: refused at commit, naming the flag.
        #expect(ruleError { try store.insert(Flag(colors: "red")) }
            == RuleViolationError(entity: "Flag", id: 1, member: "country", rule: .required))
        #expect(try store.read { db in try db.fetchCount(Flag.self) } == 0)

        // The flag first, its country in the same transaction: committed.
        let (flag, country) = try store.write { db in
            let flag = try db.insert(Flag(colors: "red"))
            return (flag, try db.insert(Country(name: "Red", flagID: flag.id)))
        }
        #expect(try store.read { db in try db.fetchOne(Flag.country, of: flag.id) } == country)

        // Deleting the country leaves the flag without one; deleting both is fine.
        #expect(ruleError { try store.write { db in try db.delete(country) } }
            == RuleViolationError(entity: "Flag", id: flag.id.rawValue, member: "country", rule: .required))
        // Raw SQL on the store's writer directly: the commit is refused the same way.
        let direct = failure {
            try store.writer.write { db in try db.execute(sql: "INSERT INTO Flag (colors) VALUES ('blue')") }
        }
        #expect(direct.flatMap { RuleViolationError($0) }?.rule == .required)
        try store.write { db in
            try db.delete(country)
            try db.delete(flag)
        }
        #expect(try store.read { db in try db.fetchCount(Flag.self) } == 0)
    }

    @Test func keysCheckedAtCommitMayBeUnsetTogetherButNotShared() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        // Two countries without a flag for a while (key 0, twice), then each with its own.
        try store.write { db in
            var red = try db.insert(Country(name: "Red", flagID: .unsaved))
            var blue = try db.insert(Country(name: "Blue", flagID: .unsaved))
            red.flagID = try db.insert(Flag(colors: "red")).id
            blue.flagID = try db.insert(Flag(colors: "blue")).id
            try db.update(red)
            try db.update(blue)
        }
        // Two countries with the same flag: refused when the statement runs.
        let error = ruleError {
            try store.write { db in
                let flag = try db.insert(Flag(colors: "green"))
                _ = try db.insert(Country(name: "Green", flagID: flag.id))
                _ = try db.insert(Country(name: "Lime", flagID: flag.id))
            }
        }
        #expect(error == RuleViolationError(entity: "Country", id: nil, member: "flag", rule: .oneToOne("Flag.country")))
        // A key checked at commit pointing to no flag is refused at commit, naming the country.
        #expect(ruleError {
            try store.write { db in
                let flag = try db.insert(Flag(colors: "grey"))
                var country = try db.insert(Country(name: "Grey", flagID: flag.id))
                country.flagID = Flag.ID(rawValue: 99)
                try db.update(country)
                try db.delete(flag)
            }
        } == RuleViolationError(entity: "Country", id: 3, member: "flag", rule: .missingDestination("Flag")))
    }

    // MARK: - A required to-one checked by each statement (Crew.host)

    @Test func anUnsetOrDanglingRequiredKeyIsATypedError() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let host = try store.insert(Host(name: "eu"))
        let crew = try store.insert(Crew(name: "Reds", hostID: host.id))

        let unset = ruleError { try store.insert(Crew(name: "Blues", hostID: .unsaved)) }
        #expect(unset == RuleViolationError(entity: "Crew", id: 2, member: "host", rule: .required))
        #expect(unset?.description == "Crew 2: host is required but not set")
        #expect(ruleError { try store.insert(Crew(name: "Blues", hostID: Host.ID(rawValue: 99))) }
            == RuleViolationError(entity: "Crew", id: 2, member: "host", rule: .missingDestination("Host")))
        var moved = crew
        moved.hostID = Host.ID(rawValue: 99)
        let dangling = ruleError { try store.update(moved) }
        #expect(dangling == RuleViolationError(entity: "Crew", id: crew.id.rawValue, member: "host", rule: .missingDestination("Host")))
        #expect(dangling?.description == "Crew 1: host points to a Host that does not exist")

        // GRDB records and raw SQL on the store's writer, raw SQL inside store.write.
        let record = failure {
            try store.writer.write { db in
                var blues = Crew(name: "Blues", hostID: .unsaved)
                try blues.insert(db)
            }
        }
        #expect(record.flatMap { RuleViolationError($0) }?.rule == .required)
        #expect(ruleError {
            try store.write { db in try db.execute(sql: "UPDATE Crew SET hostID = 42 WHERE id = ?", arguments: [crew.id]) }
        } == RuleViolationError(entity: "Crew", id: crew.id.rawValue, member: "host", rule: .missingDestination("Host")))
        #expect(ruleError {
            try store.write { db in try db.execute(sql: "INSERT INTO Crew (name, hostID) VALUES ('x', NULL)") }
        } == RuleViolationError(entity: "Crew", id: nil, member: "host", rule: .required))
        #expect(try store.read { db in try db.fetchAll(Crew.self) } == [crew])
    }

    @Test func aLinkToAMissingObjectIsATypedError() throws {
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let host = try store.insert(Host(name: "eu"))
        let crew = try store.insert(Crew(name: "Reds", hostID: host.id))
        let ann = try store.insert(Person(name: "Ann"))
        #expect(ruleError { try store.write { db in try db.link(ann.id, Person.crews, Crew.ID(rawValue: 99)) } }
            == RuleViolationError(entity: "Person", id: ann.id.rawValue, member: "crews", rule: .missingDestination("Crew")))
        #expect(ruleError { try store.write { db in try db.link(crew.id, Crew.members, Person.ID(rawValue: 99)) } }
            == RuleViolationError(entity: "Crew", id: crew.id.rawValue, member: "members", rule: .missingDestination("Person")))
        try store.write { db in try db.link(ann.id, Person.crews, crew.id) }
        #expect(try store.read { db in try db.fetchAll(Person.crews, of: ann.id) } == [crew])
    }

    @Test func whatSQLiteRefusesAloneIsATypedErrorToo() throws {
        // Without the writer's checks (dropped here), SQLite's own refusals still map to
        // typed errors: the foreign key names nothing, the one-to-one's index names the key.
        let store = try Strata.Store.inMemory(schema: PairsModel.schema)
        let ann = try store.insert(Person(name: "Ann"))
        _ = try store.insert(Card(number: "1", ownerID: ann.id))
        try store.writer.writeWithoutTransaction { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND (name LIKE 'strata_keywatch%' OR name LIKE 'strata_onetoonewatch%')") {
                try db.execute(sql: "DROP TRIGGER temp.\(name)")
            }
        }
        let foreignKey = ruleError {
            try store.write { db in try db.execute(sql: "INSERT INTO Crew (name, hostID) VALUES ('x', 99)") }
        }
        #expect(foreignKey == RuleViolationError(entity: "Crew", id: nil, member: "", rule: .missingDestination("")))
        #expect(foreignKey?.description == "Crew: a key points to an object that does not exist")
        #expect(ruleError { try store.insert(Card(number: "2", ownerID: ann.id)) }
            == RuleViolationError(entity: "Card", id: nil, member: "owner", rule: Self.cardOwner))
    }

    // MARK: - Files written without the checks

    /// A file as an earlier version of Strata left it: the one-to-ones' keys with a plain
    /// index, and rows written by `body` without any of the store's checks.
    func olderFile(at path: String, _ body: (Database) throws -> Void) throws {
        try Strata.Store(schema: PairsModel.schema, path: path).close()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (table, column) in [("Card", "ownerID"), ("Person", "seatID"), ("Country", "flagID")] {
                try db.execute(sql: "DROP INDEX IF EXISTS strata_unique_\(table)_\(column)")
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS strata_index_\(table)_\(column) ON \(table)(\(column))")
            }
            try body(db)
        }
        try queue.close()
    }

    func indexes(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('Card', 'Person', 'Country') AND name LIKE 'strata%' ORDER BY name")
        }
    }

    @Test func anOlderFileGetsTheUniqueIndexes() throws {
        let directory = try TemporaryFolder()
        let path = directory.path("older.sqlite")
        try olderFile(at: path) { db in
            try db.execute(sql: "INSERT INTO Person (name) VALUES ('Ann'), ('Bob')")
            try db.execute(sql: "INSERT INTO Card (number, ownerID) VALUES ('1', 1), ('2', 2), ('3', NULL), ('4', NULL)")
        }
        #expect(try indexes(path).contains("strata_unique_Card_ownerID") == false)
        let store = try Strata.Store(schema: PairsModel.schema, path: path)
        #expect(try store.read { db in try db.fetchCount(Card.self) } == 4)
        #expect(ruleError { try store.insert(Card(number: "5", ownerID: Person.ID(rawValue: 1))) }?.rule == Self.cardOwner)
        try store.close()
        #expect(try indexes(path) == [
            "strata_index_Country_flagID", "strata_unique_Card_ownerID", "strata_unique_Country_flagID",
            "strata_unique_Person_seatID",
        ])
    }

    @Test func anOlderFileWhoseRowsBreakAOneToOneIsRefusedOrRepaired() throws {
        let directory = try TemporaryFolder()
        let path = directory.path("older.sqlite")
        try olderFile(at: path) { db in
            try db.execute(sql: "INSERT INTO Person (name) VALUES ('Ann'), ('Bob')")
            try db.execute(sql: "INSERT INTO Card (number, ownerID) VALUES ('1', 1), ('2', 1), ('3', 2), ('4', 1)")
            try db.execute(sql: "INSERT INTO Flag (colors) VALUES ('red')")   // no country
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refusal = failure { try Strata.Store(schema: PairsModel.schema, path: path) }
        #expect(refusal as? MigrationError == .ruleViolations([
            RuleViolationError(entity: "Card", id: 2, member: "owner", rule: Self.cardOwner),
            RuleViolationError(entity: "Card", id: 4, member: "owner", rule: Self.cardOwner),
            RuleViolationError(entity: "Flag", id: 1, member: "country", rule: .required),
        ]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the file is unchanged")

        // With data loss allowed, the rows that break the rules go; the first card stays.
        let store = try Strata.Store(schema: PairsModel.schema, path: path, options: .init(allowDataLoss: true))
        #expect(try store.read { db in try db.fetchAll(Card.self).map(\.number) } == ["1", "3"])
        #expect(try store.read { db in try db.fetchOne(Person.card, of: Person.ID(rawValue: 1)) }?.number == "1")
        #expect(try store.read { db in try db.fetchCount(Flag.self) } == 0)
        try store.close()
        #expect(try indexes(path).contains("strata_unique_Card_ownerID"))
    }
}

/// A temporary folder, removed when the value is released.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pairs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
