import CoreMetrics
import Metrics

/// What the relay counts, through swift-metrics: whatever backend the app bootstrapped
/// (`MetricsSystem.bootstrap`) receives them, none when it bootstrapped none. `strata-relay`
/// bootstraps Prometheus and serves them at `GET /metrics`.
///
/// | metric | kind | dimensions | what |
/// | --- | --- | --- | --- |
/// | `strata_relay_requests_total` | counter | `route`, `status` | requests answered, by route (`hello`, `push`, `pull`, `snapshot`, `signals`, `unmatched`) and HTTP status |
/// | `strata_relay_request_duration_seconds` | timer | `route` | how long a hello, push or pull took, from its head to its answer (a snapshot: to its answer's head) |
/// | `strata_relay_refusals_total` | counter | `reason` | answers with an error, by the body's `error` code (`expired_token`, `body_too_large`, …) |
/// | `strata_relay_signal_streams` | gauge | | signals streams open now |
///
/// The dimensions hold no user, device or token: a handful of values each.
enum RelayMetrics {
    static let requests = "strata_relay_requests_total"
    static let duration = "strata_relay_request_duration_seconds"
    static let refusals = "strata_relay_refusals_total"
    static let signalStreams = "strata_relay_signal_streams"

    /// The route's name for the metrics: the last part of the relay's paths (`/v1/push`:
    /// `push`), `unmatched` for any other.
    static func route(_ path: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        return ["hello", "push", "pull", "snapshot", "signals"].contains(last) ? last : "unmatched"
    }

    /// One answered request: its count, its duration (not for the signals, which last as
    /// long as the device listens), and its refusal if it was one.
    static func record(path: String, status: Int, error: String?, elapsed: Duration) {
        let route = route(path)
        Counter(label: requests, dimensions: [("route", route), ("status", "\(status)")]).increment()
        if route != "signals" && route != "unmatched" {
            Metrics.Timer(label: duration, dimensions: [("route", route)]).record(duration: elapsed)
        }
        if let error { Counter(label: refusals, dimensions: [("reason", error)]).increment() }
    }

    /// The number of signals streams open now.
    static func record(signalStreams: Int) {
        Gauge(label: Self.signalStreams).record(signalStreams)
    }
}
