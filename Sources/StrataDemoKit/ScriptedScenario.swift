import Strata

/// The scripted tour: every kind of change a list can see, one step each.
public enum ScriptedScenario {
    /// Runs every step on `session`; returns its records.
    @discardableResult
    public static func run(on session: DemoSession) throws -> [StepRecord] {
        let day = DemoSession.day
        session.printList(title: "Fetch: notes by notebook (Ideas is an empty section)")

        session.step(
            "Insert two notes",
            explain: ["One transaction: \"Draft agenda\" into Work, \"Fix the gate\" into Home."]
        ) {
            let work = try session.notebook(named: "Work")!, home = try session.notebook(named: "Home")!
            try session.store.write { db in
                try db.insert(Note(title: "Draft agenda", priority: .low, updatedAt: day, notebookID: work.id))
                try db.insert(Note(title: "Fix the gate", priority: .low, updatedAt: day, notebookID: home.id))
            }
        }

        session.step(
            "Edit a note: it moves to another section and changes",
            explain: ["\"Buy milk\" goes to Work, is renamed \"Buy oat milk\" and pinned."]
        ) {
            var note = try session.note(matching: "Buy milk")!
            note.title = "Buy oat milk"
            note.pinned = true
            note.notebookID = try session.notebook(named: "Work")!.id
            try session.store.write { db in try db.update(note) }
        }

        session.step(
            "Rename a notebook: a section update",
            explain: ["Home becomes House; its position is unchanged, so it stays put."]
        ) {
            var home = try session.notebook(named: "Home")!
            home.name = "House"
            try session.store.write { db in try db.update(home) }
        }

        session.step(
            "Re-order notebooks: a section move",
            explain: ["Ideas (still empty) gets position -1 and moves to the top. Its Notebook value changed too (position), so the move is also an update: >~."]
        ) {
            var ideas = try session.notebook(named: "Ideas")!
            ideas.position = -1
            try session.store.write { db in try db.update(ideas) }
        }

        session.step(
            "Filter on: a post-fetch filter with group rows",
            explain: ["A Swift closure hides low-priority notes; each section summarises them", "as one group row. No refetch: the controller emits a batch."]
        ) {
            session.setFilter(true)
        }

        session.step("Filter off", explain: ["The hidden notes come back; the group rows go."]) {
            session.setFilter(false)
        }

        session.step(
            "A deny rule refuses a delete",
            explain: ["Tag.notes has deleteRule: deny, and \"urgent\" is still on \"Call the plumber\"."],
            nothingDelivered: "no commit, no batch"
        ) {
            try session.delete(session.tag(named: "urgent")!)
        }

        session.step(
            "Delete a notebook with its notes: cascade",
            explain: ["Notebook.notes has deleteRule: cascade; SQLite deletes Work's notes too.", "The list sees one section delete and no row deletes inside it."]
        ) {
            let work = try session.notebook(named: "Work")!
            try session.store.write { db in _ = try db.delete(work) }
        }

        session.step(
            "Pause, then change things",
            explain: ["controller.pause() stops tracking (as for a bulk import). Two commits:", "a note into Ideas, and \"Read later\" deleted."],
        ) {
            session.controller.pause()
            let ideas = try session.notebook(named: "Ideas")!
            try session.store.write { db in
                try db.insert(Note(title: "Sketch a garden app", updatedAt: day, notebookID: ideas.id))
            }
            let later = try session.note(matching: "Read later")!
            try session.store.write { db in _ = try db.delete(later) }
        }

        session.step(
            "Resume: one refetch, delivered as a reload",
            explain: ["controller.resume() refetches and delivers the new snapshot at once. The \"(no notebook)\" section has no notes left, so it is gone."]
        ) {
            try session.controller.resume()
        }

        try OrderedListScene(session: session).run()
        return session.records
    }
}
