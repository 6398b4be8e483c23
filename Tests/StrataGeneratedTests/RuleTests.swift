import Foundation
import GRDB
import Strata
import Testing

// The rules of Rules.yaml at their boundaries (the last value that passes, the first that
// fails), through every write path: the typed API, raw SQL through the store's writer, and
// migrations of a file written by the model without its rules.
@Suite("Value and cardinality rules")
struct RuleTests {
    /// A UTC date from `yyyy-MM-dd HH:mm:ss.SSS`.
    static func date(_ text: String) -> Foundation.Date {
        Foundation.Date.fromDatabaseValue(text.databaseValue)!
    }

    static let validReading = Reading(level: 0, wide: 0, ratio: 0.5, takenAt: date("2024-06-01 12:00:00.000"))

    /// Runs `write` on a fresh in-memory store; the rule error it throws, if any.
    func violation(_ write: (Strata.Store) throws -> Void) throws -> RuleViolationError? {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        do {
            try write(store)
            return nil
        } catch let error as RuleViolationError {
            return error
        }
    }

    func insertViolation(_ reading: Reading) throws -> RuleViolationError? {
        try violation { store in _ = try store.insert(reading) }
    }

    func insertViolation(_ label: Caption) throws -> RuleViolationError? {
        try violation { store in _ = try store.insert(label) }
    }

    // MARK: - Numbers and dates, typed API

    @Test func integerBounds() throws {
        var reading = Self.validReading
        for (level, broken) in [(-10, nil), (10, nil), (-11, "min -10"), (11, "max 10")] as [(Int, String?)] {
            reading.level = level
            #expect(try insertViolation(reading)?.rule.description == broken, "level \(level)")
        }
        reading.level = 0
        for (wide, broken) in [
            (Int.min + 1, nil), (Int.max - 1, nil), (Int.min, "min -9223372036854775807"),
            (Int.max, "max 9223372036854775806"),
        ] as [(Int, String?)] {
            reading.wide = wide
            #expect(try insertViolation(reading)?.rule.description == broken, "wide \(wide)")
        }
        reading.wide = 0
        for (small, broken) in [(nil, nil), (1, nil), (Int16.max, nil), (0, "min 1")] as [(Int16?, String?)] {
            reading.small = small
            #expect(try insertViolation(reading)?.rule.description == broken, "small \(String(describing: small))")
        }
    }

    @Test func doubleBounds() throws {
        var reading = Self.validReading
        for (ratio, broken) in [
            (0.0, nil), (-0.0, nil), (1.5, nil), (-Double.leastNonzeroMagnitude, "min 0"), (1.5.nextUp, "max 1.5"),
            (Double.infinity, "max 1.5"), (-Double.infinity, "min 0"),
        ] as [(Double, String?)] {
            reading.ratio = ratio
            #expect(try insertViolation(reading)?.rule.description == broken, "ratio \(ratio)")
        }
    }

    @Test func floatBounds() throws {
        // A Float's bound widens to the Float nearest to it when that is further out.
        var reading = Self.validReading
        for (weight, broken) in [
            (Float(0.1), nil), (Float(0.3), nil), (Float(0.1).nextDown, "min 0.1"),
            (Float(0.3).nextUp, "max 0.30000001192092896"),
        ] as [(Float, String?)] {
            reading.weight = weight
            #expect(try insertViolation(reading)?.rule.description == broken, "weight \(weight)")
        }
    }

    @Test func dateBounds() throws {
        var reading = Self.validReading
        for (text, broken) in [
            ("2000-01-01 00:00:00.000", nil), ("2099-12-31 23:59:59.999", nil),
            ("1999-12-31 23:59:59.999", "min 2000-01-01 00:00:00.000"),
            ("2100-01-01 00:00:00.000", "max 2099-12-31 23:59:59.999"),
        ] as [(String, String?)] {
            reading.takenAt = Self.date(text)
            #expect(try insertViolation(reading)?.rule.description == broken, "takenAt \(text)")
        }
    }

    @Test func errorNamesEntityIdAndRule() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        var reading = try store.insert(Self.validReading)
        reading.level = 11
        let error = try #require(throws: RuleViolationError.self) { try store.update(reading) }
        #expect(error == RuleViolationError(entity: "Reading", id: reading.id.rawValue, member: "level", rule: .max("10")))
        #expect(error.description == "Reading \(reading.id.rawValue): level is greater than max 10")
        #expect(try store.fetchOne(Reading.self, id: reading.id)?.level == 0, "nothing half-written")
        // A refused statement fails the whole transaction.
        #expect(throws: RuleViolationError.self) {
            try store.write { db in
                _ = try db.insert(Self.validReading)
                try db.execute(sql: "UPDATE Reading SET level = 99")
            }
        }
        #expect(try store.fetchCount(Reading.self) == 1)
    }

    // MARK: - Strings, typed API

    @Test func lengths() throws {
        // Lengths count Unicode code points, as SQLite's length() does.
        for (title, broken) in [
            ("a", nil), ("abcde", nil), ("", "minLength 1"), ("abcdef", "maxLength 5"),
            ("ééééé", nil), // five precomposed é: five code points
            ("e\u{301}e\u{301}e", nil), // three Characters, five code points
            ("e\u{301}e\u{301}e\u{301}", "maxLength 5"), // three Characters, six code points
            ("👩‍👩‍👧", nil), // one Character, five code points
            ("👩‍👩‍👧‍👦", "maxLength 5"), // one Character, seven code points
        ] as [(String, String?)] {
            #expect(try insertViolation(Caption(title: title))?.rule.description == broken, "title \(title.debugDescription)")
        }
        #expect(try insertViolation(Caption(title: "a", note: "abc")) == nil)
        #expect(try insertViolation(Caption(title: "a", note: "abcd"))?.description.hasSuffix("note is longer than maxLength 3") == true)
    }

    @Test func pattern() throws {
        for (code, broken) in [
            (nil, nil), ("AB-1", nil), ("XY-0123456789", nil), ("AB-", "pattern '[A-Z]{2}-[0-9]+'"),
            ("ab-1", "pattern '[A-Z]{2}-[0-9]+'"), ("AB-1 ", "pattern '[A-Z]{2}-[0-9]+'"),
            ("xAB-1", "pattern '[A-Z]{2}-[0-9]+'"), ("", "pattern '[A-Z]{2}-[0-9]+'"),
        ] as [(String?, String?)] {
            #expect(try insertViolation(Caption(title: "a", code: code))?.rule.description == broken, "code \(String(describing: code))")
        }
    }

    // MARK: - Raw SQL through the writer

    @Test func rawSQLThroughTheWriter() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        let label = try store.insert(Caption(title: "a"))
        func rawViolation(_ sql: String) -> RuleViolationError? {
            do {
                try store.writer.write { db in try db.execute(sql: sql) }
                return nil
            } catch {
                return RuleViolationError(error)
            }
        }
        let id = label.id.rawValue
        #expect(rawViolation("UPDATE Caption SET title = 'abcde' WHERE id = \(id)") == nil)
        #expect(rawViolation("UPDATE Caption SET title = 'abcdef' WHERE id = \(id)")
            == RuleViolationError(entity: "Caption", id: id, member: "title", rule: .maxLength(5)))
        #expect(rawViolation("UPDATE Caption SET code = 'AB-12' WHERE id = \(id)") == nil)
        #expect(rawViolation("UPDATE Caption SET code = 'AB12' WHERE id = \(id)")?.rule == .pattern("[A-Z]{2}-[0-9]+"))
        #expect(rawViolation("INSERT INTO Reading (id, level, wide, ratio, takenAt) VALUES (7, 10, 0, 1.5, '2000-01-01 00:00:00.000')") == nil)
        #expect(rawViolation("INSERT INTO Reading (id, level, wide, ratio, takenAt) VALUES (8, -11, 0, 0, '2000-01-01 00:00:00.000')")
            == RuleViolationError(entity: "Reading", id: 8, member: "level", rule: .min("-10")))
        #expect(rawViolation("UPDATE Reading SET takenAt = '1999-12-31 23:59:59.999' WHERE id = 7")?.description
            == "Reading 7: takenAt is less than min 2000-01-01 00:00:00.000")
        // The edges of every bound, through raw SQL.
        let reading = try store.insert(Self.validReading).id.rawValue
        for (assignment, broken) in [
            ("wide = -9223372036854775807", nil), ("wide = 9223372036854775806", nil),
            ("wide = -9223372036854775808", "min -9223372036854775807"), ("wide = 9223372036854775807", "max 9223372036854775806"),
            ("ratio = 0", nil), ("ratio = 1.5", nil), ("ratio = -4.9e-324", "min 0"), ("ratio = 1.5000000000000002", "max 1.5"),
            ("small = NULL", nil), ("small = 1", nil), ("small = 0", "min 1"),
            ("takenAt = '2099-12-31 23:59:59.999'", nil), ("takenAt = '2100-01-01 00:00:00.000'", "max 2099-12-31 23:59:59.999"),
        ] as [(String, String?)] {
            #expect(rawViolation("UPDATE Reading SET \(assignment) WHERE id = \(reading)")?.rule.description == broken, "\(assignment)")
        }
        // Through the store's write, the same statement is the typed error.
        #expect(throws: RuleViolationError(entity: "Caption", id: id, member: "title", rule: .minLength(1))) {
            try store.write { db in try db.execute(sql: "UPDATE Caption SET title = '' WHERE id = \(id)") }
        }
        #expect(try store.fetchOne(Caption.self, id: label.id)?.title == "abcde")
    }

    @Test func otherConnectionsKeepBoundsButNotPatterns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rules.sqlite").path
        _ = try Strata.Store(schema: RulesModel.schema, path: path)
        // Another program: a plain connection, without Strata's functions.
        let other = try DatabaseQueue(path: path)
        let error = try #require(throws: DatabaseError.self) {
            try other.write { db in try db.execute(sql: "INSERT INTO Caption (title) VALUES ('abcdef')") }
        }
        // The file's trigger cannot name the row.
        #expect(RuleViolationError(error) == RuleViolationError(entity: "Caption", id: nil, member: "title", rule: .maxLength(5)))
        #expect(RuleViolationError(error)?.description == "Caption: title is longer than maxLength 5")
        // The pattern is checked by the store's connections only.
        try other.write { db in try db.execute(sql: "INSERT INTO Caption (title, code) VALUES ('a', 'lower')") }
    }

    // MARK: - Counts, at commit

    @Test func countsAreCheckedAtCommit() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        // A crate needs a bottle: inserting it alone fails when the transaction commits.
        let alone = try #require(throws: RuleViolationError.self) { try store.insert(Crate(name: "empty")) }
        #expect(alone.member == "bottles" && alone.rule == .minCount(1))
        #expect(alone.description.hasSuffix("bottles has fewer than 1 objects (minCount 1)"))
        #expect(try store.fetchCount(Crate.self) == 0)
        // Within one transaction, it may be empty for a while.
        let crate = try store.write { db in
            let crate = try db.insert(Crate(name: "c"))
            for name in ["1", "2", "3"] { _ = try db.insert(Bottle(name: name, crateID: crate.id)) }
            return crate
        }
        #expect(try store.fetchCount(Bottle.self) == 3, "count = maxCount passes")
        let fourth = try #require(throws: RuleViolationError.self) {
            try store.insert(Bottle(name: "4", crateID: crate.id))
        }
        #expect(fourth == RuleViolationError(entity: "Crate", id: crate.id.rawValue, member: "bottles", rule: .maxCount(3)))
        // Down to one (= minCount) passes; to zero fails, also through raw SQL on the writer.
        try store.writer.write { db in try db.execute(sql: "DELETE FROM Bottle WHERE name IN ('2', '3')") }
        #expect(throws: RuleViolationError(entity: "Crate", id: crate.id.rawValue, member: "bottles", rule: .minCount(1))) {
            try store.writer.write { db in try db.execute(sql: "UPDATE Bottle SET crateID = NULL") }
        }
        #expect(try store.fetchCount(Bottle.self, where: Bottle.crateID == crate.id) == 1, "rolled back")
        // Deleting the crate cascades to its bottles: no count is left to check.
        _ = try store.delete(crate)
        #expect(try store.fetchCount(Bottle.self) == 0)
    }

    @Test func manyToManyMaxCount() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        let (crate, stickers) = try store.write { db in
            let crate = try db.insert(Crate(name: "c"))
            _ = try db.insert(Bottle(name: "b", crateID: crate.id))
            let stickers = try ["a", "b", "c"].map { try db.insert(Sticker(name: $0)) }
            return (crate, stickers)
        }
        try store.write { db in try db.link(crate.id, Crate.stickers, stickers[0].id) }
        try store.write { db in try db.link(crate.id, Crate.stickers, stickers[1].id) }
        #expect(throws: RuleViolationError(entity: "Crate", id: crate.id.rawValue, member: "stickers", rule: .maxCount(2))) {
            try store.write { db in try db.link(crate.id, Crate.stickers, stickers[2].id) }
        }
        try store.write { db in try db.unlink(crate.id, Crate.stickers, stickers[0].id) }
        try store.write { db in try db.link(crate.id, Crate.stickers, stickers[2].id) }
    }

    // MARK: - Migrations

    /// The Rules model without any rule: the "older model" of a file.
    static let withoutRules: SchemaDescriptor = {
        var schema = RulesModel.schema
        for e in schema.entities.indices {
            for a in schema.entities[e].attributes.indices { schema.entities[e].attributes[a].rules = ValueRules() }
            for r in schema.entities[e].relationships.indices {
                schema.entities[e].relationships[r].minCount = nil
                schema.entities[e].relationships[r].maxCount = nil
            }
        }
        return schema
    }()

    @Test func addingRulesToRowsThatBreakThem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rules.sqlite").path
        do {
            let old = try Strata.Store(schema: Self.withoutRules, path: path)
            try old.write { db in
                try db.execute(sql: """
                    INSERT INTO Reading (id, level, wide, ratio, takenAt) VALUES
                      (1, 10, 0, 1.5, '2000-01-01 00:00:00.000'),
                      (2, 11, 0, 0, '2000-01-01 00:00:00.000'),
                      (3, 0, 0, 0, '1999-12-31 23:59:59.999');
                    INSERT INTO Caption (id, title, code) VALUES (1, 'abcde', 'AB-1'), (2, 'abcdef', NULL), (3, 'a', 'no');
                    INSERT INTO Crate (id, name) VALUES (1, 'full'), (2, 'empty');
                    INSERT INTO Bottle (name, crateID) VALUES ('b', 1);
                    """)
            }
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refusal = try #require(throws: MigrationError.self) { _ = try Strata.Store(schema: RulesModel.schema, path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "a refused migration leaves the file as it was")
        guard case .ruleViolations(let violations) = refusal else {
            Issue.record("expected rule violations, got \(refusal)")
            return
        }
        #expect(Set(violations.map(\.description)) == [
            "Reading 2: level is greater than max 10",
            "Reading 3: takenAt is less than min 2000-01-01 00:00:00.000",
            "Caption 2: title is longer than maxLength 5",
            "Caption 3: code does not match pattern '[A-Z]{2}-[0-9]+'",
            "Crate 2: bottles has fewer than 1 objects (minCount 1)",
        ])
        // Refused: the file still opens with the older model, unchanged.
        #expect(try Strata.Store(schema: Self.withoutRules, path: path).fetchCount(Reading.self) == 3)
        // With data loss allowed, the rows that break a rule are deleted.
        let store = try Strata.Store(schema: RulesModel.schema, path: path, options: .init(allowDataLoss: true))
        #expect(try store.fetchAll(Reading.self).map(\.id.rawValue) == [1])
        #expect(try store.fetchAll(Caption.self).map(\.id.rawValue) == [1])
        #expect(try store.fetchAll(Crate.self).map(\.id.rawValue) == [1])
        // The rules now hold for new writes.
        #expect(throws: RuleViolationError.self) {
            try store.write { db in try db.execute(sql: "UPDATE Reading SET level = 11") }
        }
    }

    @Test func removingRules() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rules.sqlite").path
        do {
            let store = try Strata.Store(schema: RulesModel.schema, path: path)
            _ = try store.insert(Self.validReading)
        }
        let store = try Strata.Store(schema: Self.withoutRules, path: path)
        try store.writer.write { db in
            try db.execute(sql: "UPDATE Reading SET level = 1000")
            try db.execute(sql: "INSERT INTO Caption (title, code) VALUES ('', 'lower')")
            try db.execute(sql: "INSERT INTO Crate (name) VALUES ('empty')")
        }
        #expect(try store.fetchAll(Reading.self).map(\.level) == [1000])
        let triggers = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'strata_rule%'")
        }
        #expect(triggers.isEmpty)
    }
}

// Required to-ones that the store checks when the transaction commits.
@Suite("Required to-ones checked at commit")
struct RequiredAtCommitTests {
    @Test func nullifyLeavesTheKeyUnsetUntilCommit() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        let (inbox, archive, document) = try store.write { db in
            let inbox = try db.insert(Folder(name: "Inbox"))
            let archive = try db.insert(Folder(name: "Archive"))
            let document = try db.insert(Document(name: "d", folderID: inbox.id))
            return (inbox, archive, document)
        }
        // Deleting the folder nullifies the document's folder: refused at commit.
        let error = try #require(throws: RuleViolationError.self) { try store.delete(inbox) }
        #expect(error == RuleViolationError(entity: "Document", id: document.id.rawValue, member: "folder", rule: .required))
        #expect(error.description == "Document \(document.id.rawValue): folder is required but not set")
        #expect(try store.fetchCount(Folder.self) == 2, "rolled back")
        // Within the transaction the key is unset (.unsaved) and may be set again.
        try store.write { db in
            _ = try db.delete(inbox)
            var moved = try #require(try db.fetchOne(Document.self, id: document.id))
            #expect(moved.folderID == .unsaved)
            moved.folderID = archive.id
            _ = try db.update(moved)
        }
        #expect(try store.fetchOne(Document.self, id: document.id)?.folderID == archive.id)
        // Deleting the document in the same transaction also commits.
        try store.write { db in
            _ = try db.delete(archive)
            _ = try db.delete(Document.self, id: document.id)
        }
        #expect(try store.fetchCount(Document.self) == 0)
    }

    @Test func aCycleOfRequiredToOnes() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        // The team is inserted first, its captain unset, and set before the commit.
        let team = try store.write { db in
            var team = try db.insert(Team(name: "Reds", captainID: .unsaved))
            let captain = try db.insert(Player(name: "Ann", teamID: team.id))
            team.captainID = captain.id
            _ = try db.update(team)
            return team
        }
        #expect(try store.fetchOne(Team.self, id: team.id)?.captainID.isSaved == true)
        // Left unset, the commit is refused and names the team.
        let error = try #require(throws: RuleViolationError.self) {
            try store.write { db in
                let team = try db.insert(Team(name: "Blues", captainID: .unsaved))
                _ = try db.insert(Player(name: "Bob", teamID: team.id))
            }
        }
        #expect(error.entity == "Team" && error.member == "captain" && error.rule == .required)
        #expect(try store.fetchCount(Team.self) == 1)
        // Raw SQL through the writer: SQLite's deferred foreign key refuses the commit.
        let raw = try #require(throws: DatabaseError.self) {
            try store.writer.write { db in try db.execute(sql: "INSERT INTO Team (name, captainID) VALUES ('Greens', 0)") }
        }
        #expect(raw.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY)
        // Deleting the captain unsets the team's captain (nullify): refused unless replaced.
        #expect(throws: RuleViolationError.self) {
            try store.write { db in try db.execute(sql: "DELETE FROM Player") }
        }
        // Deleting the team cascades to its players.
        _ = try store.write { db in try db.delete(Team.self, id: team.id) }
        #expect(try store.fetchCount(Player.self) == 0)
    }
}

extension RequiredAtCommitTests {
    @Test func aFailedStatementLeavesNoStaleCount() throws {
        let store = try Strata.Store.inMemory(schema: RulesModel.schema)
        let crate = try store.write { db in
            let crate = try db.insert(Crate(name: "c"))
            for name in ["1", "2", "3"] { _ = try db.insert(Bottle(name: name, crateID: crate.id)) }
            return crate
        }
        // A fourth bottle whose statement fails (a rule of another entity, in its trigger
        // order) is undone; the transaction goes on and commits with three.
        try store.write { db in
            #expect(throws: (any Error).self) {
                try db.execute(sql: """
                    INSERT INTO Bottle (name, crateID) VALUES ('4', \(crate.id.rawValue)), ('5', 999999)
                    """)
            }
        }
        #expect(try store.fetchCount(Bottle.self) == 3)
    }

    @Test func aMigrationThatMakesARequiredToOneCheckedAtCommit() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-rules-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rules.sqlite").path
        // The older model deleted a folder's documents with it.
        var older = RulesModel.schema
        let folderIndex = try #require(older.entities.firstIndex { $0.name == "Folder" })
        older.entities[folderIndex].relationships[0].deleteRule = .cascade
        do {
            let store = try Strata.Store(schema: older, path: path)
            try store.write { db in
                let inbox = try db.insert(Folder(name: "Inbox"))
                _ = try db.insert(Document(name: "d", folderID: inbox.id))
            }
        }
        let store = try Strata.Store(schema: RulesModel.schema, path: path)
        let inbox = try #require(try store.fetchAll(Folder.self).first)
        #expect(throws: RuleViolationError.self) { try store.delete(inbox) }
        #expect(try store.fetchCount(Document.self) == 1)
    }
}
