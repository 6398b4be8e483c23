import Foundation
import Strata
import StrataDemoKit
import Testing

/// The demo deletes its previous store at every run: it must never delete anything else.
@Suite("Demo: the store file")
struct DemoStoreTests {
    /// A fresh temporary folder; the caller removes it.
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("The default store is the demo's own file, not the one apps on the same model open")
    func defaultPath() {
        let demo = DemoSession.defaultStorePath
        let apps = Store.defaultURL(for: StrataModel.schema).path
        #expect(demo != apps)
        #expect(demo.hasSuffix("/StrataDemo/demo.sqlite"))
        // Same data folder: `<data>/StrataModel/StrataModel.sqlite` beside `<data>/StrataDemo/demo.sqlite`.
        let dataFolder = { (path: String) in
            URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path
        }
        #expect(dataFolder(demo) == dataFolder(apps))
    }

    @Test("A file that is not SQLite is refused and left byte for byte")
    func refusesAnotherFile() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notes.sqlite").path
        let bytes = Data("my notes, not a database\n".utf8)
        try bytes.write(to: URL(fileURLWithPath: path))

        let run = await runDemo(["--store", path])
        #expect(run.status == 1)
        #expect(run.errors == """
            error: refusing to delete \(path): it is not an SQLite database. The demo starts from \
            a fresh file and deletes only its own previous store; pass another --store path (or --in-memory).
            """)
        #expect(FileManager.default.contents(atPath: path) == bytes)
    }

    @Test("An app's store of the same model is refused and left byte for byte")
    func refusesAnAppStore() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("StrataModel.sqlite").path
        try Self.makeAppStore(at: path)
        let bytes = try #require(FileManager.default.contents(atPath: path))

        let run = await runDemo(["--store", path])
        #expect(run.status == 1)
        #expect(run.errors.hasPrefix(
            "error: refusing to delete \(path): it is an SQLite database the demo did not create."))
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(try Self.notebookNames(at: path) == ["Mine"])
    }

    /// A store such as an app on the demo's model keeps: one notebook, closed.
    private static func makeAppStore(at path: String) throws {
        let store = try Store(schema: StrataModel.schema, path: path)
        try store.write { db in try db.insert(Notebook(name: "Mine", createdAt: Date(), position: 0)) }
        try store.close()
    }

    private static func notebookNames(at path: String) throws -> [String] {
        let store = try Store(schema: StrataModel.schema, path: path)
        defer { try? store.close() }
        return try store.read { db in try db.fetchAll(Notebook.Fetches.ordered) }.map(\.name)
    }

    @Test("A folder at the path is refused")
    func refusesAFolder() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = await runDemo(["--store", folder.path])
        #expect(run.status == 1)
        #expect(run.errors.hasPrefix("error: refusing to delete \(folder.path): it is a folder."))
        #expect(FileManager.default.fileExists(atPath: folder.path))
    }

    @Test("A path in a missing folder names the path and the folder")
    func missingFolder() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("missing/demo.sqlite").path
        let run = await runDemo(["--store", path])
        #expect(run.status == 1)
        #expect(run.errors == """
            error: cannot create the store at \(path): the folder \(folder.path)/missing does not exist. \
            Pass another --store path (or --in-memory).
            """)
    }

    @Test("Runs again over its own previous store, even one left open (its WAL not checkpointed)")
    func rerunsOverItsOwnStore() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("demo.sqlite").path
        // A session that is never closed, as when the demo process exits.
        let session = try DemoSession(location: .path(path), style: .plain, output: DemoOutput { _ in })
        for _ in 0..<2 {
            let run = await runDemo(["--store", path])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.transcript.contains("Store: deleted the previous demo store, to start fresh\n"))
        }
        #expect(session.records.isEmpty)
    }
}
