import Foundation
import StrataSQL
import StrataSyncFixture
import StrataTestSupport
import Testing

/// What a run of the history check did and saw: every transaction's writes, each device's
/// transactions and what they read, every state each device's store committed, and every
/// write the server applied, in the server's commit order.
struct SyncHistory {
    /// The transaction ids that wrote each register (0: the registers' first value).
    var writes: [Int: Set<String>] = [:]
    /// Each device's transactions, in the order it ran them, with what each read.
    var transactions: [String: [(id: Int, reads: [String: Int])]] = [:]
    /// Every state each device's store committed, in order.
    var observed: [String: [[String: Int]]] = [:]
    /// The server's writes of registers in commit order: the position, PostgreSQL's
    /// transaction, the register and the transaction id written.
    var server: [(position: Int64, transaction: Int64, key: String, value: Int)] = []
}

/// Checks a ``SyncHistory`` for the guarantees of the sync article's consistency model (the
/// properties an independent Jepsen test checks for PowerSync): read-your-writes and
/// monotonic reads (each device's states never go back in the server's order of versions),
/// monotonic writes and writes-follow-reads (the server applies a device's transactions in
/// its order, after what they read), atomic transactions (no state shows part of a
/// transaction: a register written by T beside another of T's registers older than T's
/// write; and each transaction is applied on the server in one PostgreSQL transaction), and
/// no write lost. Strong convergence is checked on the stores themselves.
struct SyncHistoryChecker {
    let history: SyncHistory
    /// Per register, each value's place in the server's order of its versions. A value a
    /// device wrote and overwrote itself before pushing it never reaches the server: it
    /// takes the place just before the device's next value of that register that did.
    private(set) var version: [String: [Int: Double]] = [:]
    /// Per transaction id, where the server's transaction that applied its first write
    /// committed, in commit order (writes of one push share a server transaction, whatever
    /// order they were applied in within it).
    private(set) var serverOrder: [Int: Int64] = [:]
    /// Per transaction id, the PostgreSQL transactions its writes were applied in.
    private(set) var serverTransactions: [Int: Set<Int64>] = [:]
    /// The device that ran each transaction (nil: another service, or the first values).
    private(set) var deviceOf: [Int: String] = [:]

    init(_ history: SyncHistory) {
        self.history = history
        var count: [String: Int] = [:]
        var committed: [Int64: Int64] = [:]  // server transaction → its first position
        for write in history.server where committed[write.transaction].map({ write.position < $0 }) ?? true {
            committed[write.transaction] = write.position
        }
        for write in history.server.sorted(by: { $0.position < $1.position }) {
            if version[write.key, default: [:]][write.value] == nil {
                version[write.key, default: [:]][write.value] = Double(count[write.key, default: 0])
                count[write.key, default: 0] += 1
            }
            serverOrder[write.value] = min(serverOrder[write.value] ?? .max, committed[write.transaction] ?? write.position)
            serverTransactions[write.value, default: []].insert(write.transaction)
        }
        for (device, transactions) in history.transactions {
            for (offset, transaction) in transactions.enumerated() {
                deviceOf[transaction.id] = device
                for key in history.writes[transaction.id] ?? [] where version[key]?[transaction.id] == nil {
                    let next = transactions[(offset + 1)...].first { later in
                        history.writes[later.id]?.contains(key) == true && version[key]?[later.id] != nil
                    }
                    if let next, let place = version[key]?[next.id] { version[key, default: [:]][transaction.id] = place - 0.5 }
                }
            }
        }
    }

    /// Every violation found, each a sentence.
    func violations() -> [String] {
        var found: [String] = []
        // No write lost; each transaction applied whole in one server transaction.
        for (id, keys) in history.writes.sorted(by: { $0.key < $1.key }) where id != 0 {
            for key in keys.sorted() where version[key]?[id] == nil {
                found.append("lost write: transaction \(id)'s \(key) never reached the server")
            }
            if let transactions = serverTransactions[id], transactions.count > 1 {
                found.append("transaction \(id) was applied in \(transactions.count) server transactions")
            }
        }
        // Atomic transactions in every state a device showed, and in every read.
        for (device, states) in history.observed.sorted(by: { $0.key < $1.key }) {
            for (offset, state) in states.enumerated() { found += fractured(state, "\(device)'s state \(offset)") }
        }
        for (device, transactions) in history.transactions.sorted(by: { $0.key < $1.key }) {
            for transaction in transactions { found += fractured(transaction.reads, "\(device)'s transaction \(transaction.id)'s reads") }
        }
        // Monotonic reads and read-your-writes: a device's states never go back.
        for (device, states) in history.observed.sorted(by: { $0.key < $1.key }) {
            for (offset, (before, after)) in zip(states, states.dropFirst()).enumerated() {
                for (key, value) in after.sorted(by: { $0.key < $1.key }) {
                    guard let old = before[key], let was = version[key]?[old], let now = version[key]?[value] else { continue }
                    if now < was {
                        found.append("\(device) went back: \(key) was \(old), then \(value) (states \(offset), \(offset + 1))")
                    }
                }
            }
        }
        for (device, transactions) in history.transactions.sorted(by: { $0.key < $1.key }) {
            // Monotonic writes: the server applies a device's transactions in its order.
            for (first, second) in zip(transactions, transactions.dropFirst()) {
                if let a = serverOrder[first.id], let b = serverOrder[second.id], b < a {
                    found.append("\(device)'s transaction \(second.id) reached the server before its earlier \(first.id)")
                }
                for key in (history.writes[first.id] ?? []).intersection(history.writes[second.id] ?? []).sorted() {
                    // (Two values the device overwrote before pushing share a place: equal is fine.)
                    if let a = version[key]?[first.id], let b = version[key]?[second.id], b < a {
                        found.append("\(device)'s \(key): transaction \(second.id)'s version is not after its earlier \(first.id)'s")
                    }
                }
            }
            // Writes follow reads: what a transaction read was on the server before it.
            for transaction in transactions {
                guard let mine = serverOrder[transaction.id] else { continue }
                for (key, value) in transaction.reads.sorted(by: { $0.key < $1.key }) where value != 0 {
                    guard let theirs = serverOrder[value] else { continue }
                    let sameDevice = deviceOf[value] == device
                    if sameDevice ? theirs > mine : theirs >= mine {
                        found.append("\(device)'s transaction \(transaction.id) read \(key)=\(value) but reached the server first")
                    }
                }
            }
        }
        return found
    }

    /// The registers of `state` that show a transaction only in part: a register written by
    /// T beside another register T wrote, at a version older than T's.
    func fractured(_ state: [String: Int], _ name: String) -> [String] {
        var found: [String] = []
        for (key, value) in state.sorted(by: { $0.key < $1.key }) where value != 0 {
            for other in (history.writes[value] ?? []).sorted() where other != key {
                guard let shown = state[other], let need = version[other]?[value], let have = version[other]?[shown] else { continue }
                if have < need {
                    found.append("\(name) shows part of transaction \(value): \(key)=\(value) but \(other)=\(shown), older than \(value)'s")
                }
            }
        }
        return found
    }
}

@Suite("Histories of transactions under faults keep the consistency model", .serialized)
struct SyncHistoryCheckTests {
    static let keys = (0..<6).map { "k\($0)" }

    /// Parses `name=value,…`.
    static func registers(_ line: Substring) -> [String: Int] {
        var result: [String: Int] = [:]
        for pair in line.split(separator: ",") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { result[String(parts[0])] = value }
        }
        return result
    }

    @Test func theCheckerFindsWhatItLooksFor() {
        // The server applied T1 (k0, k1), then T2 (k1). A device state with k0 from T1 and k1
        // still at its first value shows part of T1.
        var history = SyncHistory()
        history.writes = [0: Set(Self.keys), 1: ["k0", "k1"], 2: ["k1"]]
        history.server = [
            (1, 10, "k0", 0), (2, 10, "k1", 0),
            (3, 11, "k0", 1), (4, 11, "k1", 1), (5, 12, "k1", 2),
        ]
        history.transactions = ["a": [(1, [:])], "b": [(2, ["k0": 1])]]
        history.observed = ["b": [["k0": 0, "k1": 0], ["k0": 1, "k1": 1], ["k0": 1, "k1": 2]]]
        #expect(SyncHistoryChecker(history).violations().isEmpty)
        var fractured = history
        fractured.observed["b"]?.insert(["k0": 1, "k1": 0], at: 1)
        #expect(SyncHistoryChecker(fractured).violations().contains { $0.contains("shows part of transaction 1") })
        var backwards = history
        backwards.observed["b"]?.append(["k0": 1, "k1": 1])
        #expect(SyncHistoryChecker(backwards).violations().contains { $0.contains("went back") })
        var split = history
        split.server[3].transaction = 13
        #expect(SyncHistoryChecker(split).violations().contains { $0.contains("applied in 2 server transactions") })
        var lost = history
        lost.writes[3] = ["k2"]
        lost.transactions["a"]?.append((3, [:]))
        #expect(SyncHistoryChecker(lost).violations().contains { $0.contains("lost write") })
        var early = history
        early.server = [(1, 10, "k0", 0), (2, 10, "k1", 0), (3, 12, "k1", 2), (4, 11, "k0", 1), (5, 11, "k1", 1)]
        early.observed = [:]
        #expect(SyncHistoryChecker(early).violations().contains { $0.contains("read k0=1 but reached the server first") })
    }

    /// Three device processes run transactions over six registers while another service
    /// writes them in SQL transactions; devices go offline, are SIGKILLed and restarted,
    /// paused with SIGSTOP, and the server is restarted and stopped with `-m immediate`.
    /// `STRATA_CHECK_ROUNDS` (default 60) and `STRATA_CHECK_SEED` (default: random, printed).
    @Test func devicesServicesAndFaultsKeepEveryGuarantee() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: DeviceRunner.executable), "build first: swift build --build-tests")
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["STRATA_CHECK_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        let rounds = environment["STRATA_CHECK_ROUNDS"].flatMap(Int.init) ?? 60
        print("history check: STRATA_CHECK_SEED=\(seed) STRATA_CHECK_ROUNDS=\(rounds)")
        var random = SeededGenerator(seed: seed)
        let cluster = try await PostgresCluster.start()  // its own: this test restarts and stops the server
        defer { cluster.destroy() }
        let database = try await cluster.makeDatabase()
        let folder = try TemporaryDirectory()
        let names = ["a", "b", "c"]
        var devices: [String: DeviceRunner] = [:]
        func open(_ name: String) async throws {
            let device = try DeviceRunner(name: name)
            // Two log entries a batch: a pull of another device's transaction takes several.
            try await device.send("open \(folder.path("\(name).sqlite")) \(cluster.socketPath) \(database) \(seed) 2")
            try await device.send("observe \(folder.path("\(name).states"))")
            devices[name] = device
        }
        defer { for device in devices.values { device.kill() } }
        for name in names { try await open(name) }
        // The tables, then the server's record of every register write (in commit order: the
        // trigger takes the log's lock first), then the registers.
        try await devices["a"]!.send("sync")
        try await cluster.psql("""
            CREATE TABLE checker_writes (position bigserial PRIMARY KEY, tx bigint NOT NULL, key text NOT NULL, value bigint NOT NULL);
            CREATE FUNCTION checker_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
              PERFORM pg_advisory_xact_lock(\(PostgreSQLDDL.logLock));
              INSERT INTO checker_writes (tx, key, value) VALUES (txid_current(), NEW.name, NEW.value);
              RETURN NULL; END $$;
            CREATE TRIGGER checker_write AFTER INSERT OR UPDATE OF value ON "Register" FOR EACH ROW EXECUTE FUNCTION checker_write();
            """, database: database)
        var history = SyncHistory()
        history.writes[0] = Set(Self.keys)
        try await cluster.psql(
            "INSERT INTO \"Register\" (id, name, value) VALUES " + Self.keys.map { "(gen_random_uuid(), '\($0)', 0)" }.joined(separator: ", "),
            database: database)
        for name in names { try await devices[name]!.send("sync") }
        for name in names { try await devices[name]!.send("start") }

        var nextID = 1
        var paused: [String: Int] = [:]  // device → rounds left
        var offline: Set<String> = []
        var serverDown = false
        func pick(_ count: Int) -> [String] {
            var keys = Self.keys
            var chosen: [String] = []
            for _ in 0..<count { chosen.append(keys.remove(at: random.int(0...(keys.count - 1)))) }
            return chosen.sorted()
        }
        for _ in 0..<rounds {
            for (name, left) in paused {
                if left <= 1 {
                    devices[name]!.signal(SIGCONT)
                    paused[name] = nil
                } else {
                    paused[name] = left - 1
                }
            }
            let choice = random.int(0...99)
            let running = names.filter { paused[$0] == nil }
            switch choice {
            case 0..<55 where !running.isEmpty:
                let name = running[random.int(0...(running.count - 1))]
                let id = nextID
                nextID += 1
                let reads = pick(random.int(1...3)), writes = pick(random.int(1...3))
                history.writes[id] = Set(writes)
                let answer = try await devices[name]!.send("txn \(id) \(reads.joined(separator: ",")) \(writes.joined(separator: ","))")
                history.transactions[name, default: []].append((id, Self.registers(answer[...])))
            case 55..<70 where !serverDown && paused.isEmpty:
                // Another service's transaction (a paused device may hold the log's lock).
                let id = 1_000_000 + nextID
                nextID += 1
                let writes = pick(random.int(1...3))
                history.writes[id] = Set(writes)
                try await cluster.psql(
                    "BEGIN; " + writes.map { "UPDATE \"Register\" SET value = \(id) WHERE name = '\($0)';" }.joined(separator: " ") + " COMMIT;",
                    database: database)
            case 70..<76:
                if serverDown {
                    try await cluster.startServer()
                    serverDown = false
                } else if random.int(0...1) == 0 {
                    try await cluster.restart()
                } else {
                    try await cluster.stop(mode: "immediate")
                    serverDown = true
                }
            case 76..<83 where !running.isEmpty:
                let name = running[random.int(0...(running.count - 1))]
                devices[name]!.kill()
                try await open(name)
                if !offline.contains(name) { try await devices[name]!.send("start") }
            case 83..<88 where !running.isEmpty:
                let name = running[random.int(0...(running.count - 1))]
                devices[name]!.signal(SIGSTOP)
                paused[name] = random.int(1...3)
            case 88..<96 where !running.isEmpty:
                let name = running[random.int(0...(running.count - 1))]
                if offline.remove(name) != nil {
                    try await devices[name]!.send("start")
                } else {
                    try await devices[name]!.send("stop")
                    offline.insert(name)
                }
            default:
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // Quiescence: every device running, online, and the server up; then every store
        // equals the server's tables, by the background sync alone.
        for name in paused.keys { devices[name]!.signal(SIGCONT) }
        if serverDown { try await cluster.startServer() }
        for name in offline { try await devices[name]!.send("start") }
        let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
        defer { Task { await server.close() } }
        let deadline = ContinuousClock.now + .seconds(180)
        var difference: String? = "not compared"
        while ContinuousClock.now < deadline {
            if let expected = try? await server.contents() {
                difference = nil
                for name in names {
                    guard let contents = try? await devices[name]!.contents() else { difference = "\(name) did not answer"; break }
                    if let different = contents.difference(from: expected) { difference = "\(name): \(different)"; break }
                }
                if difference == nil { break }
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(difference == nil, "seed \(seed): the stores did not converge by the background sync alone: \(difference ?? "")")

        for name in names {
            let text = (try? String(contentsOfFile: folder.path("\(name).states"), encoding: .utf8)) ?? ""
            history.observed[name] = text.split(separator: "\n").map(Self.registers)
        }
        let rows = try await cluster.psql("SELECT position, tx, key, value FROM checker_writes ORDER BY position", database: database)
        for line in rows.split(separator: "\n") {
            let fields = line.split(separator: "|")
            guard fields.count == 4, let position = Int64(fields[0]), let tx = Int64(fields[1]), let value = Int(fields[3]) else { continue }
            history.server.append((position, tx, String(fields[2]), value))
        }
        let violations = SyncHistoryChecker(history).violations()
        if !violations.isEmpty {
            print("history check: server writes (position transaction key value):")
            for write in history.server { print("  \(write.position) \(write.transaction) \(write.key) \(write.value)") }
            for (name, transactions) in history.transactions.sorted(by: { $0.key < $1.key }) {
                print("history check: \(name)'s transactions: " + transactions.map { "\($0.id) \(history.writes[$0.id]?.sorted() ?? []) read \($0.reads)" }.joined(separator: "; "))
            }
        }
        let states = history.observed.values.map(\.count).reduce(0, +)
        print("history check: seed \(seed), \(nextID - 1) transactions, \(states) states, \(history.server.count) server writes, \(violations.count) violations")
        #expect(violations.isEmpty, "seed \(seed): \(violations.count) violations, first: \(violations.prefix(10).joined(separator: "; "))")
    }
}
