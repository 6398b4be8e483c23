// A fleet of devices syncing through two `strata-relay` processes in front of one PostgreSQL:
// the relay's scale aims (issue 39), measured from outside.
//
//   swift build -c release --product strata-relay            # in the package's root
//   swift run -c release StrataRelayFleet [--devices 1000] [--rate 200] [--seconds 20] [--kill]
//
// Each user has two devices (a real store file each); the user's first device makes a board
// owned by the user (per-user data: the model of Tests/SharingFixture/Models), and every
// device runs the background sync, with its signals stream, through a `RelaySyncServer`
// given both relays (half the devices list relay 1 first, half relay 2). Then `rate` writes
// a second, for `seconds`: a card inserted on one device of a random user; the time from its
// commit to the commit that brings it into the user's other device is one sample. Printed:
// the samples' percentiles, the relays' resident memory before and after the devices
// connected (per connected idle device), the relays' CPU time and the database's
// transactions per write. With `--kill`, relay 1 is killed (SIGKILL) halfway through the
// writes: its devices move to relay 2 by themselves, and at the end every device must hold
// exactly its user's cards, each once, as the server does.
import Foundation
import GRDB
import JWTKit
import Logging
import PostgresNIO
import Strata
import StrataRelay
import StrataSync

struct Options {
    var devices = 1_000
    var rate = 200
    var seconds = 20
    var kill = false
    var relay = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../.build/release/strata-relay").standardized.path

    init(_ arguments: [String]) {
        var arguments = arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--devices": devices = Int(arguments.next() ?? "") ?? devices
            case "--rate": rate = Int(arguments.next() ?? "") ?? rate
            case "--seconds": seconds = Int(arguments.next() ?? "") ?? seconds
            case "--relay": relay = arguments.next() ?? relay
            case "--kill": kill = true
            default: fatalError("unknown argument \(argument)")
            }
        }
        devices = max(2, devices / 2 * 2)
    }
}

struct FleetError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A `strata-relay` process on a loopback port it chooses.
final class Relay: @unchecked Sendable {
    let process = Process()
    let url: URL
    private(set) var killed = false

    init(executable: String, cluster: PostgresCluster, database: String, models: String, secret: String) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw FleetError("no strata-relay at \(executable): swift build -c release --product strata-relay")
        }
        let output = Pipe()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_RELAY_") && $0.key != "LD_PRELOAD" }
        environment.merge([
            "STRATA_RELAY_HOST": "127.0.0.1", "STRATA_RELAY_PORT": "0", "STRATA_RELAY_MODELS": models,
            "STRATA_RELAY_PG_SOCKET": cluster.socketPath, "STRATA_RELAY_PG_USER": cluster.user,
            "STRATA_RELAY_PG_DATABASE": database, "STRATA_RELAY_JWT_HS256_SECRET": secret,
            "STRATA_RELAY_JWT_REQUIRE_EXP": "false", "STRATA_RELAY_LOG_LEVEL": "error",
        ]) { _, new in new }
        process.executableURL = URL(fileURLWithPath: executable)
        process.environment = environment
        process.standardOutput = output
        try process.run()
        var line = Data()
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let prefix = text.range(of: "listening on "), let url = URL(string: String(text[prefix.upperBound...])) else {
            process.terminate()
            throw FleetError("the relay did not start: \(text)")
        }
        self.url = url
    }

    /// Resident memory (VmRSS) in bytes.
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// User and system CPU time, in seconds.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func kill() {
        killed = true
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        guard !killed, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

struct Claims: JWTPayload {
    var sub: SubjectClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// One device: a store file, its sync through both relays, and the cards it was sent.
final class Device: @unchecked Sendable {
    let index: Int
    let user: String
    let store: Store
    let server: RelaySyncServer
    let sync: StoreSync
    var observation: CommitObservation?

    init(index: Int, user: String, schema: SchemaDescriptor, folder: URL, relays: [URL], token: String, options: SyncOptions) throws {
        self.index = index
        self.user = user
        store = try Store(schema: schema, path: folder.appendingPathComponent("device\(index).sqlite").path)
        server = RelaySyncServer(urls: relays, requestTimeout: .seconds(20)) { token }
        sync = try StoreSync(store: store, server: server, options: options)
    }

    func cardTitles() throws -> [String] {
        try store.read { db in try String.fetchAll(db, sql: "SELECT title FROM Card ORDER BY title") }
    }
}

/// The writes awaited on the other device of their user, and the samples of those that came.
final class Deliveries: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [String: (device: Int, at: UInt64)] = [:]
    private(set) var samples: [UInt64] = []

    func expect(_ title: String, on device: Int, at time: UInt64) { lock.withLock { pending[title] = (device, time) } }

    func arrived(_ titles: [String], on device: Int, at time: UInt64) {
        lock.withLock {
            for title in titles {
                guard let awaited = pending[title], awaited.device == device else { continue }
                pending[title] = nil
                samples.append(time - awaited.at)
            }
        }
    }

    var waiting: Int { lock.withLock { pending.count } }
    var taken: [UInt64] { lock.withLock { samples } }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return Double(sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]) / 1e6
}

/// Runs `body` for each element, at most `width` at a time.
func forEach<T: Sendable>(_ elements: [T], width: Int, _ body: @escaping @Sendable (T) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var iterator = elements.makeIterator()
        for _ in 0..<width {
            guard let element = iterator.next() else { break }
            group.addTask { try await body(element) }
        }
        while try await group.next() != nil {
            if let element = iterator.next() { group.addTask { try await body(element) } }
        }
    }
}

let options = Options(CommandLine.arguments)
unsetenv("LD_PRELOAD")
let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../../Tests/SharingFixture/Models").standardized.path
let schema = try RelayModel.load(paths: [models])
let cluster = try PostgresCluster.startBlocking()
defer { cluster.destroy() }
let database = try cluster.makeDatabaseBlocking()
_ = try cluster.psqlBlocking(try PostgresSchema(schema: schema).sql, database: database)
let secret = "fleet-" + UUID().uuidString
let relays = try (0..<2).map { _ in
    try Relay(executable: options.relay, cluster: cluster, database: database, models: models, secret: secret)
}
defer { for relay in relays { relay.stop() } }
try await Task.sleep(for: .seconds(1))
let idleBefore = relays.map(\.residentBytes)

let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-fleet-\(UUID().uuidString.prefix(8))")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
var quiet = Logger(label: "strata.fleet")
quiet.logLevel = .critical
let syncOptions = SyncOptions(pollInterval: .seconds(3600), retryDelays: .milliseconds(50)...(.seconds(1)), logger: quiet)
let keys = JWTKeyCollection()
await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
let users = options.devices / 2
var made: [Device] = []
for index in 0..<options.devices {
    let user = "user\(index / 2)"
    let token = try await keys.sign(Claims(sub: SubjectClaim(value: user)))
    // Half the devices list relay 1 first, half relay 2.
    let urls = index.isMultiple(of: 2) ? [relays[0].url, relays[1].url] : [relays[1].url, relays[0].url]
    made.append(try Device(index: index, user: user, schema: schema, folder: folder, relays: urls, token: token, options: syncOptions))
}
let devices = made
print("\(options.devices) devices of \(users) users made")

// In two halves of the users: each user's board, made on the first device, both devices
// synced, then both started (signals streams open) and left idle; the relays' memory after
// each half. The second half's growth is what more connected idle devices cost, without what
// the relays keep once they served anyone (database connections, caches, threads' arenas),
// which the growth since the start charges to the devices as well.
let deliveries = Deliveries()
var residentAfter: [[Int]] = []
let setupStart = now()
for half in [0..<users / 2, users / 2..<users] {
    try await forEach(Array(half), width: 8) { user in
        let first = devices[2 * user], second = devices[2 * user + 1]
        try await first.store.write { db in
            try db.execute(sql: "INSERT INTO Board (ownerID, title) VALUES (?, ?)", arguments: [first.user, "Board of \(first.user)"])
        }
        try await first.sync.sync()
        try await second.sync.sync()
    }
    // Every commit a device receives: the titles of the cards it brought.
    for device in devices[(2 * half.lowerBound)..<(2 * half.upperBound)] {
        let index = device.index
        device.observation = device.store.observeCommits(reading: { changes, db in
            let inserted = changes.tables["Card"]?.inserted ?? []
            guard !inserted.isEmpty else { return }
            let time = now()
            let titles = (try? String.fetchAll(db, sql: "SELECT title FROM Card WHERE id IN (\(inserted.map(String.init).joined(separator: ",")))")) ?? []
            deliveries.arrived(titles, on: index, at: time)
        })
        await device.sync.start()
    }
    // Idle: past the devices' 10 s for an unused request connection (RelayHTTPClient).
    try await Task.sleep(for: .seconds(15))
    residentAfter.append(relays.map(\.residentBytes))
}
print("boards made and synced, devices started, in \(Double(now() - setupStart) / 1e9) s (15 s idle after each half)")
let idleAfter = residentAfter[1]
let perDevice = zip(idleBefore, idleAfter).map { Double($1 - $0) / Double(options.devices / 2) }
let secondHalfDevices = Double(2 * (users - users / 2)) / 2  // each relay's share
let marginal = zip(residentAfter[0], residentAfter[1]).map { Double($1 - $0) / secondHalfDevices }
print("relays' resident memory before the devices: \(idleBefore.map { $0 / 1024 }) KiB; with half the devices idle: \(residentAfter[0].map { $0 / 1024 }) KiB; with all \(options.devices / 2) each: \(idleAfter.map { $0 / 1024 }) KiB")
print("per idle device: \(perDevice.map { Int($0 / 1024) }) KiB since the start; \(marginal.map { Int($0 / 1024) }) KiB for the second half's devices")

// The writes.
func serverTransactions() throws -> Int {
    Int(try cluster.psqlBlocking("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()", database: database)
        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
}
let transactionsBefore = try serverTransactions()
let cpuBefore = relays.map(\.cpuSeconds)
let total = options.rate * options.seconds
var written: [String: [String]] = [:]
var random = SystemRandomNumberGenerator()
let start = now()
for k in 0..<total {
    if options.kill && k == total / 2 { relays[0].kill() }
    let due = start + UInt64(k) * 1_000_000_000 / UInt64(options.rate)
    let wait = Int64(due) - Int64(now())
    if wait > 0 { try await Task.sleep(for: .nanoseconds(wait)) }
    let user = Int.random(in: 0..<users, using: &random)
    let side = Int.random(in: 0...1, using: &random)
    let writer = devices[2 * user + side], reader = devices[2 * user + 1 - side]
    let title = "w\(k)"
    written[writer.user, default: []].append(title)
    try await writer.store.write { db in
        try db.execute(sql: "INSERT INTO Card (title, boardID) VALUES (?, (SELECT id FROM Board LIMIT 1))", arguments: [title])
        deliveries.expect(title, on: reader.index, at: now())
    }
}
let writeSeconds = Double(now() - start) / 1e9
let settleStart = now()
while deliveries.waiting > 0 && now() - settleStart < 60_000_000_000 { try await Task.sleep(for: .milliseconds(100)) }
let cpuAfter = relays.map { $0.killed ? .nan : $0.cpuSeconds }
let transactions = try serverTransactions() - transactionsBefore
let samples = deliveries.taken.sorted()
print("""
    \(total) writes in \(String(format: "%.1f", writeSeconds)) s (\(String(format: "%.0f", Double(total) / writeSeconds)) a second)\(options.kill ? ", relay 1 killed after \(total / 2)" : "")
    write → commit on the user's other device: \(samples.count) samples, \(deliveries.waiting) not delivered within 60 s after the last write
      p50 \(String(format: "%.1f", percentile(samples, 0.5))) ms, p90 \(String(format: "%.1f", percentile(samples, 0.9))) ms, p99 \(String(format: "%.1f", percentile(samples, 0.99))) ms, max \(String(format: "%.1f", percentile(samples, 1)))
    server: \(String(format: "%.1f", Double(transactions) / Double(total))) transactions a write; relays' CPU: \(zip(cpuBefore, cpuAfter).map { String(format: "%.2f", ($1 - $0) * 1000 / Double(total)) }) ms a write
    """)

// Every device holds exactly its user's cards, each once, as the server does.
for device in devices { await device.sync.stop() }
try await forEach(Array(0..<users), width: 8) { user in
    for device in [devices[2 * user], devices[2 * user + 1]] { try await device.sync.sync() }
    try await devices[2 * user].sync.sync()
}
var wrong = 0
for device in devices {
    let expected = (written[device.user] ?? []).sorted()
    if try device.cardTitles() != expected { wrong += 1 }
}
let serverCards = Int(try cluster.psqlBlocking("SELECT count(*) FROM \"Card\"", database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
let distinct = Int(try cluster.psqlBlocking("SELECT count(DISTINCT title) FROM \"Card\"", database: database).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
print("converged: \(devices.count - wrong) of \(devices.count) devices hold exactly their user's cards; the server holds \(serverCards) cards, \(distinct) distinct, of \(total) written")
for device in devices { try? device.store.close() }
if wrong > 0 || serverCards != total || distinct != total { exit(1) }
