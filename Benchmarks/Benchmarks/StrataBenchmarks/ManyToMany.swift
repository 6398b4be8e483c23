import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// Links and unlinks of a many-to-many relationship, timed from the commit to the delivery
/// of the batch: a controller of the notes of one tag (`Store.request(Tag.notes, of:)`,
/// whose predicate reads the join table), against refetching that list with plain GRDB and
/// diffing it by identity.
///
/// The store gets 10 tags; each note is linked to one of them at random, so the measured
/// tag has about a tenth of the notes. Each round links a random note that is not in the
/// list, then unlinks it: each batch must be exactly one insert, then one delete.
final class ManyToManyBenchmark {
    enum Kind: String, CaseIterable {
        case link, unlink

        var metric: BenchmarkMetric { latency(rawValue) }
    }

    /// The number of notes in the measured list, recorded with each round.
    static let listed = count("notes listed")
    static let tagCount = 10

    let database: NotesDatabase
    let probe: LatencyProbe
    let tag = Tag.ID(1)
    let controller: ResultsController<Note, NoSection>?
    let forwarder: FlatForwarder
    let baseline: FlatRefetchBaseline?
    let listed: Int
    private var random = SplitMix64(seed: 11)

    /// A store of `size` notes linked to tags, and a controller of the notes of tag 1 (or the
    /// refetch + diff baseline instead).
    init(size: Int, side: Side) throws {
        database = try NotesDatabase(noteCount: size)
        try Self.populate(database)
        let store = database.store
        probe = LatencyProbe(store: store)
        forwarder = FlatForwarder(probe: probe)
        let deliveries = DispatchQueue(label: "strata.benchmarks.many-to-many")
        switch side {
        case .strata:
            let request = try Store.request(Tag.notes, of: tag, sortedBy: [Note.title.ascending])
            let controller = try ResultsController(store: store, request: request, deliveryQueue: deliveries)
            controller.coordinate(forwarder)
            controller.waitForDeliveries()
            listed = controller.snapshot.sections.first?.items.count ?? 0
            self.controller = controller
            baseline = nil
        case .refetchDiff:
            let probe = probe
            let baseline = try FlatRefetchBaseline(store: store, tag: tag, deliveryQueue: deliveries) { probe.batchDidArrive($0) }
            listed = baseline.snapshot.sections.first?.items.count ?? 0
            self.baseline = baseline
            controller = nil
        }
    }

    /// Creates the tags and links every note to one of them.
    static func populate(_ database: NotesDatabase) throws {
        var random = SplitMix64(seed: 7)
        let noteCount = database.noteCount
        try database.store.write { db in
            for index in 0..<tagCount { try db.execute(sql: "INSERT INTO Tag (name) VALUES (?)", arguments: ["tag \(index)"]) }
            let link = try db.makeStatement(sql: "INSERT INTO Note_tags (noteID, tagID) VALUES (?, ?)")
            for note in 1...noteCount {
                try link.execute(arguments: [note, Int64(random.next(upperBound: UInt64(tagCount))) + 1])
            }
        }
    }

    /// Links a note that is not in the list, then unlinks it: each batch must be exactly one
    /// insert, then one delete.
    func oneRound() throws -> [(Kind, UInt64)] {
        let store = database.store
        let size = database.noteCount
        let start = Int64(random.next(upperBound: UInt64(size / 2))) + 1
        // A note linked to another tag only.
        let note = try store.read { db in
            try Int64.fetchOne(db, sql: """
                SELECT noteID FROM Note_tags WHERE tagID != 1 AND noteID >= ? \
                AND noteID NOT IN (SELECT noteID FROM Note_tags WHERE tagID = 1) ORDER BY noteID LIMIT 1
                """, arguments: [start])
        }
        guard let note else { throw BenchmarkError.resultsDiffer("no note to link") }
        let tag = self.tag
        try store.write { db in try db.link(Note.ID(note), Note.tags, tag) }
        let linked = probe.waitForBatch()
        guard linked.batch.itemInserts.count == 1, linked.batch.itemDeletes.isEmpty, linked.batch.itemMoves.isEmpty else {
            throw BenchmarkError.unexpectedBatch("link: \(linked.batch)")
        }
        try store.write { db in try db.unlink(Note.ID(note), Note.tags, tag) }
        let unlinked = probe.waitForBatch()
        guard unlinked.batch.itemDeletes.count == 1, unlinked.batch.itemInserts.isEmpty else {
            throw BenchmarkError.unexpectedBatch("unlink: \(unlinked.batch)")
        }
        return [(.link, linked.nanoseconds), (.unlink, unlinked.nanoseconds)]
    }

    /// Checks that the list equals a plain refetch, and removes the store.
    func finish() throws {
        defer { database.remove() }
        let tag = self.tag
        let expected = try database.store.read { db in try FlatRefetchBaseline.fetch(db, tag: tag) }
        if let controller {
            controller.waitForDeliveries()
            guard controller.snapshot == expected else { throw BenchmarkError.resultsDiffer("the notes of the tag") }
        }
        if let baseline {
            baseline.cancel()
            guard baseline.snapshot == expected else { throw BenchmarkError.resultsDiffer("the baseline's notes of the tag") }
        }
    }
}

/// Hands a flat controller's batches to the probe.
final class FlatForwarder: Coordinatable, @unchecked Sendable {
    let probe: LatencyProbe
    init(probe: LatencyProbe) { self.probe = probe }
    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, NoSection>) { probe.batchDidArrive(batch) }
    func reload(_ snapshot: ResultsSnapshot<Note, NoSection>) {}
}

/// The notes of one tag refetched with plain GRDB after every commit, and diffed by
/// identity with Strata's public `ChangeBatch(from:to:)`.
final class FlatRefetchBaseline: @unchecked Sendable {
    private let lock = NSLock()
    private var current: ResultsSnapshot<Note, NoSection>
    private var observation: CommitObservation?
    private let tag: Tag.ID

    init(store: Store, tag: Tag.ID, deliveryQueue: DispatchQueue, deliver: @escaping @Sendable (ChangeBatch) -> Void) throws {
        self.tag = tag
        current = try store.read { db in try Self.fetch(db, tag: tag) }
        observation = store.observeCommits(reading: { [weak self] _, db in
            guard let self else { return }
            do {
                let new = try Self.fetch(db, tag: tag)
                let batch = lock.withLock {
                    defer { current = new }
                    return ChangeBatch(from: current, to: new)
                }
                deliveryQueue.async { deliver(batch) }
            } catch {
                fatalError("baseline refetch failed: \(error)")
            }
        })
    }

    var snapshot: ResultsSnapshot<Note, NoSection> { lock.withLock { current } }

    func cancel() { observation?.cancel() }

    static func fetch(_ db: Database, tag: Tag.ID) throws -> ResultsSnapshot<Note, NoSection> {
        let notes = try Note.fetchAll(db, sql: """
            SELECT Note.* FROM Note WHERE id IN (SELECT noteID FROM Note_tags WHERE tagID = ?) ORDER BY title, id
            """, arguments: [tag])
        return ResultsSnapshot(sections: [ResultsSection(id: .single, value: .value(NoSection()), rows: notes.map { .item($0) })])
    }
}
