import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// `minCount`/`maxCount` across devices: two devices that each stay in range offline can make
/// a merged count out of range; the server refuses the changes of the later push that take
/// it there (reported to that device, which takes the server's state), so every device
/// converges and the rest of the push is applied. A count out of range that still reaches a
/// device (a service that bypassed the server's check) is set aside there, not applied,
/// recorded, and the rest of the pull goes on.
@Suite("Count rules hold across devices")
struct SyncCountRuleTests {
    /// The sync id of `id` of `entity` on `device`, lowercase.
    func uuid(_ device: Device, _ entity: String, _ id: Int64) throws -> String {
        try #require(try device.sync.syncID(of: entity, id: id)).uuidString.lowercased()
    }

    /// How many bottles the server's crate `crate` (a sync id) holds.
    func serverBottles(_ test: TestServer, crate: String) async throws -> Int {
        Int(try await test.psql("SELECT count(*) FROM \"Bottle_crates\" WHERE \"crateID\" = '\(crate)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The names of the bottles of the crate named `crate` in `device`'s store, sorted.
    func bottles(_ device: Device, crate: String) throws -> [String] {
        try device.store.read { db in
            try String.fetchAll(db, sql: """
                SELECT b.name FROM Bottle b JOIN Bottle_crates j ON j.bottleID = b.id JOIN Crate c ON c.id = j.crateID \
                WHERE c.name = ? ORDER BY b.name
                """, arguments: [crate])
        }
    }

    /// Two devices with crate "C" holding `inCrate` of the bottles `names` (the others loose).
    func twoDevices(
        _ test: TestServer, _ folder: TemporaryDirectory, names: [String], inCrate: Int
    ) async throws -> (Device, Device) {
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        try await a.store.write { db in
            let crate = try db.insert(Crate(name: "C"))
            for (index, name) in names.enumerated() {
                let bottle = try db.insert(Bottle(name: name))
                if index < inCrate { try db.link(crate.id, Crate.bottles, bottle.id) }
            }
        }
        try await settle([a, b])
        return (a, b)
    }

    func bottleID(_ device: Device, _ name: String) throws -> Bottle.ID {
        Bottle.ID(try device.store.read { db in
            try #require(try Int64.fetchOne(db, sql: "SELECT id FROM Bottle WHERE name = ?", arguments: [name]))
        })
    }

    func crateID(_ device: Device) throws -> Crate.ID {
        Crate.ID(try device.store.read { db in try #require(try Int64.fetchOne(db, sql: "SELECT id FROM Crate WHERE name = 'C'")) })
    }

    func uuid<Entity>(_ device: Device, _ entity: String, _ id: EntityID<Entity>) throws -> String {
        try uuid(device, entity, id.rawValue)
    }

    @Test func linksPastMaxCountFromTwoDevicesRefuseTheLaterPushsLast() async throws {
        // maxCount 3. The crate holds b1. A links b2 and b3 (3 here), B links b4 (2 there);
        // B pushes first. A's push would make 4: its last link (b3) is refused, its first
        // (b2) and the rest of its push (a rename, a new bottle) are applied.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder, names: ["b1", "b2", "b3", "b4"], inCrate: 1)
        defer { Task { await a.close(); await b.close() } }
        let crate = try crateID(a)
        let (b2, b3) = (try bottleID(a, "b2"), try bottleID(a, "b3"))
        try await a.store.write { db in
            try db.link(crate, Crate.bottles, b2)
            try db.link(crate, Crate.bottles, b3)
            try db.execute(sql: "UPDATE Bottle SET name = 'b1 renamed' WHERE name = 'b1'")
            _ = try db.insert(Bottle(name: "new on A"))
        }
        let b4 = try bottleID(b, "b4")
        try await b.store.write { db in try db.link(try crateID(b), Crate.bottles, b4) }
        let reportB = try await b.sync.sync()
        #expect(reportB.changesRefusedByServer == 0)
        let reportA = try await a.sync.sync()
        #expect(reportA.changesRefusedByServer == 1)
        try await settle([a, b])
        try await expectConverged([a, b], test)

        let crateUUID = try uuid(a, "Crate", crate)
        #expect(try await serverBottles(test, crate: crateUUID) == 3)
        for device in [a, b] {
            #expect(try bottles(device, crate: "C") == ["b1 renamed", "b2", "b4"])
            #expect(try await device.store.fetchCount(Bottle.self) == 5)
        }
        let conflicts = try a.sync.conflicts()
        #expect(conflicts.count == 1)
        let refusal = try #require(conflicts.first)
        #expect(refusal.kind == .refusedByServer)
        #expect(refusal.table == "Bottle_crates")
        #expect(refusal.reason.contains("maxCount 3"), "\(refusal.reason)")
        #expect(refusal.localValues?["bottleID"] == .some(try uuid(a, "Bottle", b3)))
        #expect(try b.sync.conflicts().isEmpty)
    }

    @Test func unlinksPastMinCountFromTwoDevicesRefuseTheLaterPushsUnlink() async throws {
        // minCount 1. The crate holds b1 and b2; A unlinks b1, B unlinks b2, B pushes first:
        // A's unlink is refused and b1 goes back into the crate on A; A's rename of b2 is applied.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, b) = try await twoDevices(test, folder, names: ["b1", "b2"], inCrate: 2)
        defer { Task { await a.close(); await b.close() } }
        let crate = try crateID(a)
        let b1 = try bottleID(a, "b1")
        try await a.store.write { db in
            try db.unlink(crate, Crate.bottles, b1)
            try db.execute(sql: "UPDATE Bottle SET name = 'b2 seen by A' WHERE name = 'b2'")
        }
        try await b.store.write { db in try db.unlink(try crateID(b), Crate.bottles, try bottleID(b, "b2")) }
        #expect(try await b.sync.sync().changesRefusedByServer == 0)
        #expect(try await a.sync.sync().changesRefusedByServer == 1)
        try await settle([a, b])
        try await expectConverged([a, b], test)

        #expect(try await serverBottles(test, crate: try uuid(a, "Crate", crate)) == 1)
        for device in [a, b] {
            #expect(try bottles(device, crate: "C") == ["b1"])
            #expect(Set(try await device.store.fetchAll(Bottle.self).map(\.name)) == ["b1", "b2 seen by A"])
        }
        let conflicts = try a.sync.conflicts()
        #expect(conflicts.map(\.kind) == [.refusedByServer])
        #expect(conflicts.first?.table == "Bottle_crates")
        #expect(conflicts.first?.reason.contains("minCount 1") == true, "\(conflicts.first?.reason ?? "")")
        #expect(conflicts.first?.localValues?["bottleID"] == .some(try uuid(a, "Bottle", b1)))
        #expect(try b.sync.conflicts().isEmpty)
    }

    @Test func aOneToManyKeepsItsCountsWhenDestinationsMoveOrGo() async throws {
        // Shelf.bottles: minCount 1, maxCount 2, held by each bottle's shelfID. Shelf 1 holds
        // x, shelf 2 holds y and z. A moves y to shelf 1 and renames z; B adds a bottle w to
        // shelf 1 and pushes first. A's move would make shelf 1 hold 3: refused (y stays on
        // shelf 2, on A too); the rename is applied.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let one = try db.insert(Shelf(name: "1")), two = try db.insert(Shelf(name: "2"))
            _ = try db.insert(Bottle(name: "x", shelfID: one.id))
            _ = try db.insert(Bottle(name: "y", shelfID: two.id))
            _ = try db.insert(Bottle(name: "z", shelfID: two.id))
        }
        try await settle([a, b])
        let one = try await a.store.read { db in try #require(try Int64.fetchOne(db, sql: "SELECT id FROM Shelf WHERE name = '1'")) }
        let oneOnB = try await b.store.read { db in try #require(try Int64.fetchOne(db, sql: "SELECT id FROM Shelf WHERE name = '1'")) }
        try await a.store.write { db in
            try db.execute(sql: "UPDATE Bottle SET shelfID = ? WHERE name = 'y'", arguments: [one])
            try db.execute(sql: "UPDATE Bottle SET name = 'z renamed' WHERE name = 'z'")
        }
        try await b.store.write { db in _ = try db.insert(Bottle(name: "w", shelfID: Shelf.ID(oneOnB))) }
        #expect(try await b.sync.sync().changesRefusedByServer == 0)
        #expect(try await a.sync.sync().changesRefusedByServer == 1)
        try await settle([a, b])
        try await expectConverged([a, b], test)
        let onShelves = { (device: Device) throws -> [String] in
            try device.store.read { db in
                try String.fetchAll(db, sql: "SELECT s.name || ':' || b.name FROM Bottle b JOIN Shelf s ON s.id = b.shelfID ORDER BY 1")
            }
        }
        for device in [a, b] { #expect(try onShelves(device) == ["1:w", "1:x", "2:y", "2:z renamed"]) }
        let conflicts = try a.sync.conflicts()
        #expect(conflicts.map(\.kind) == [.refusedByServer])
        #expect(conflicts.first?.table == "Bottle")
        #expect(conflicts.first?.reason.contains("maxCount 2") == true, "\(conflicts.first?.reason ?? "")")

        // minCount 1 through deletions: shelf 1 holds w and x; A deletes x, B deletes w, B
        // first. A's deletion is refused, and x comes back on A.
        try await a.store.write { db in try db.execute(sql: "DELETE FROM Bottle WHERE name = 'x'") }
        try await b.store.write { db in try db.execute(sql: "DELETE FROM Bottle WHERE name = 'w'") }
        #expect(try await b.sync.sync().changesRefusedByServer == 0)
        #expect(try await a.sync.sync().changesRefusedByServer == 1)
        try await settle([a, b])
        try await expectConverged([a, b], test)
        for device in [a, b] { #expect(try onShelves(device) == ["1:x", "2:y", "2:z renamed"]) }
        #expect(try a.sync.conflicts().last?.reason.contains("minCount 1") == true)
        #expect(try b.sync.conflicts().isEmpty)
    }

    @Test func theServerTablesRefuseCountsOutOfRangeFromAnyWriter() async throws {
        // Another service writing the server's tables with SQL is held to the count rules at
        // its commit (a deferred constraint trigger): an owner made with too few, a fourth link.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, _) = try await twoDevices(test, folder, names: ["b1", "b2", "b3", "b4"], inCrate: 3)
        defer { Task { await a.close() } }
        let crate = try uuid(a, "Crate", try crateID(a))
        let b4 = try uuid(a, "Bottle", try bottleID(a, "b4"))
        await #expect(throws: (any Error).self) {
            try await test.psql("INSERT INTO \"Bottle_crates\" (\"crateID\", \"bottleID\") VALUES ('\(crate)', '\(b4)')")
        }
        await #expect(throws: (any Error).self) {
            try await test.psql("INSERT INTO \"Crate\" (id, name) VALUES (gen_random_uuid(), 'empty')")
        }
        // Within one transaction, an owner made before its links is fine.
        try await test.psql("""
            BEGIN;
            INSERT INTO "Crate" (id, name) VALUES ('00000000-0000-4000-8000-000000000001', 'D');
            INSERT INTO "Bottle_crates" ("crateID", "bottleID") VALUES ('00000000-0000-4000-8000-000000000001', '\(b4)');
            COMMIT;
            """)
        #expect(try await serverBottles(test, crate: crate) == 3)
        #expect(try await serverBottles(test, crate: "00000000-0000-4000-8000-000000000001") == 1)
    }

    @Test func aPulledCountOutOfRangeIsSetAsideAndTheRestApplies() async throws {
        // A service that bypassed the server's check (its trigger disabled) links a fourth
        // bottle and adds a board: the pull applies the board, sets the link aside and records
        // it; once the server is back in range, the device converges.
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let (a, _) = try await twoDevices(test, folder, names: ["b1", "b2", "b3", "b4"], inCrate: 3)
        defer { Task { await a.close() } }
        let crate = try uuid(a, "Crate", try crateID(a))
        let b4 = try uuid(a, "Bottle", try bottleID(a, "b4"))
        try await test.psql("""
            ALTER TABLE "Bottle_crates" DISABLE TRIGGER strata_sync_count;
            INSERT INTO "Bottle_crates" ("crateID", "bottleID") VALUES ('\(crate)', '\(b4)');
            INSERT INTO "Board" (id, name) VALUES (gen_random_uuid(), 'Pulled');
            ALTER TABLE "Bottle_crates" ENABLE TRIGGER strata_sync_count;
            """)
        let report = try await a.sync.sync()
        #expect(report.conflictsWhilePulling == 1)
        #expect(try await a.store.fetchAll(Board.self).map(\.name) == ["Pulled"])
        #expect(try bottles(a, crate: "C") == ["b1", "b2", "b3"])
        let conflict = try #require(try a.sync.conflicts().last)
        #expect(conflict.kind == .notAppliedHere)
        #expect(conflict.table == "Bottle_crates")
        #expect(conflict.reason.contains("maxCount 3"), "\(conflict.reason)")
        // Syncing again does not fail either (the server is read again, the link set aside again).
        try await a.sync.sync()
        try await test.psql("DELETE FROM \"Bottle_crates\" WHERE \"crateID\" = '\(crate)' AND \"bottleID\" = '\(b4)'")
        try await a.sync.sync()
        try await a.sync.sync()
        try await expectConverged([a], test)
    }
}
