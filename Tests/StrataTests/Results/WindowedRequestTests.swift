import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Windowed requests (`ResultsRequest.limit(_:offset:)`), from their documented contract:
/// the rows `offset..<offset + limit` of the results in display order, in their sections,
/// kept as commits come, each change delivered as one valid batch.
@Suite struct WindowedRequestTests {
    /// The window cut by hand from a whole snapshot: rows in display order, sections with
    /// rows in the window only.
    static func expectedWindow<Section>(
        _ whole: ResultsSnapshot<Note, Section>, limit: Int?, offset: Int
    ) -> [(SectionID, [ResultsRow<Note>])] {
        var flat: [(SectionID, ResultsRow<Note>)] = []
        for section in whole.sections { for row in section.rows { flat.append((section.id, row)) } }
        let end = limit.map { min(flat.count, offset + $0) } ?? flat.count
        var result: [(SectionID, [ResultsRow<Note>])] = []
        for (id, row) in flat[min(offset, flat.count)..<max(min(offset, flat.count), end)] {
            if result.last?.0 == id { result[result.count - 1].1.append(row) } else { result.append((id, [row])) }
        }
        return result
    }

    /// "The 3 most recent": a newer note enters at the top and pushes the last one out, in
    /// one batch; deleting a shown note brings the next one in.
    @Test func aRowEnteringPushesTheLastOneOut() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in
            for i in 0..<5 {
                var note = Note(title: "n\(i)", updatedAt: day.addingTimeInterval(Double(i)))
                try note.insert(db)
            }
        }
        let request = Note.Fetches.all.sorted(by: Note.updatedAt.descending).limit(3)
        let queue = DispatchQueue(label: "strata.tests.window")
        let controller = try ResultsController(store: store, request: request, deliveryQueue: queue)
        let recorder = DeliveryRecorder<Note, NoSection>()
        controller.coordinate(recorder)
        queue.sync {}
        #expect(controller.snapshot.items.map(\.title) == ["n4", "n3", "n2"])
        try store.write { db in
            var note = Note(title: "new", updatedAt: day.addingTimeInterval(10))
            try note.insert(db)
        }
        queue.sync {}
        #expect(controller.snapshot.items.map(\.title) == ["new", "n4", "n3"])
        let batch = try #require(recorder.updates.last?.batch)
        #expect(batch.itemInserts == [ItemPath(section: 0, item: 0)])
        #expect(batch.itemDeletes == [ItemPath(section: 0, item: 2)])
        #expect(batch.itemMoves.isEmpty)
        try store.write { db in _ = try Note.filter(Column("title") == "n4").deleteAll(db) }
        queue.sync {}
        #expect(controller.snapshot.items.map(\.title) == ["new", "n3", "n2"])
        // The store's one-shot reads apply the same window to a request without sections.
        #expect(try store.fetchAll(request).map(\.title) == ["new", "n3", "n2"])
        #expect(try store.fetchCount(request) == 3)
        #expect(try store.fetchCount(request.limit(3, offset: 4)) == 1)
        #expect(try store.fetchAll(request.limit(nil, offset: 4)).map(\.title) == ["n0"])
    }

    /// Seeded random commits; windows of flat and sectioned requests, eager and batched,
    /// with and without an offset. After every step each batch validates and replays, and
    /// the snapshot is the window cut by hand from a fresh fetch of the whole results.
    @Test(arguments: [UInt64(51), 52, 53, 54])
    func randomCommits(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-window-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store(schema: NotesModel.schema, path: folder.appendingPathComponent("notes.sqlite").path)
        let queue = DispatchQueue(label: "strata.tests.window")

        final class Case<Section: Hashable & Sendable> {
            let whole: ResultsRequest<Note, Section>
            let limit: Int?
            let offset: Int
            let controller: ResultsController<Note, Section>
            let recorder = DeliveryRecorder<Note, Section>()
            var shown: ResultsSnapshot<Note, Section>
            var seen = 1

            init(
                _ store: Store, _ whole: ResultsRequest<Note, Section>, limit: Int?, offset: Int, loading: ResultsLoading,
                queue: DispatchQueue
            ) throws {
                self.whole = whole
                self.limit = limit
                self.offset = offset
                controller = try ResultsController(
                    store: store, request: whole.limit(limit, offset: offset), loading: loading, deliveryQueue: queue)
                controller.checksInvariants = true
                controller.coordinate(recorder)
                queue.sync {}
                shown = controller.snapshot
            }

            func check(_ store: Store, _ context: String) throws -> Bool {
                let updates = recorder.updates
                for update in updates[seen...] {
                    if case .reload(let snapshot) = update {
                        shown = snapshot
                        continue
                    }
                    guard replayBatches([update][...], on: &shown, context) else { return false }
                }
                seen = updates.count
                let fresh = try ResultsController(
                    store: store, request: whole, deliveryQueue: DispatchQueue(label: "strata.tests.window.fresh"))
                let expected = WindowedRequestTests.expectedWindow(fresh.snapshot, limit: limit, offset: offset)
                let actual = shown.sections.map { ($0.id, Array($0.rows)) }
                guard actual.map(\.0) == expected.map(\.0), actual.map(\.1) == expected.map(\.1) else {
                    let expectedIDs = expected.map { "\($0.0): \($0.1.map { $0.item?.id.rawValue ?? -1 })" }
                    Issue.record(
                        """
                        window differs \(context), limit \(String(describing: limit)), offset \(offset)
                        shown:
                        \(shown)
                        controller:
                        \(controller.snapshot)
                        expected: \(expectedIDs)
                        whole:
                        \(fresh.snapshot)
                        """)
                    return false
                }
                return true
            }
        }

        let cases: [(Store, String) throws -> Bool] = try [
            Case(store, Note.Fetches.all.sorted(by: Note.updatedAt.descending, Note.title.ascending),
                 limit: 5, offset: 0, loading: .eager, queue: queue).check,
            Case(store, Note.Fetches.byNotebook, limit: 7, offset: 3, loading: .eager, queue: queue).check,
            Case(store, Note.Fetches.byNotebook, limit: 6, offset: 2, loading: .batched(pageSize: 2, cachedPages: 2),
                 queue: queue).check,
            Case(store, Note.Fetches.byPriority, limit: nil, offset: 4, loading: .eager, queue: queue).check,
        ]
        let titles = ["a", "b", "c", "Ab", "ba", "x", "xy", "é"]
        var counter = 0
        for step in 0..<50 {
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...4, using: &random), kinds: 0..<11, titles: titles, counter: &counter,
                random: &random)
            queue.sync {}
            let context = "(seed \(seed), step \(step))"
            for check in cases { guard try check(store, context) else { return } }
        }
    }
}
