import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// The outlet on its own (``ResultsOutlet``), given steps as the pipeline makes them, from
/// its doc comments: each step reaches every consumer in the order sent, on the delivery
/// queue, and becomes the delivered snapshot; a step that changes nothing delivers nothing; a
/// failure reaches every consumer; a user edit is delivered at once, steps computed before its
/// commit are folded into the next one, which is delivered as the difference from the edited
/// snapshot — nothing when the store agrees with the edit.
@Suite("Results outlet, alone")
struct ResultsOutletTests {
    typealias Snapshot = ResultsSnapshot<Note, String>
    typealias Step = ResultsStep<Note, String>

    /// An outlet of its own, a recorder subscribed to it, and a controller to name in the
    /// delegate's callbacks (its own deliveries are not recorded).
    struct Setup {
        let queue = DispatchQueue(label: "strata.tests.outlet")
        let outlet: ResultsOutlet<Note, String>
        let recorder = DeliveryRecorder<Note, String>()
        let controller: ResultsController<Note, String>

        init(mode: ResultsController<Note, String>.DeliveryMode = .batches, delivered: Snapshot) throws {
            let store = try Store.inMemory(schema: NotesModel.schema)
            controller = try ResultsController(
                store: store, request: ResultsRequest<Note, String>(sortedBy: [Note.title.ascending], sections: .firstLetter(of: Note.title)),
                deliveryQueue: DispatchQueue(label: "strata.tests.unused"))
            outlet = ResultsOutlet(queue: queue, mode: mode)
            outlet.take(delivered)
            outlet.coordinate(recorder)
            outlet.waitForDeliveries()
        }

        /// What the recorder got since it subscribed, after its first reload.
        var events: [String] {
            outlet.waitForDeliveries()
            return recorder.updates.dropFirst().map { update in
                switch update {
                case .reload(let snapshot): "reload \(BatchBuilderTests.describe(snapshot))"
                case .batch(let batch, let snapshot): "\(batch) \(BatchBuilderTests.describe(snapshot))"
                }
            }
        }

        /// A step from `old` to `new`, numbered `version`, as the pipeline makes it.
        func step(_ version: Int, from old: Snapshot, to new: Snapshot) -> Step {
            let batch = ChangeBatch(from: old, to: new)
            if batch.isEmpty { return Step(snapshot: new, version: version, change: .unchanged) }
            return Step(
                snapshot: new, version: version,
                change: .update(.batch(batch, new), touched: batch.touchedSections(from: old, to: new)))
        }

        /// A user edit of `delivered` made on the delivery queue, before the pipeline's
        /// `version`th step.
        func edit(_ edit: UserEdit<Note>, of delivered: Snapshot, before version: Int) -> Snapshot {
            let new = edit.applied(to: delivered)
            let batch = BatchBuilder.batch(from: delivered, to: new, edit: edit)
            queue.sync {
                outlet.deliverUserEdit(batch, new, touched: edit.touchedSections(of: delivered), before: version, from: controller)
            }
            return new
        }
    }

    static let s0 = BatchBuilderTests.snapshot([("A", [1, 2, 3])])

    @Test("steps reach every consumer in order and become the delivered snapshot; unchanged steps deliver nothing")
    func stepsInOrder() throws {
        let setup = try Setup(delivered: Self.s0)
        let s1 = BatchBuilderTests.snapshot([("A", [1, 2, 3, 4])])
        let s2 = BatchBuilderTests.snapshot([("A", [2, 3, 4])])
        setup.outlet.send(setup.step(1, from: Self.s0, to: s1), from: setup.controller)
        setup.outlet.send(setup.step(2, from: s1, to: s1), from: setup.controller)
        setup.outlet.send(setup.step(3, from: s1, to: s2), from: setup.controller)
        #expect(setup.events == ["i+[[0, 3]] A[1 2 3 4]", "i-[[0, 0]] A[2 3 4]"])
        #expect(setup.outlet.snapshot == s2)
    }

    @Test("a reload of pages and a failure reach every consumer")
    func reloadAndFailure() throws {
        let setup = try Setup(delivered: Self.s0)
        let s1 = BatchBuilderTests.snapshot([("A", [3])])
        setup.outlet.send(Step(snapshot: s1, version: 1, change: .refetchedInPages), from: setup.controller)
        setup.outlet.fail(with: ResultsError.itemUnavailable(9), from: setup.controller)
        #expect(setup.events == ["reload A[3]"])
        #expect(setup.recorder.errors.count == 1)
        #expect(setup.outlet.snapshot == s1, "a failure keeps the delivered snapshot")
    }

    @Test("a user edit is delivered at once; its own commit, when it agrees, delivers nothing")
    func editAgreedWith() throws {
        let setup = try Setup(delivered: Self.s0)
        let move = Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2))
        let edited = setup.edit(.move(move, item: Self.s0[move.from].item!, valueChanged: false), of: Self.s0, before: 0)
        #expect(setup.outlet.snapshot == edited)
        // The edit's commit, as the pipeline computes it from the snapshot before the edit.
        setup.outlet.send(setup.step(1, from: Self.s0, to: edited), from: setup.controller)
        #expect(setup.events == ["i>[[0, 0]→[0, 2]] (user move) A[2 3 1]"])
        #expect(setup.outlet.snapshot == edited)
    }

    @Test("steps computed before the edit's commit are folded into the next, delivered as the difference from the edit")
    func stepsBeforeTheEditAreFolded() throws {
        let setup = try Setup(delivered: Self.s0)
        // Step 1 (a row 4 inserted) was computed before the edit but not yet delivered.
        let s1 = BatchBuilderTests.snapshot([("A", [1, 2, 3, 4])])
        let move = Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2))
        let edited = setup.edit(.move(move, item: Self.s0[move.from].item!, valueChanged: false), of: Self.s0, before: 1)
        #expect(edited == BatchBuilderTests.snapshot([("A", [2, 3, 1])]))
        setup.outlet.send(setup.step(1, from: Self.s0, to: s1), from: setup.controller)
        let afterEdit = BatchBuilderTests.snapshot([("A", [2, 3, 1, 4])])
        setup.outlet.send(setup.step(2, from: s1, to: afterEdit), from: setup.controller)
        let events = setup.events
        #expect(events.count == 2 && events.first == "i>[[0, 0]→[0, 2]] (user move) A[2 3 1]", "\(events)")
        #expect(events.last?.hasSuffix(" A[2 3 1 4]") == true, "\(events)")
        #expect(setup.outlet.snapshot == afterEdit)
    }

    @Test("an edit no step resolves is settled by the computed snapshot")
    func settled() throws {
        let setup = try Setup(delivered: Self.s0)
        let delete = UserEdit<Note>.delete(ItemPath(section: 0, item: 1))
        let edited = setup.edit(delete, of: Self.s0, before: 4)
        setup.outlet.settleUserEdit(to: edited, version: 4, from: setup.controller)
        #expect(setup.events == ["i-[[0, 1]] (user delete) A[1 3]"])
        // A store that differs from the edit: the difference is delivered.
        let other = setup.edit(.delete(ItemPath(section: 0, item: 0)), of: edited, before: 4)
        setup.outlet.settleUserEdit(to: edited, version: 4, from: setup.controller)
        #expect(setup.events.count == 3)
        #expect(setup.outlet.snapshot == edited && other != edited)
    }

    @Test("reloads: the edit is delivered as a reload, and an agreeing commit delivers nothing")
    func reloadMode() throws {
        let setup = try Setup(mode: .reloads, delivered: Self.s0)
        let edited = setup.edit(.delete(ItemPath(section: 0, item: 2)), of: Self.s0, before: 0)
        setup.outlet.send(
            Step(snapshot: edited, version: 1, change: .update(.reload(edited), touched: nil)), from: setup.controller)
        #expect(setup.events == ["reload A[1 2]"])
    }
}

extension BatchBuilderTests {
    /// `A[1 2] B[3]`.
    static func describe(_ snapshot: ResultsSnapshot<Note, String>) -> String {
        snapshot.sections.map { section in
            let name = section.value.object ?? "?"
            return "\(name)[" + section.rows.compactMap { $0.item.map { "\($0.objectID.rawValue)" } }.joined(separator: " ") + "]"
        }.joined(separator: " ")
    }
}
