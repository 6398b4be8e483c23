import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

@Suite("Conflicts end the same on every device, and are recorded")
struct SyncConflictTests {
    /// A board with one card, on both devices.
    func twoDevices(_ test: TestServer, _ folder: TemporaryDirectory) async throws -> (Device, Device) {
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            _ = try db.insert(Card(title: "Card", boardID: board.id))
        }
        try await settle([a, b])
        return (a, b)
    }

    @Test func anUpdateOfAnObjectDeletedOnTheServerGivesWayToTheDeletion() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.delete(try db.fetchAll(Card.self)[0]) }
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.title = "Edited offline"
            _ = try db.update(card)
        }
        try await a.sync.sync()
        let report = try await b.sync.sync()  // B's update reaches a server without the card
        #expect(report.changesRefusedByServer == 1)
        try await settle([a, b])
        #expect(try await b.store.fetchCount(Card.self) == 0)
        let conflicts = try b.sync.conflicts()
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.kind == .refusedByServer)
        #expect(conflicts.first?.localValues?["title"] == "Edited offline")
        try await expectConverged([a, b], test)
    }

    @Test func aDeletionPulledOverAnEditNotPushedYetIsRecorded() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.delete(try db.fetchAll(Card.self)[0]) }
        try await a.sync.sync()
        try await b.store.write { db in
            var card = try db.fetchAll(Card.self)[0]
            card.points = 9
            _ = try db.update(card)
        }
        try await b.sync.pull()  // pulled before B pushes its edit
        #expect(try await b.store.fetchCount(Card.self) == 0)
        #expect(try b.sync.conflicts().map(\.kind) == [.deletedOnServer])
        #expect(try b.sync.conflicts().first?.localValues?["points"] == "9")
        try await settle([a, b])
        try await expectConverged([a, b], test)
    }

    @Test func aCascadeOnOneDeviceWinsOverChildrenAddedOnAnother() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.delete(try db.fetchAll(Board.self)[0]) }  // cascades to the card
        try await b.store.write { db in
            let board = try db.fetchAll(Board.self)[0]
            _ = try db.insert(Card(title: "Added offline", boardID: board.id))
        }
        try await a.sync.sync()
        try await b.sync.sync()
        try await settle([a, b])
        for device in [a, b] {
            #expect(try await device.store.fetchCount(Board.self) == 0)
            #expect(try await device.store.fetchCount(Card.self) == 0)
        }
        let conflicts = try b.sync.conflicts()
        #expect(conflicts.contains { $0.kind == .refusedByServer && $0.localValues?["title"] == "Added offline" })
        try await expectConverged([a, b], test)
    }

    @Test func aCardTakenHereWithARefusedBoardComesBackWhereTheServerHasIt() async throws {
        // B moves the card into a board of its own that the server then refuses, while the
        // server has the card in a board B could not take (its name clashes with one B made):
        // the card goes with B's refused board here, but the server still holds it, and the
        // server is read again.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let moved = try db.insert(Board(name: "Moved"))
            _ = try db.insert(Board(name: "Taken"))
            try db.execute(sql: "UPDATE Card SET boardID = ?", arguments: [moved.id])
        }
        try await a.sync.sync()
        try await b.store.write { db in
            _ = try db.insert(Board(name: "Moved"))
            let mine = try db.insert(Board(name: "Taken"))
            try db.execute(sql: "UPDATE Card SET boardID = ?", arguments: [mine.id])
        }
        try await b.sync.pull()  // a's boards clash with b's: not applied here; the card's base moves to "Moved"
        try await b.sync.push()  // b's boards are refused; "Taken" goes, and takes the card here
        #expect(try await b.store.fetchCount(Card.self) == 0)
        #expect(try b.sync.conflicts().contains { $0.kind == .notAppliedHere && $0.table == "Card" })
        try await settle([a, b])
        try await expectConverged([a, b], test)
        let cards = try b.store.read { db in
            try Row.fetchAll(db, sql: "SELECT Card.title, Board.name FROM Card JOIN Board ON Board.id = Card.boardID")
        }
        #expect(cards.map { "\($0[0] as String) in \($0[1] as String)" } == ["Card in Moved"])
    }

    @Test func aUniqueValueFreedAndReusedInOnePushIsApplied() async throws {
        // One device deletes a board and makes a new one of the same name, and renames another
        // and gives its old name to a new one, all in one push: the push applies new objects
        // before updates and deletions, and each new board is applied on its second try, after
        // the change that frees its name. Nothing is refused.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Archive")) }
        try await settle([a, b])
        try await a.store.write { db in
            try db.execute(sql: "DELETE FROM Board WHERE name = 'Inbox'")
            _ = try db.insert(Board(name: "Inbox", position: 1))
            try db.execute(sql: "UPDATE Board SET name = 'Old archive' WHERE name = 'Archive'")
            _ = try db.insert(Board(name: "Archive", position: 2))
        }
        let report = try await a.sync.sync()
        #expect(report.changesRefusedByServer == 0)
        #expect(try a.sync.conflicts().isEmpty)
        try await settle([a, b])
        try await expectConverged([a, b], test)
        let boards = try await b.store.fetchAll(Board.self).map { "\($0.name) \($0.position)" }.sorted()
        #expect(boards == ["Archive 2", "Inbox 1", "Old archive 0"])
    }

    @Test func twoDevicesInsertingTheSameUniqueValueKeepTheFirstToReachTheServer() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Inbox", position: 1)) }
        try await b.store.write { db in _ = try db.insert(Board(name: "Inbox", position: 2)) }
        try await a.sync.sync()
        let report = try await b.sync.sync()
        #expect(report.changesRefusedByServer == 1)
        try await settle([a, b])
        for device in [a, b] {
            #expect(try await device.store.fetchAll(Board.self).map(\.position) == [1])
        }
        let conflict = try #require(try b.sync.conflicts().first)
        #expect(conflict.kind == .refusedByServer)
        #expect(conflict.reason.contains("23505"))  // unique_violation
        #expect(conflict.localValues?["position"] == "2")
        try await expectConverged([a, b], test)
    }

    @Test func aValueTheServerRefusesIsReplacedByTheServers() async throws {
        // A device on an older model without the length rule pushes a title that is too long.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, _) = try await twoDevices(test, folder)
        var lax = StrataModel.schema
        let card = lax.entities.firstIndex { $0.name == "Card" }!
        let title = lax.entities[card].attributes.firstIndex { $0.name == "title" }!
        lax.entities[card].attributes[title].rules = ValueRules()
        let c = try Device(folder.path("c.sqlite"), test, schema: lax)
        defer { Task { await a.close(); await c.close() } }
        try await c.sync.sync()
        try await c.store.write { db in
            try db.execute(sql: "UPDATE Card SET title = ?", arguments: [String(repeating: "x", count: 80)])
        }
        let report = try await c.sync.sync()
        #expect(report.changesRefusedByServer == 1)
        try await c.sync.sync()
        #expect(try await c.store.read { db in try String.fetchOne(db, sql: "SELECT title FROM Card") } == "Card")
        #expect(try c.sync.conflicts().first?.reason.contains("23514") == true)  // check_violation
        try await expectConverged([a, c], test)
    }
}
