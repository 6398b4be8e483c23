import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// A device process (`StrataSyncDevice`, built beside this test bundle), driven line by line
/// (by one task at a time: hence unchecked).
final class DeviceRunner: @unchecked Sendable {
    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("StrataSyncDevice").path
    }

    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private var buffer = Data()
    let name: String

    /// Starts a device; with a `launcher` (`ip netns exec <name>`, say), through it.
    init(name: String, launcher: [String] = []) throws {
        self.name = name
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [Self.executable]
        } else {
            process.executableURL = URL(fileURLWithPath: Self.executable)
        }
        process.standardInput = input
        process.standardOutput = output
        // STRATA_SYNC_DEVICE_STDERR=<folder>: each device's standard error (a crash's report)
        // into <folder>/<name>.stderr.
        if let folder = ProcessInfo.processInfo.environment["STRATA_SYNC_DEVICE_STDERR"] {
            let path = URL(fileURLWithPath: folder).appendingPathComponent("\(name).stderr").path
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = FileHandle(forWritingAtPath: path)
            handle?.seekToEndOfFile()
            process.standardError = handle ?? FileHandle.nullDevice
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
    }

    func sendOnly(_ line: String) {
        if let trace = ProcessInfo.processInfo.environment["STRATA_SYNC_TRACE"], let handle = FileHandle(forWritingAtPath: trace) {
            handle.seekToEndOfFile()
            handle.write(Data("\(Date()) \(name) \(process.processIdentifier): \(line)\n".utf8))
            try? handle.close()
        }
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Sends a command and returns its answer (after "ok "); throws on "error …". The wait
    /// for the answer blocks a thread of its own (see `offThePool`).
    @discardableResult
    func send(_ line: String) async throws -> String {
        sendOnly(line)
        let answer = try await offThePool { try self.readLine() }
        guard answer.hasPrefix("ok") else { throw DeviceError("\(name): \(line) → \(answer)") }
        return String(answer.dropFirst(answer.hasPrefix("ok ") ? 3 : 2))
    }

    /// How long a device may take to answer one command (the longest, a catch-up of
    /// thousands of changes, takes seconds): a device that stops answering fails the test,
    /// killed, instead of holding the run until CI's limit.
    static let answerTimeout: Duration = .seconds(300)

    func readLine() throws -> String {
        let deadline = ContinuousClock.now + Self.answerTimeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer = Data(buffer[buffer.index(after: newline)...])
                return line
            }
            var ready = pollfd(fd: output.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let left = ContinuousClock.now.duration(to: deadline)
            let milliseconds = max(0, left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)
            let polled = poll(&ready, 1, Int32(min(milliseconds, Int64(Int32.max))))
            if polled == 0 {
                kill()
                throw DeviceError("\(name) did not answer within \(Self.answerTimeout) (killed)")
            }
            if polled < 0, errno == EINTR { continue }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw DeviceError("\(name) ended (\(process.isRunning ? "running" : "exited"))") }
            buffer += chunk
        }
    }

    /// Whether ``kill()`` reaped the process (Foundation may never learn that it ended).
    private var reaped = false

    /// Kills the process and reaps it (see `Process.killAndReap()`); nothing when it has
    /// ended, so that a signal never reaches another process that took its id (ids are
    /// reused within minutes in a run of the tests).
    func kill() {
        guard !reaped, process.isRunning else { return }
        reaped = true
        process.killAndReap()
    }

    /// Stops the process (SIGSTOP) or lets it go on (SIGCONT); nothing when it has ended, so
    /// that a signal never reaches another process that took its id.
    func signal(_ signal: Int32) {
        if !reaped, process.isRunning { Foundation.kill(process.processIdentifier, signal) }
    }

    func contents() async throws -> SyncContents {
        try JSONDecoder().decode(SyncContents.self, from: Data(try await send("contents").utf8))
    }

    struct DeviceError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

@Suite("Devices as processes, with faults", .serialized)
struct MultiDeviceTests {
    @Test("Three device processes converge through offline spells, SIGKILLs mid-sync and server restarts")
    func threeDevicesConverge() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: DeviceRunner.executable), "build first: swift build --build-tests")
        // A fixed seed unless one is given (CI runs this one): seed 105 once ended with a card
        // lost on the device offline for 2,000 operations — a card moved here into a board the
        // server then refused, taken by the local cascade — and stays as its regression test.
        let seed = ProcessInfo.processInfo.environment["STRATA_SYNC_SEED"].flatMap(UInt64.init) ?? 105
        let rounds = ProcessInfo.processInfo.environment["STRATA_SYNC_ROUNDS"].flatMap(Int.init) ?? 8
        print("MultiDeviceTests seed \(seed), \(rounds) rounds (STRATA_SYNC_SEED, STRATA_SYNC_ROUNDS)")
        var random = SeededGenerator(seed: seed)
        // Its own cluster: this test restarts the server.
        let cluster = try await PostgresCluster.start()
        defer { cluster.destroy() }
        let database = try await cluster.makeDatabase()
        let folder = try TemporaryDirectory()
        var seeds = seed
        func launch(_ index: Int) async throws -> DeviceRunner {
            let device = try DeviceRunner(name: "device \(index)")
            seeds &+= 7_919
            try await device.send("open \(folder.path("device\(index).sqlite")) \(cluster.socketPath) \(database) \(seeds)")
            return device
        }
        var devices: [DeviceRunner] = []
        for index in 0..<3 { devices.append(try await launch(index)) }
        defer { for device in devices { device.kill() } }

        for round in 0..<rounds {
            for index in devices.indices {
                let offline = random.int(0...3) == 0
                try await devices[index].send("write \(random.int(3...25))")
                if offline { continue }
                switch random.int(0...9) {
                case 0:
                    // Killed in the middle of a sync, then started again on the same file.
                    devices[index].sendOnly("sync")
                    try await Task.sleep(for: .milliseconds(random.int(0...40)))
                    devices[index].kill()
                    devices[index] = try await launch(index)
                case 1:
                    // The server restarts under a sync.
                    devices[index].sendOnly("sync")
                    try await Task.sleep(for: .milliseconds(random.int(0...20)))
                    try await cluster.restart()
                    let device = devices[index]
                    _ = try await offThePool { try device.readLine() }  // ok or error: either is fine
                default:
                    try await devices[index].send("sync")
                }
            }
            if round == rounds / 2 {
                // One device offline for thousands of changes.
                try await devices[2].send("write 2000")
            }
        }
        // Quiescence: everyone online, syncing until every store equals the server's tables
        // (a pull that had to read the server again settles in the next round).
        let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
        var expected = SyncContents()
        for _ in 0..<6 {
            for device in devices {
                // A sync that fails (a server still recovering from the last restart) is retried.
                var attempts = 0
                while true {
                    do {
                        try await device.send("sync")
                        break
                    } catch where attempts < 5 {
                        attempts += 1
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
            expected = try await server.contents()
            var converged = true
            for device in devices where try await device.contents() != expected { converged = false }
            if converged { break }
        }
        await server.close()
        #expect(expected.objectCount > 0, "seed \(seed)")
        for device in devices {
            let contents = try await device.contents()
            #expect(contents.difference(from: expected) == nil, "seed \(seed), \(device.name): \(contents.difference(from: expected) ?? "")")
            if contents != expected {
                print("\(device.name) conflicts: \(try await device.send("conflicts"))")
                for (table, objects) in expected.objects {
                    for id in objects.keys where contents.objects[table]?[id] == nil {
                        print("\(device.name) lacks \(table) \(id): \(try await device.send("object \(id.uuidString)"))")
                    }
                }
            }
            _ = try await device.send("check")  // its live controller equals a fresh fetch
        }
        for device in devices { try await device.send("quit") }
    }

    @Test("Background sync rides out a server restart, and a device offline for thousands of changes catches up")
    func backgroundSyncRidesOutRestarts() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: DeviceRunner.executable), "build first: swift build --build-tests")
        let cluster = try await PostgresCluster.start()
        defer { cluster.destroy() }
        let database = try await cluster.makeDatabase()
        let folder = try TemporaryDirectory()
        let a = try DeviceRunner(name: "a"), b = try DeviceRunner(name: "b")
        defer { a.kill(); b.kill() }
        try await a.send("open \(folder.path("a.sqlite")) \(cluster.socketPath) \(database) 11")
        try await b.send("open \(folder.path("b.sqlite")) \(cluster.socketPath) \(database) 12")
        try await a.send("start")
        try await b.send("start")
        try await a.send("write 40")
        try await cluster.restart()
        try await b.send("write 40")
        try await cluster.stop()
        try await a.send("write 2000")  // while the server is down
        try await cluster.startServer()
        // Background syncs retry with backoff; wait until both hold what the server holds.
        let server = try PostgresSyncServer(configuration: cluster.configuration(database: database), schema: StrataModel.schema)
        defer { Task { await server.close() } }
        let deadline = ContinuousClock.now + .seconds(180)
        var last = ""
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(500))
            let expected = try? await server.contents()
            guard let expected, let left = try? await a.contents(), let right = try? await b.contents() else { continue }
            if left == expected && right == expected { last = ""; break }
            last = left.difference(from: expected) ?? right.difference(from: expected) ?? ""
        }
        if !last.isEmpty {
            print("a conflicts: \((try? await a.send("conflicts")) ?? "-")")
            print("b conflicts: \((try? await b.send("conflicts")) ?? "-")")
            // Each device's record of the objects that differ, and the server's log of them.
            if let expected = try? await server.contents(), let left = try? await a.contents(), let right = try? await b.contents() {
                for id in left.differingIDs(from: expected).union(right.differingIDs(from: expected)).prefix(3) {
                    print("object \(id): a \((try? await a.send("object \(id)")) ?? "-"); b \((try? await b.send("object \(id)")) ?? "-")")
                    let log = try? await cluster.psql(
                        "SELECT seq, tbl, origin, at FROM strata_sync_log WHERE id = '\(id.uuidString.lowercased())' ORDER BY seq",
                        database: database)
                    print("server log of \(id):\n\(log ?? "-")")
                }
            }
        }
        // Under load this once left an object missing on one device: a board created here,
        // in a push that a server restart left unanswered, then deleted here before the
        // answer (its deletion was lost). Reproduced with two busy cores and
        // STRATA_SYNC_TRACE_DIR; fixed, see `SyncInFlightTests`.
        #expect(last == "", "not converged: \(last)")
        try await a.send("stop")
        try await b.send("stop")
        try await a.send("check")
        try await b.send("check")
        try await a.send("quit")
        try await b.send("quit")
    }
}
