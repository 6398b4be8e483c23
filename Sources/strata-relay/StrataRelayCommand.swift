import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Metrics
import NIOCore
import Prometheus
import ServiceLifecycle
import StrataRelay

/// `strata-relay [--config FILE]`: the sync relay for a model's YAML files, configured by
/// the environment (see RelaySettings.swift and the article "Sync for apps: the relay").
/// Prints `strata-relay listening on http://HOST:PORT` (`https` with TLS) on standard output
/// once it listens (the port it was given, or the one it got for port 0); logs go to standard
/// error. Stops
/// gracefully on SIGTERM or SIGINT: the signals streams end, requests under way finish.
@main
struct StrataRelayCommand {
    static let usage = """
        usage: strata-relay [--config FILE]

        Serves the sync exchange of a Strata model over HTTP, for devices that sign in with
        a JWT and hold no database credentials. Configured by a JSON file and by the
        environment (which wins): STRATA_RELAY_MODELS, STRATA_RELAY_PG_SOCKET or
        STRATA_RELAY_PG_HOST, STRATA_RELAY_PG_USER, STRATA_RELAY_PG_DATABASE, a JWT key
        (STRATA_RELAY_JWT_HS256_SECRET, STRATA_RELAY_JWT_ES256_PUBLIC_KEY_FILE or
        STRATA_RELAY_JWT_JWKS_FILE), STRATA_RELAY_HOST and STRATA_RELAY_PORT; see the
        article "Sync for apps: the relay" for every setting.
        """

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var file: String?
        while let argument = arguments.first {
            arguments.removeFirst()
            switch argument {
            case "--config":
                guard let path = arguments.first else { fail("--config needs a file") }
                file = path
                arguments.removeFirst()
            case "-h", "--help":
                print(usage)
                return
            default:
                fail("unknown argument \(argument)\n\n\(usage)")
            }
        }
        do {
            try await run(file: file)
        } catch {
            fail("\(error)")
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("strata-relay: \(message)\n".utf8))
        exit(1)
    }

    static func run(file: String?) async throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else {
            throw RelayConfigurationError("strata-relay reads its settings with swift-configuration, which needs macOS 15 or later")
        }
        let settings = try await RelaySettings.load(file: file, environment: ProcessInfo.processInfo.environment)
        let level = try settings.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "strata.relay")
        // The relay's metrics (RelayMetrics in StrataRelay) go to a Prometheus registry that
        // GET /metrics writes out; the library bootstraps nothing, an app mounting it does.
        let registry = PrometheusCollectorRegistry()
        if settings.metrics ?? true { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry)) }
        guard let paths = settings.model.paths, !paths.isEmpty else {
            throw RelayConfigurationError("no model: set STRATA_RELAY_MODELS to the model's YAML files or folder")
        }
        let schema = try RelayModel.load(paths: paths, modelName: settings.model.name ?? "StrataModel")
        var configuration = SyncRelayConfiguration(
            postgres: try settings.postgresConfiguration(), schema: schema, tokens: try settings.tokenRules(),
            policy: try settings.policy(), logger: logger)
        if let connections = settings.connections { configuration.connections = connections }
        if let bytes = settings.maxBodyBytes { configuration.maxBodySize = bytes }
        if let seconds = settings.heartbeatSeconds { configuration.heartbeat = .milliseconds(Int64(seconds * 1000)) }
        let relay = try await SyncRelay(configuration: configuration)

        let router = Router()
        router.add(middleware: RelayErrorMiddleware(logger: logger))  // 404s in JSON too
        relay.addRoutes(to: router)
        if settings.metrics ?? true {
            router.get("metrics") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
        }
        let host = settings.listen.host ?? "127.0.0.1"
        // A connection that sends nothing for the idle timeout while a request (or the rest of
        // one) is awaited is closed: half-sent requests and idle connections do not pile up.
        let idleTimeout = try settings.idleTimeout.map { TimeAmount($0) }
        var server = HTTPServerBuilder.http1(configuration: .init(idleTimeout: idleTimeout))
        let tls = try settings.serverTLS()
        if let tls { server = try .tls(server, tlsConfiguration: tls) }
        let scheme = tls == nil ? "http" : "https"
        let app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: settings.listen.port ?? 8080)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.listen.port ?? 8080
                // Unbuffered: a parent reading the pipe gets the line at once.
                FileHandle.standardOutput.write(Data("strata-relay listening on \(scheme)://\(host):\(port)\n".utf8))
            },
            logger: logger)
        logger.info(
            "serving the model", metadata: ["model": "\(schema.name)", "entities": "\(schema.entities.count)"])
        // Stopped in reverse order: the relay first (its signals streams end, so that the
        // server's graceful shutdown does not wait for them), then the server.
        let group = ServiceGroup(
            configuration: .init(services: [app, relay], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await relay.close()
        logger.info("stopped")
    }
}
