import Foundation
import GRDB
import Strata

/// A deterministic pseudo-random generator (SplitMix64), so that every run measures the
/// same data and the same changes.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A file store (WAL) in a fresh temporary folder, filled with `notebookCount` notebooks and
/// `noteCount` notes spread over them at random; removed on `remove()`.
final class NotesDatabase {
    static let notebookCount = 50

    let store: Store
    let noteCount: Int
    let folder: URL
    var random: SplitMix64

    /// The store file's path.
    var path: String { folder.appendingPathComponent("notes.sqlite").path }

    init(noteCount: Int, seed: UInt64 = 42, options: Store.Options = Store.Options()) throws {
        self.noteCount = noteCount
        random = SplitMix64(seed: seed)
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try Store(schema: NotesModel.schema, path: folder.appendingPathComponent("notes.sqlite").path, options: options)
        try populate()
    }

    /// One transaction, one prepared statement per table.
    private func populate() throws {
        var random = self.random
        let noteCount = self.noteCount
        let updatedAt = Date(timeIntervalSince1970: 1_780_000_000)
        try store.write { db in
            let notebooks = try db.makeStatement(sql: "INSERT INTO Notebook (name, createdAt, position) VALUES (?, ?, ?)")
            for index in 0..<Self.notebookCount {
                // Positions in reverse of names, so that the section order is not the id order.
                try notebooks.execute(arguments: [
                    String(format: "Notebook %02d", index), updatedAt, Self.notebookCount - index,
                ])
            }
            let notes = try db.makeStatement(sql: """
                INSERT INTO Note (title, body, pinned, priority, updatedAt, notebookID) VALUES (?, '', ?, 'normal', ?, ?)
                """)
            for _ in 0..<noteCount {
                let pinned: Bool = random.next(upperBound: UInt64(20)) == UInt64(0)
                try notes.execute(arguments: [
                    Self.title(&random), pinned, updatedAt,
                    Int64(random.next(upperBound: UInt64(Self.notebookCount))) + 1,
                ])
            }
        }
        self.random = random
        try store.writer.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
    }

    /// A random title: random order inside sections, and every change of title a move.
    static func title(_ random: inout SplitMix64) -> String {
        String(format: "Note %08llx", random.next() & 0xFFFF_FFFF)
    }

    /// A random id among the notes inserted by `populate`.
    func randomNoteID() -> Int64 { Int64(random.next(upperBound: UInt64(noteCount))) + 1 }

    /// A random notebook id.
    func randomNotebookID() -> Int64 { Int64(random.next(upperBound: UInt64(Self.notebookCount))) + 1 }

    func newTitle() -> String { Self.title(&random) }

    func remove() {
        try? store.close()
        try? FileManager.default.removeItem(at: folder)
    }
}
