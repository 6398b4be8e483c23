import CorpusTasks
import Foundation
import Strata
import StrataTestSupport
import Testing

/// The task app's model: projects whose tasks and steps keep the user's order.
@Suite struct TasksCorpusTests {
    @Test func orderedTasksAndStepsFollowTheUsersMovesAndSurviveReopen() throws {
        let file = try CorpusFile()
        var store: Store? = try Store(schema: StrataModel.schema, path: file.path)
        let home = try store!.insert(Project(title: "Home", createdAt: day(0)))
        let work = try store!.insert(Project(title: "Work", createdAt: day(0)))
        var jobs: [Job] = []
        for title in ["paint", "clean", "fix sink"] { jobs.append(try store!.insert(Job(title: title, projectID: home.id))) }
        jobs.append(try store!.insert(Job(
            title: "report", state: .doing, due: day(2), recurrence: .weekly(weekdays: [1, 3, 5]), projectID: work.id)))
        let steps = try ["buy paint", "tape", "roll"].map { try store!.insert(Step(text: $0, jobID: jobs[0].id)) }

        let (controller, list) = try ResultsController.replaying(store: store!, request: Job.Fetches.byProject)
        // New tasks go last, in insertion order.
        #expect(controller.snapshot.sections[0].items.map(\.title) == ["paint", "clean", "fix sink"])

        // A drag in the list: one write by identity, delivered as the user's move.
        try controller.deliveryQueue.sync {  // a list view calls it on its delivery queue
            try controller.moveItem(from: ItemPath(section: 0, item: 2), to: ItemPath(section: 0, item: 0))
        }
        #expect(controller.snapshot.sections[0].items.map(\.title) == ["fix sink", "paint", "clean"])
        // A move across projects, written directly.
        try store!.write { db in
            try db.move(jobs[1].id, in: Project.tasks, of: home.id, to: 0)
            try db.move(steps[2].id, in: Job.steps, of: jobs[0].id, to: 0)
        }
        #expect(try store!.read { db in try db.fetchOrdered(Job.steps, of: jobs[0].id).map(\.text) } == ["roll", "buy paint", "tape"])
        // The same order through the model's fetch by parent object.
        #expect(try store!.fetchAll(Step.Fetches.ofJob(job: jobs[0].id)).map(\.text) == ["roll", "buy paint", "tape"])
        #expect(try store!.fetchAll(Step.Fetches.ofJob(job: jobs[1].id)).isEmpty)
        #expect(try list.problems(controller, store: store!) == [])

        // Keyed sections by state, and a fetch with a date parameter.
        var done = jobs[2]
        done.state = .done
        _ = try store!.update(done)
        // Keyed sections in the enum's declaration order, each sorted by title.
        let byState = try ResultsController(store: store!, request: Job.Fetches.byState).snapshot
        #expect(byState.sections.map(\.value) == [.value(.todo), .value(.doing), .value(.done)])
        #expect(byState.sections[0].items.map(\.title) == ["clean", "paint"])
        #expect(try store!.fetchAll(Job.Fetches.overdue(now: day(5))).map(\.title) == ["report"])

        // Rules: a step's text has 1 to 200 code points, a task at most 20 steps, an estimate is
        // never negative; a transient flag is never stored.
        #expect(throws: RuleViolationError.self) { _ = try store!.insert(Step(text: "", jobID: jobs[0].id)) }
        _ = try store!.insert(Step(text: String(repeating: "x", count: 200), jobID: jobs[0].id))
        #expect(throws: RuleViolationError.self) { _ = try store!.insert(Step(text: String(repeating: "x", count: 201), jobID: jobs[0].id)) }
        #expect(throws: RuleViolationError.self) {
            try store!.write { db in for n in 0..<17 { _ = try db.insert(Step(text: "s\(n)", jobID: jobs[0].id)) } }
        }
        try store!.write { db in for n in 0..<16 { _ = try db.insert(Step(text: "s\(n)", jobID: jobs[0].id)) } }
        #expect(try store!.fetchCount(Step.self, where: Step.jobID == jobs[0].id) == 20)
        var estimated = jobs[3]
        estimated.estimate = -0.5
        #expect(throws: RuleViolationError.self) { _ = try store!.update(estimated) }
        estimated.estimate = 0
        estimated.expanded = true
        #expect(try store!.update(estimated))
        #expect(try store!.fetchOne(Job.self, id: jobs[3].id)?.expanded == false)

        // Deleting a task deletes its steps (cascade); the project's order closes the gap.
        #expect(try store!.delete(jobs[0]))
        #expect(try store!.fetchAll(Step.self).isEmpty)
        #expect(try list.problems(controller, store: store!) == [])

        #expect(try store!.fetchOne(Job.self, id: jobs[3].id)?.recurrence == .weekly(weekdays: [1, 3, 5]))
        let order = controller.snapshot.sections.map { $0.items.map(\.id) }
        try store!.close()
        store = nil
        let reopened = try Store(schema: StrataModel.schema, path: file.path)
        let again = try ResultsController(store: reopened, request: Job.Fetches.byProject)
        #expect(again.snapshot.sections.map { $0.items.map(\.id) } == order)
    }
}
