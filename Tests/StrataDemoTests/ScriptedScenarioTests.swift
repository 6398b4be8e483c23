import Foundation
import Strata
import StrataDemoKit
import Testing

@Suite("Demo: scripted scenario")
struct ScriptedScenarioTests {
    @Test("The whole transcript equals the checked-in reference")
    func transcript() async throws {
        let (transcript, status, errors) = await runDemo(["--in-memory"])
        #expect(status == 0, "\(errors)")
        if let difference = try compareWithReference(transcript, named: "scripted.txt") {
            Issue.record(Comment(rawValue: difference))
        }
    }

    @Test("Plain output within 80 columns, deterministic")
    func layout() async {
        let first = await runDemo(["--in-memory"]).transcript
        let second = await runDemo(["--in-memory"]).transcript
        #expect(first == second)
        #expect(!first.contains("\u{1B}["))
        for line in first.split(separator: "\n") {
            #expect(line.count <= 80, "too wide: \(line)")
        }
    }

    /// The records of a scripted run, by step title.
    private func records() throws -> [String: StepRecord] {
        let session = try DemoSession(location: .inMemory, style: .plain, output: DemoOutput { _ in })
        let records = try ScriptedScenario.run(on: session)
        #expect(records.count == 15)
        for record in records {
            #expect(record.consistent, "\(record.title)")
            #expect(record.error == nil, "\(record.title): \(record.error ?? "")")
        }
        return Dictionary(uniqueKeysWithValues: records.map { ($0.title, $0) })
    }

    private func step(_ records: [String: StepRecord], _ prefix: String) throws -> StepRecord {
        try #require(records.first { $0.key.hasPrefix(prefix) }?.value, "no step \(prefix)")
    }

    @Test("Each step reports the kind of change it is about")
    func facts() async throws {
        let records = try records()

        let insert = try step(records, "Insert")
        #expect(insert.batches == [ChangeBatch(itemInserts: [ItemPath(section: 0, item: 1), ItemPath(section: 1, item: 2)])])

        let edit = try #require(step(records, "Edit").batches.first)
        #expect(edit.itemMoves == [Move(from: ItemPath(section: 1, item: 0), to: ItemPath(section: 0, item: 0))])
        #expect(edit.movedAndUpdatedItems == [ItemPath(section: 0, item: 0)])

        #expect(try step(records, "Rename").batches == [ChangeBatch(sectionUpdates: [1])])
        let reorder = try #require(step(records, "Re-order").batches.first)
        #expect(reorder.sectionMoves == [Move(from: 2, to: 0)])
        #expect(reorder.itemMoves.isEmpty && reorder.itemInserts.isEmpty)

        let filterOn = try #require(step(records, "Filter on").batches.first)
        #expect(filterOn.itemDeletes.count == 4)
        #expect(filterOn.itemInserts.count == 3)  // one group row per section with hidden notes
        let filterOff = try #require(step(records, "Filter off").batches.first)
        #expect(filterOff.itemDeletes.count == 3 && filterOff.itemInserts.count == 4)

        let deny = try step(records, "A deny rule")
        #expect(deny.refusal == """
            Cannot delete tag 'urgent': 1 note still uses it (delete rule deny on Tag.notes). \
            Untag it first: "Call the plumber".
            """)
        #expect(deny.batches.isEmpty && deny.reloads == 0)

        let cascade = try step(records, "Delete a notebook")
        #expect(cascade.batches.count == 1)
        #expect(cascade.batches.first?.sectionDeletes == [1])
        #expect(cascade.batches.first?.itemDeletes.isEmpty == true)
        #expect(cascade.batches.first == ChangeBatch(sectionDeletes: [1]))

        let pause = try step(records, "Pause")
        #expect(pause.batches.isEmpty && pause.reloads == 0)
        let resume = try step(records, "Resume")
        #expect(resume.batches.isEmpty && resume.reloads == 1)

        // Lists the user orders by hand.
        var within = ChangeBatch(itemMoves: [Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2))])
        within.userEdit = .move
        #expect(try step(records, "Drag a todo within").batches == [within])
        let across = try #require(step(records, "Drag a todo into").batches.first)
        #expect(across.userEdit == .move)
        #expect(across.itemMoves == [Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 1))])
        #expect(across.movedAndUpdatedItems == [ItemPath(section: 1, item: 1)])
        let raced = try step(records, "A commit lands")
        #expect(raced.batches.map(\.userEdit) == [.move, nil])
        #expect(raced.batches.last == ChangeBatch(itemInserts: [ItemPath(section: 0, item: 0)]))
        let refused = try step(records, "A move the list")
        #expect(refused.batches.isEmpty && refused.refusal == "[0, 3] is outside the list")
        var swipe = ChangeBatch(itemDeletes: [ItemPath(section: 1, item: 0)])
        swipe.userEdit = .delete
        #expect(try step(records, "Swipe").batches == [swipe])
    }

    @Test("A file store: fresh at every run, the previous file deleted first")
    func fileStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("demo.sqlite").path

        let first = await runDemo(["--store", path])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.transcript.contains("Store: new SQLite file (WAL) at:\n  \(path)\n"))
        #expect(!first.transcript.contains("deleted the previous demo store"))
        #expect(FileManager.default.fileExists(atPath: path))

        let second = await runDemo(["--store", path])
        #expect(second.status == 0, "\(second.errors)")
        #expect(second.transcript.contains("Store: deleted the previous demo store, to start fresh\n"))
        // Apart from the store lines, a file store shows exactly what an in-memory one does.
        func body(_ transcript: String) -> [Substring] {
            transcript.split(separator: "\n").filter { !$0.hasPrefix("Store:") && $0 != "  \(path)" }
        }
        let inMemory = await runDemo(["--in-memory"]).transcript
        #expect(body(second.transcript) == body(inMemory))
    }
}
