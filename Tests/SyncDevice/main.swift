// One device of the multi-device sync tests: a process with its own store file, driven by
// one command a line on standard input, answering each with one line ("ok …" or
// "error …"):
//
//   open <store path> <server socket path> <database> <seed> [<pull batch size>]
//   open-tls <store path> <host> <port> <database> <seed> <CA file> <server name | ->
//                    over TCP with TLS required and the server's certificate verified:
//                    signed by the CA in the file (PEM), for the server name (or, "-",
//                    for the host)
//   open-tcp <store path> <host> <port> <database> <seed>
//                    over TCP without TLS
//   write <n>        n random changes (boards, cards, labels, links, deletions), seeded
//   scripted <tag> insert | change
//                    fixed changes named after the tag: insert makes board "Board <tag>",
//                    cards "<tag> first", "<tag> second", "<tag> third" and label
//                    "<tag> label", linked to the first card; change (here or on a device
//                    that pulled them) edits the first card, deletes the second and links
//                    the third
//   sync             push and pull until nothing is left ("ok pushed=… refused=… pulled=…")
//   start | stop     background sync (local commits, LISTEN/NOTIFY, timer)
//   check            the live controller equals a fresh fetch ("ok <items>")
//   contents         the synced data as JSON, on one line
//   txn <id> <reads> <writes>
//                    one local transaction of the history checker: reads the registers
//                    named in <reads> (comma-separated, "-" for none), then sets those in
//                    <writes> to <id> ("ok name=value,…": what it read)
//   observe <file>   from now on, after every commit of the store, appends the registers'
//                    values as they are in that commit ("name=value,…") to <file>
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
    var observation: CommitObservation?

    func open(_ path: String, _ configuration: PostgresConnection.Configuration, _ seed: UInt64, pullBatchSize: Int = 5_000) throws {
        let store = try Store(schema: StrataModel.schema, path: path)
        let server = try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema, requestTimeout: .seconds(30))
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
                pollInterval: .seconds(2), retryDelays: .milliseconds(50) ... .seconds(1), pullBatchSize: pullBatchSize, pushBatchSize: 400,
                logger: logger))
        controller = try ResultsController(store: store, request: Card.Fetches.byBoard, deliveryQueue: deliveries)
        random = SeededGenerator(seed: seed)
        (self.store, self.server, self.sync) = (store, server, sync)
    }

    /// A random change; some of them break a rule on purpose (a duplicate board name, a
    /// duplicate album slug), and some race on ordered lists (appends, drags, removals, moves
    /// to another album, cascades).
    func write(_ count: Int) throws {
        guard let store else { throw Failure("not open") }
        for _ in 0..<count {
            let choice = random.int(130)
            if choice >= 100 {
                try? writeTracks(choice - 100)
                continue
            }
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

    /// One of `write`'s changes of albums and their ordered tracks (`choice` in 0..<30).
    func writeTracks(_ choice: Int) throws {
        guard let store else { throw Failure("not open") }
        let slug = "album-\(random.int(4))"
        let pick = random.int(1_000_000)
        try store.write { db in
            let albums = try db.fetchAll(Album.self)
            let tracks = try db.fetchAll(Track.self)
            switch choice {
            case 0..<6:
                if try db.fetchCount(Album.self, where: Album.slug == slug) == 0 {
                    _ = try db.insert(Album(title: "Album \(pick % 100)", slug: slug))
                }
            case 6..<15 where !albums.isEmpty:
                _ = try db.insert(Track(title: "Track \(pick % 1_000)", albumID: albums[pick % albums.count].id))
            case 15..<21 where !tracks.isEmpty:
                // A drag: between two siblings, or onto a sibling's position (a tie).
                let track = tracks[pick % tracks.count]
                guard let album = track.albumID else { break }
                let positions = try Int64.fetchAll(
                    db, sql: "SELECT albumPosition FROM Track WHERE albumID = ? AND albumPosition IS NOT NULL ORDER BY albumPosition",
                    arguments: [album])
                guard positions.count > 1 else { break }
                let index = pick % positions.count
                let position = pick % 2 == 0 ? positions[index] : (positions[index] + (index > 0 ? positions[index - 1] : 0)) / 2
                try db.execute(sql: "UPDATE Track SET albumPosition = ? WHERE id = ?", arguments: [position, track.id])
            case 21..<25 where !tracks.isEmpty:
                try db.execute(sql: "UPDATE Track SET albumID = NULL WHERE id = ?", arguments: [tracks[pick % tracks.count].id])
            case 25..<28 where !tracks.isEmpty && !albums.isEmpty:
                try db.execute(
                    sql: "UPDATE Track SET albumID = ? WHERE id = ?",
                    arguments: [albums[pick % albums.count].id, tracks[(pick / 7) % tracks.count].id])
            case 28..<30 where !albums.isEmpty:
                _ = try db.delete(albums[pick % albums.count])  // cascades to its tracks
            default:
                break
            }
        }
    }

    /// `txn <id> <reads> <writes>`: what it read, as `name=value,…`.
    func transaction(_ id: Int, reads: [String], writes: [String]) throws -> String {
        guard let store else { throw Failure("not open") }
        return try store.write { db in
            var seen: [String] = []
            for name in reads {
                let value = try Int.fetchOne(db, sql: "SELECT value FROM Register WHERE name = ?", arguments: [name])
                seen.append("\(name)=\(value.map(String.init) ?? "-")")
            }
            for name in writes {
                try db.execute(sql: "UPDATE Register SET value = ? WHERE name = ?", arguments: [id, name])
            }
            return seen.joined(separator: ",")
        }
    }

    /// `observe <file>`: every commit's registers, one line each, written before the commit's
    /// write returns (a line lost to a SIGKILL is a state not recorded, never a wrong one).
    func observe(_ path: String) throws {
        guard let store else { throw Failure("not open") }
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw Failure("cannot write \(path)") }
        handle.seekToEndOfFile()
        @Sendable func line(_ db: Database) -> String {
            let rows = (try? Row.fetchAll(db, sql: "SELECT name, value FROM Register ORDER BY name")) ?? []
            return rows.map { "\($0["name"] as String)=\($0["value"] as Int)" }.joined(separator: ",") + "\n"
        }
        try store.read { db in handle.write(Data(line(db).utf8)) }
        observation = store.observeCommits(reading: { changes, db in
            guard !changes["Register"].isEmpty || changes.invalidatedTables.contains("Register") else { return }
            handle.write(Data(line(db).utf8))
        })
    }

    /// The fixed changes of `scripted <tag> insert | change`.
    func scripted(_ tag: String, _ step: String) throws {
        guard let store else { throw Failure("not open") }
        try store.write { db in
            switch step {
            case "insert":
                let board = try db.insert(Board(name: "Board \(tag)", position: 1))
                let first = try db.insert(Card(title: "\(tag) first", points: 1, boardID: board.id))
                for title in ["second", "third"] { _ = try db.insert(Card(title: "\(tag) \(title)", boardID: board.id)) }
                let label = try db.insert(Label(name: "\(tag) label"))
                try db.link(first.id, Card.labels, label.id)
            case "change":
                func card(_ title: String) throws -> Card {
                    guard let card = try db.fetchAll(Card.self, where: Card.title == "\(tag) \(title)").first else {
                        throw Failure("no card \(tag) \(title)")
                    }
                    return card
                }
                guard let label = try db.fetchAll(Label.self, where: Label.name == "\(tag) label").first else { throw Failure("no label \(tag) label") }
                var first = try card("first")
                first.title = "\(tag) first, edited"
                first.points = 42
                _ = try db.update(first)
                _ = try db.delete(try card("second"))
                try db.link(try card("third").id, Card.labels, label.id)
            default:
                throw Failure("scripted <tag> insert | change")
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

let openTLSUsage = "open-tls <store> <host> <port> <database> <seed> <CA file> <server name | ->"
let device = DeviceProcess()
while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    guard let command = words.first else { continue }
    do {
        switch command {
        case "open":
            try device.open(
                words[1], .init(unixSocketPath: words[2], username: "strata", password: nil, database: words[3]), UInt64(words[4]) ?? 1,
                pullBatchSize: words.count > 5 ? Int(words[5]) ?? 5_000 : 5_000)
            say("ok")
        case "open-tls":
            guard words.count == 8, let port = Int(words[3]) else { throw Failure("usage: \(openTLSUsage)") }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .fullVerification
            tls.trustRoots = .file(words[6])
            var configuration = PostgresConnection.Configuration(
                host: words[2], port: port, username: "strata", password: nil, database: words[4],
                tls: .require(try NIOSSLContext(configuration: tls)))
            if words[7] != "-" { configuration.options.tlsServerName = words[7] }
            try device.open(words[1], configuration, UInt64(words[5]) ?? 1)
            say("ok")
        case "open-tcp":
            guard words.count == 6, let port = Int(words[3]) else { throw Failure("usage: open-tcp <store> <host> <port> <database> <seed>") }
            try device.open(
                words[1], .init(host: words[2], port: port, username: "strata", password: nil, database: words[4], tls: .disable),
                UInt64(words[5]) ?? 1)
            say("ok")
        case "write":
            try device.write(Int(words[1]) ?? 1)
            say("ok")
        case "scripted":
            guard words.count == 3 else { throw Failure("scripted <tag> insert | change") }
            try device.scripted(words[1], words[2])
            say("ok")
        case "sync":
            guard let sync = device.sync else { throw Failure("not open") }
            let report = try await sync.sync()
            say("ok pushed=\(report.pushedChanges) refused=\(report.changesRefusedByServer) pulled=\(report.pulledChanges)")
        case "start":
            await device.sync?.start()
            say("ok")
        case "stop":
            await device.sync?.stop()
            say("ok")
        case "txn":
            guard words.count == 4, let id = Int(words[1]) else { throw Failure("txn <id> <reads> <writes>") }
            func names(_ word: String) -> [String] { word == "-" ? [] : word.split(separator: ",").map(String.init) }
            say("ok " + (try device.transaction(id, reads: names(words[2]), writes: names(words[3]))))
        case "observe":
            guard words.count == 2 else { throw Failure("observe <file>") }
            try device.observe(words[1])
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
                try Row.fetchAll(
                    db, sql: """
                        SELECT t.tbl, i.k >> 10 AS rowid_, i.state, (SELECT group_concat(b.col || '=' || quote(b.old), ', ') \
                        FROM stratasync_base b WHERE b.tbl = t.tbl AND b.rowid_ = i.k >> 10) AS base \
                        FROM stratasync_ids i JOIN stratasync_tables t ON t.n = i.k & 1023 WHERE i.uuid = ?1 \
                        UNION ALL SELECT tbl, rowid_, 2, NULL FROM stratasync_tombstones WHERE uuid = ?1
                        """, arguments: [UUID(uuidString: words[1]).map { withUnsafeBytes(of: $0.uuid) { Data($0) } }])
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

