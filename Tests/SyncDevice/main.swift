// One device of the multi-device sync tests: a process with its own store file, driven by
// one command a line on standard input, answering each with one line ("ok …" or
// "error …"):
//
//   open <store path> <server socket path> <database> <seed>
//   write <n>        n random changes (boards, cards, labels, links, deletions), seeded
//   sync             push and pull until nothing is left ("ok pushed=… refused=… pulled=…")
//   start | stop     background sync (local commits, LISTEN/NOTIFY, timer)
//   check            the live controller equals a fresh fetch ("ok <items>")
//   contents         the synced data as JSON, on one line
//   quit
import Foundation
import Logging
import StrataSyncFixture
import StrataTestSupport

/// Appends each log line to a file (for STRATA_SYNC_TRACE_DIR).
struct TraceFileHandler: LogHandler {
    let handle: FileHandle?
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    init(path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        handle = FileHandle(forWritingAtPath: path)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        handle?.write(Data("\(Date().timeIntervalSince1970) \(event.level) \(event.message)\n".utf8))
    }
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

final class DeviceProcess: @unchecked Sendable {
    var store: Store?
    var sync: StoreSync?
    var server: PostgresSyncServer?
    var controller: ResultsController<Card, Board>?
    var random = SeededGenerator(seed: 1)
    let deliveries = DispatchQueue(label: "deliveries")

    func open(_ path: String, _ socket: String, _ database: String, _ seed: UInt64) throws {
        let store = try Store(schema: StrataModel.schema, path: path)
        let server = try PostgresSyncServer(
            configuration: .init(unixSocketPath: socket, username: "strata", password: nil, database: database),
            schema: StrataModel.schema, requestTimeout: .seconds(30))
        // STRATA_SYNC_TRACE_DIR: every push and pull, change by change, into <dir>/<store name>.log.
        var logger = Logger(label: "strata.sync")
        if let folder = ProcessInfo.processInfo.environment["STRATA_SYNC_TRACE_DIR"] {
            let file = URL(fileURLWithPath: folder).appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent + ".log").path
            logger = Logger(label: "strata.sync") { label in TraceFileHandler(path: file) }
            logger.logLevel = .trace
        }
        let sync = try StoreSync(
            store: store, server: server,
            options: SyncOptions(
                pollInterval: .seconds(2), retryDelays: .milliseconds(50) ... .seconds(1), pushBatchSize: 400, logger: logger))
        controller = try ResultsController(store: store, request: Card.Fetches.byBoard, deliveryQueue: deliveries)
        random = SeededGenerator(seed: seed)
        (self.store, self.server, self.sync) = (store, server, sync)
    }

    /// A random change; some of them break a rule on purpose (a duplicate board name).
    func write(_ count: Int) throws {
        guard let store else { throw Failure("not open") }
        for _ in 0..<count {
            let choice = random.int(100)
            let boardName = "Board \(random.int(6))"
            try? store.write { db in
                let boards = try db.fetchAll(Board.self)
                let cards = try db.fetchAll(Card.self)
                let labels = try db.fetchAll(Label.self)
                switch choice {
                case 0..<10:
                    if try db.fetchCount(Board.self, where: Board.name == boardName) == 0 {
                        _ = try db.insert(Board(name: boardName, position: random.int(10)))
                    }
                case 10..<40 where !boards.isEmpty:
                    _ = try db.insert(Card(
                        title: "Card \(random.int(1_000))", stage: [.todo, .doing, .done][random.int(3)], points: random.int(100),
                        estimate: Double(random.int(1_000)) / 7, done: random.int(2) == 0,
                        due: random.int(3) == 0 ? Date(timeIntervalSince1970: Double(random.int(2_000_000_000)) / 1000 * 1000) : nil,
                        boardID: boards[random.int(boards.count)].id))
                case 40..<65 where !cards.isEmpty:
                    var card = cards[random.int(cards.count)]
                    switch random.int(4) {
                    case 0: card.title = "Edited \(random.int(1_000))"
                    case 1: card.points = random.int(100)
                    case 2: card.done.toggle()
                    default: if !boards.isEmpty { card.boardID = boards[random.int(boards.count)].id }
                    }
                    _ = try db.update(card)
                case 65..<72 where !cards.isEmpty:
                    _ = try db.delete(cards[random.int(cards.count)])
                case 72..<75 where !boards.isEmpty:
                    _ = try db.delete(boards[random.int(boards.count)])  // cascades to its cards
                case 75..<82:
                    _ = try db.insert(Label(name: "Label \(random.int(20))"))
                case 82..<95 where !cards.isEmpty && !labels.isEmpty:
                    try db.link(cards[random.int(cards.count)].id, Card.labels, labels[random.int(labels.count)].id)
                case 95..<100 where !cards.isEmpty && !labels.isEmpty:
                    try db.unlink(cards[random.int(cards.count)].id, Card.labels, labels[random.int(labels.count)].id)
                default:
                    break
                }
            }
        }
    }

    /// The live controller shows what a controller opened now shows: the same sections
    /// (boards) in the same order, each with the same cards (equal titles may come in either
    /// order) in the same order of titles.
    func check() throws -> String {
        guard let store, let controller else { throw Failure("not open") }
        controller.waitForDeliveries()
        let fresh = try ResultsController(store: store, request: Card.Fetches.byBoard, deliveryQueue: deliveries)
        func summary(_ snapshot: ResultsSnapshot<Card, Board>) -> [String] {
            snapshot.sections.map { section in
                let board = section.value.object.map { "\($0.id)" } ?? "-"
                return board + ": " + section.items.map(\.title).joined(separator: ",") + " "
                    + section.items.map { "\($0.id)" }.sorted().joined(separator: ",")
            }
        }
        let live = summary(controller.snapshot), now = summary(fresh.snapshot)
        guard live == now else { throw Failure("the live controller shows \(live), a new one \(now)") }
        guard Set(controller.snapshot.items.map(\.id)) == Set(try store.fetchAll(Card.self).map(\.id)) else {
            throw Failure("the live controller does not show every card")
        }
        return "\(controller.snapshot.items.count)"
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension SeededGenerator {
    /// A number in 0..<bound.
    mutating func int(_ bound: Int) -> Int { int(0...(bound - 1)) }
}

let device = DeviceProcess()
while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    do {
        switch command {
        case "open":
            try device.open(words[1], words[2], words[3], UInt64(words[4]) ?? 1)
            say("ok")
        case "write":
            try device.write(Int(words[1]) ?? 1)
            say("ok")
        case "sync":
            guard let sync = device.sync else { throw Failure("not open") }
            let report = try await sync.sync()
            say("ok pushed=\(report.pushed) refused=\(report.refused) pulled=\(report.pulled)")
        case "start":
            await device.sync?.start()
            say("ok")
        case "stop":
            await device.sync?.stop()
            say("ok")
        case "check":
            say("ok " + (try device.check()))
        case "contents":
            guard let sync = device.sync else { throw Failure("not open") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let data = try encoder.encode(try sync.contents())
            say("ok " + String(decoding: data, as: UTF8.self))
        case "conflicts":
            let encoder = JSONEncoder()
            let conflicts = try device.sync?.conflicts() ?? []
            say("ok " + String(decoding: try encoder.encode(conflicts), as: UTF8.self))
        case "object":
            // The sync's record of an object, for diagnosis: "object <sync id>".
            guard let store = device.store else { throw Failure("not open") }
            let rows = try store.read { db in
                try Row.fetchAll(db, sql: "SELECT tbl, rowid_, deleted, base FROM stratasync_objects WHERE uuid = ?", arguments: [words[1].lowercased()])
            }
            say("ok " + rows.map { "\($0)" }.joined(separator: "; "))
        case "quit":
            await device.sync?.stop()
            if let server = device.server { await server.close() }
            try device.store?.close()
            say("ok")
            exit(0)
        default:
            throw Failure("unknown command \(command)")
        }
    } catch {
        say("error \(String(reflecting: error).replacingOccurrences(of: "\n", with: " "))")
    }
}

