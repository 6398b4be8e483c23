import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// `GET /metrics`: the relay's counters in Prometheus's text format, after real syncs.
    @Suite("The relay's metrics", .serialized)
    struct RelayMetricsTests {
        /// The samples of a Prometheus text page: `name{labels}` → value.
        static func samples(_ text: String) -> [String: Double] {
            var samples: [String: Double] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
                samples[String(line[..<space])] = value
            }
            return samples
        }

        static func metrics(_ relay: RelayProcess) async throws -> (HTTPAnswer, [String: Double]) {
            let answer = try await http("GET", relay.url.appendingPathComponent("metrics"), contentType: nil)
            return (answer, samples(String(decoding: answer.body, as: UTF8.self)))
        }

        @Test("After syncs, refusals and a signals stream, /metrics counts each route's requests by status, their durations, the refusals by reason and the open streams")
        func metricsAfterSyncs() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            // (A heartbeat each second: a stream whose device went away is found by the next one.)
            let relay = try await RelayProcess(test, keys: keys, environment: ["STRATA_RELAY_HEARTBEAT_SECONDS": "1"])
            defer { relay.stop() }
            let folder = try TemporaryDirectory()

            // Two devices sync back and forth; what they send is recorded, to be counted.
            var recorders: [RecordingServer] = []
            var syncs: [(Store, StoreSync)] = []
            for index in 0..<2 {
                let recorder = RecordingServer(RelaySyncServer(url: relay.url) { try await keys.token() })
                let store = try Store(schema: StrataModel.schema, path: folder.path("\(index).sqlite"))
                recorders.append(recorder)
                syncs.append((store, try StoreSync(store: store, server: recorder)))
            }
            for round in 0..<3 {
                for (index, (store, sync)) in syncs.enumerated() {
                    try await store.write { db in _ = try db.insert(Label(name: "round \(round) device \(index)")) }
                    try await sync.sync()
                }
            }
            let sent = recorders.flatMap(\.messages).reduce(into: [String: Int]()) { $0[$1.route, default: 0] += 1 }
            #expect(sent["v1/push"] == 6)

            // Refusals: three without a token, two with an expired one, one malformed body, one unknown route.
            let pull = relay.url.appendingPathComponent("v1/pull")
            for _ in 0..<3 { _ = try await http("POST", pull, body: Data("{}".utf8)) }
            let expired = try await keys.token(expiresIn: -3600)
            for _ in 0..<2 { _ = try await http("POST", pull, token: expired, body: Data("{}".utf8)) }
            let token = try await keys.token()
            #expect(try await http("POST", pull, token: token, body: Data("[]".utf8)).status == 400)
            #expect(try await http("GET", relay.url.appendingPathComponent("v1/nothing"), contentType: nil).status == 404)

            // One signals stream, open while the metrics are read.
            let stream = try await offThePool { () -> RawConnection in
                let connection = try RawConnection(relay.url)
                connection.send(RawConnection.head("GET", "/v1/signals", token: token, headers: []))
                return connection
            }
            #expect(try await eventually(.seconds(20)) { try await Self.metrics(relay).1["strata_relay_signal_streams"] == 1 })
            // (A stream is counted when it opens: its answer's head is its status.)

            let (answer, samples) = try await Self.metrics(relay)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let page = String(decoding: answer.body, as: UTF8.self)
            #expect(page.contains("# TYPE strata_relay_requests_total counter"), "\(page)")
            for route in ["hello", "push", "pull"] {
                let count = Double(sent["v1/\(route)"] ?? 0)
                #expect(count > 0)
                #expect(samples[#"strata_relay_requests_total{route="\#(route)",status="200"}"#] == count, "\(route): \(page)")
                // Every answer is timed, the refused pulls' (below) too.
                let timed = count + (route == "pull" ? 6 : 0)
                #expect(samples[#"strata_relay_request_duration_seconds_count{route="\#(route)"}"#] == timed, "\(route)")
                let seconds = samples[#"strata_relay_request_duration_seconds_sum{route="\#(route)"}"#] ?? -1
                #expect(seconds > 0 && seconds < 60 * timed, "\(route): \(seconds) s in all")
                let buckets = samples[#"strata_relay_request_duration_seconds_bucket{route="\#(route)",le="+Inf"}"#]
                #expect(buckets == timed, "\(route): \(page)")
            }
            // The refused pulls: 3 + 2 + 1 with their statuses, and their reasons.
            #expect(samples[#"strata_relay_requests_total{route="pull",status="401"}"#] == 5)
            #expect(samples[#"strata_relay_requests_total{route="pull",status="400"}"#] == 1)
            #expect(samples[#"strata_relay_requests_total{route="unmatched",status="404"}"#] == 1)
            #expect(samples[#"strata_relay_refusals_total{reason="missing_token"}"#] == 3)
            #expect(samples[#"strata_relay_refusals_total{reason="expired_token"}"#] == 2)
            #expect(samples[#"strata_relay_refusals_total{reason="malformed_body"}"#] == 1)
            #expect(samples[#"strata_relay_refusals_total{reason="not_found"}"#] == 1)
            // Nothing names a user, a device or a token.
            #expect(!page.contains("alice") && !page.contains(token))

            #expect(samples[#"strata_relay_requests_total{route="signals",status="200"}"#] == 1)
            #expect(samples[#"strata_relay_request_duration_seconds_count{route="signals"}"#] == nil)
            // The stream closes: the gauge goes back to 0.
            stream.close()
            #expect(try await eventually(.seconds(20)) { try await Self.metrics(relay).1["strata_relay_signal_streams"] == 0 })

            // A device with an empty store: its first pull is a snapshot, counted as its own route.
            #expect(samples[#"strata_relay_requests_total{route="snapshot",status="200"}"#] == nil)
            let fresh = try Store(schema: StrataModel.schema, path: folder.path("fresh.sqlite"))
            let freshSync = try StoreSync(store: fresh, server: RelaySyncServer(url: relay.url) { try await keys.token() })
            try await freshSync.sync()
            #expect(try await fresh.fetchAll(Label.self).count == 6)
            let after = try await Self.metrics(relay).1
            #expect(after[#"strata_relay_requests_total{route="snapshot",status="200"}"#] == 1)
            #expect(after[#"strata_relay_request_duration_seconds_count{route="snapshot"}"#] == 1)
            #expect(after[#"strata_relay_requests_total{route="unmatched",status="200"}"#] == nil)
            try fresh.close()
            for (store, sync) in syncs {
                await sync.stop()
                try store.close()
            }
        }

        @Test("STRATA_RELAY_METRICS=false: no /metrics route")
        func metricsOff() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let relay = try await RelayProcess(test, keys: keys, environment: ["STRATA_RELAY_METRICS": "false"])
            defer { relay.stop() }
            let (answer, _) = try await Self.metrics(relay)
            #expect(answer.status == 404)
            #expect(answer.refusal?["error"] == "not_found")
        }
    }
}
