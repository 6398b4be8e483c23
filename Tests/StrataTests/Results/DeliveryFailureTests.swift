import Foundation
import GRDB
import Testing
@testable import Strata

/// Every consumer of a results controller — delegate, coordinators, `updates` sequences —
/// gets every event, failures included, in the same order.
@Suite("Results delivery: one outlet, failures included")
struct DeliveryFailureTests {
    /// A delivery as the expectations write it: its kind and the snapshot's item count, or the
    /// column a failure names.
    static func event(_ delivery: DeliveryRecorder<Note, NoSection>.Delivery) -> String {
        switch delivery {
        case .reload(let snapshot): "reload \(snapshot.itemCount)"
        case .batch(_, let snapshot): "batch \(snapshot.itemCount)"
        case .failure(let error): "fail \((error as? ValueDecodingError)?.column ?? "?")"
        }
    }

    /// A coordinator that does not implement `fail(with:)`.
    final class PlainCoordinator: Coordinatable, @unchecked Sendable {
        var count = 0
        func reload(_ snapshot: ResultsSnapshot<Note, NoSection>) { count += 1 }
        func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, NoSection>) { count += 1 }
    }

    @Test("a failure reaches the delegate, every coordinator and every updates sequence, which throws and ends")
    func failureReachesEveryConsumer() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.insert(Note(title: "a", updatedAt: Date()))
        let queue = DispatchQueue(label: "outlet")
        let controller = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: queue)
        let delegate = DeliveryRecorder<Note, NoSection>(), coordinator = DeliveryRecorder<Note, NoSection>(), plain = PlainCoordinator()
        controller.delegate = delegate
        controller.coordinate(coordinator)
        controller.coordinate(plain)
        var iterator = controller.updates.makeAsyncIterator()
        guard case .reload? = try await iterator.next() else { Issue.record("no first reload"); return }

        try store.insert(Note(title: "b", updatedAt: Date()))
        try await store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'urgent' WHERE title = 'a'") }
        controller.waitForDeliveries()
        #expect(coordinator.events(Self.event) == ["reload 1", "batch 2", "fail priority"])
        #expect(delegate.events(Self.event) == ["batch 2", "fail priority"])
        #expect(plain.count == 2)
        guard case .batch? = try await iterator.next() else { Issue.record("no batch"); return }
        do {
            _ = try await iterator.next()
            Issue.record("the sequence did not throw")
        } catch let error as ValueDecodingError {
            #expect(error.entity == "Note" && error.column == "priority" && error.storedValue == "urgent".databaseValue)
        }
        #expect(try await iterator.next() == nil, "the sequence ended")

        // The controller goes on: a repair refetches; a new sequence starts from a reload.
        try await store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'high' WHERE title = 'a'") }
        controller.waitForDeliveries()
        #expect(coordinator.events(Self.event).last == "batch 2")
        #expect(delegate.events(Self.event).last == "batch 2")
        var again = controller.updates.makeAsyncIterator()
        guard case .reload(let snapshot)? = try await again.next() else { Issue.record("no reload"); return }
        let fresh = try await store.fetchAll(Note.Fetches.all)
        #expect(snapshot.sections.flatMap(\.items) == fresh)
    }

    @Test("public errors bridge to localizedDescription with their description")
    func localizedDescriptions() {
        let errors: [any Error & CustomStringConvertible] = [
            DeleteDeniedError(entity: "Notebook", relationship: "notes"),
            MigrationError.notAStrataStore,
            StoreError.notFound(entity: "Note", id: 3),
            ResultsError.sectionTypeMismatch("Int"),
            UniqueConstraintError(entity: "Tag", attributes: ["name"]),
            IdentityChangeError(entity: "Note"),
            StorageError(kind: .full, path: "/tmp/x.sqlite", message: "database or disk is full"),
            ValueDecodingError(entity: "Note", id: 1, column: "priority", storedValue: "x".databaseValue, expectedType: "Priority"),
            InvalidValueError(entity: "Note", attribute: "title", reason: .nulCharacter),
        ]
        for error in errors {
            #expect(error.localizedDescription == error.description)
            #expect(!error.description.isEmpty)
        }
    }
}

extension ResultsSnapshot {
    fileprivate var itemCount: Int { sections.reduce(0) { $0 + $1.items.count } }
}
