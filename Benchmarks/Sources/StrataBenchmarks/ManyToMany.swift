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
struct ManyToManyBenchmark {
    enum Kind: String, CaseIterable {
        case link, unlink
    }

    struct Figures {
        var size: Int
        var listed: Int
        var kind: Kind
        var ours: Samples
        var baseline: Samples
    }

    static let tagCount = 10

    let database: NotesDatabase
    let probe: LatencyProbe

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

    func run(size: Int, warmUp: Int, repetitions: Int, baselineRepetitions: (Int, Int)) throws -> [Figures] {
        let store = database.store
        let tag = Tag.ID(1)
        let request = try Store.request(Tag.notes, of: tag, sortedBy: [Note.title.ascending])
        let deliveries = DispatchQueue(label: "strata.benchmarks.many-to-many")
        let controller = try ResultsController(store: store, request: request, deliveryQueue: deliveries)
        let forwarder = FlatForwarder(probe: probe)
        controller.coordinate(forwarder)
        controller.waitForDeliveries()
        let listed = controller.snapshot.sections.first?.items.count ?? 0
        var random = SplitMix64(seed: 11)

        func rounds(_ warmUp: Int, _ repetitions: Int) throws -> [Kind: Samples] {
            var result: [Kind: Samples] = [:]
            for round in 0..<(warmUp + repetitions) {
                // A note linked to another tag only.
                let note = try store.read { db in
                    try Int64.fetchOne(db, sql: """
                        SELECT noteID FROM Note_tags WHERE tagID != 1 AND noteID >= ? \
                        AND noteID NOT IN (SELECT noteID FROM Note_tags WHERE tagID = 1) ORDER BY noteID LIMIT 1
                        """, arguments: [Int64(random.next(upperBound: UInt64(size / 2))) + 1])
                }
                guard let note else { throw BenchmarkError.resultsDiffer("no note to link") }
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
                if round >= warmUp {
                    result[.link, default: Samples()].nanoseconds.append(linked.nanoseconds)
                    result[.unlink, default: Samples()].nanoseconds.append(unlinked.nanoseconds)
                }
            }
            return result
        }

        let ours = try rounds(warmUp, repetitions)
        controller.pause()
        let forward = probe
        let baseline = try FlatRefetchBaseline(store: store, tag: tag, deliveryQueue: deliveries) { forward.batchDidArrive($0) }
        let base = try rounds(baselineRepetitions.0, baselineRepetitions.1)
        baseline.cancel()
        deliveries.sync {}
        try controller.resume()
        controller.waitForDeliveries()
        guard controller.snapshot == baseline.snapshot else {
            throw BenchmarkError.resultsDiffer("the notes of the tag differ")
        }
        withExtendedLifetime(forwarder) {}
        log("   many-to-many (\(formatCount(listed)) notes listed): "
            + Kind.allCases.map { "\($0) \(formatMilliseconds(ours[$0]!.medianMilliseconds)) vs \(formatMilliseconds(base[$0]!.medianMilliseconds))" }
            .joined(separator: ", "))
        return Kind.allCases.map { Figures(size: size, listed: listed, kind: $0, ours: ours[$0]!, baseline: base[$0]!) }
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
