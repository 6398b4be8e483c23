import Configuration
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import StrataRelay
import StrataSync
import SystemPackage

/// The relay's settings: a JSON file (`--config PATH`), then the environment, which wins,
/// read through swift-configuration (``load(file:environment:)``). Every setting, with its
/// variable and its key in the file:
///
/// | environment | file | meaning |
/// | --- | --- | --- |
/// | `STRATA_RELAY_HOST`, `STRATA_RELAY_PORT` | `listen.host`, `listen.port` | where to listen (127.0.0.1:8080; port 0: any free port, printed) |
/// | `STRATA_RELAY_TLS_CERTIFICATE_FILE`, `STRATA_RELAY_TLS_KEY_FILE` | `listen.tlsCertificateFile`, `listen.tlsKeyFile` | serve HTTPS with this certificate chain and private key (PEM); both or neither (plain HTTP) |
/// | `STRATA_RELAY_MODELS` | `model.paths` | the model's YAML files or folders (`:`-separated) |
/// | `STRATA_RELAY_MODEL_NAME` | `model.name` | the model's name, as the app's build plugin names it (StrataModel) |
/// | `STRATA_RELAY_PG_HOST`, `STRATA_RELAY_PG_PORT` | `postgres.host`, `postgres.port` | the database server over TCP |
/// | `STRATA_RELAY_PG_SOCKET` | `postgres.socket` | or its Unix socket (the `.s.PGSQL.5432` file) |
/// | `STRATA_RELAY_PG_USER`, `STRATA_RELAY_PG_DATABASE` | `postgres.user`, `postgres.database` | the role and the database |
/// | `STRATA_RELAY_PG_PASSWORD`, `STRATA_RELAY_PG_PASSWORD_FILE` | `postgres.password`, `postgres.passwordFile` | its password |
/// | `STRATA_RELAY_PG_TLS`, `STRATA_RELAY_PG_CA_FILE`, `STRATA_RELAY_PG_SERVER_NAME` | `postgres.tls`, `postgres.caFile`, `postgres.serverName` | `require` (full verification) or `disable` |
/// | `STRATA_RELAY_SCHEMA_POLICY` | `schemaPolicy` | `createAndExtend` or `requireExisting` |
/// | `STRATA_RELAY_CONNECTIONS` | `connections` | database connections for requests (4) |
/// | `STRATA_RELAY_JWT_HS256_SECRET`, `…_FILE` | `jwt.hs256Secret`, `jwt.hs256SecretFile` | an HS256 secret |
/// | `STRATA_RELAY_JWT_ES256_PUBLIC_KEY_FILE` | `jwt.es256PublicKeyFile` | an ES256 public key (PEM) |
/// | `STRATA_RELAY_JWT_JWKS_FILE` | `jwt.jwksFile` | a JWKS document |
/// | `STRATA_RELAY_JWT_ISSUER`, `STRATA_RELAY_JWT_AUDIENCE` | `jwt.issuer`, `jwt.audience` | the `iss` and `aud` required |
/// | `STRATA_RELAY_JWT_USER_CLAIM` | `jwt.userClaim` | the claim of the user id (`sub`) |
/// | `STRATA_RELAY_JWT_LEEWAY_SECONDS` | `jwt.leewaySeconds` | clock leeway for `exp` and `nbf` (30) |
/// | `STRATA_RELAY_JWT_REQUIRE_EXP` | `jwt.requireExpiry` | refuse tokens without `exp` (true) |
/// | `STRATA_RELAY_MAX_BODY_BYTES` | `maxBodyBytes` | the largest body (16 MiB) |
/// | `STRATA_RELAY_HEARTBEAT_SECONDS` | `heartbeatSeconds` | the signals' heartbeat (15) |
/// | `STRATA_RELAY_IDLE_TIMEOUT_SECONDS` | `idleTimeoutSeconds` | how long a connection may send nothing while the relay waits for a request or its body, before it is closed (60; 0: never) |
/// | `STRATA_RELAY_METRICS` | `metrics` | serve the metrics in Prometheus's text format at `GET /metrics` on the relay's port (true) |
/// | `STRATA_RELAY_LOG_LEVEL` | `logLevel` | `trace` … `critical` (`info`) |
struct RelaySettings {
    struct Listen {
        var host: String?
        var port: Int?
        var tlsCertificateFile: String?
        var tlsKeyFile: String?
    }
    struct Model {
        var paths: [String]?
        var name: String?
    }
    struct Postgres {
        var host: String?
        var port: Int?
        var socket: String?
        var user: String?
        var password: String?
        var passwordFile: String?
        var database: String?
        var tls: String?
        var caFile: String?
        var serverName: String?
    }
    struct JWT {
        var hs256Secret: String?
        var hs256SecretFile: String?
        var es256PublicKeyFile: String?
        var jwksFile: String?
        var issuer: String?
        var audience: String?
        var userClaim: String?
        var leewaySeconds: Double?
        var requireExpiry: Bool?
    }

    var listen = Listen()
    var model = Model()
    var postgres = Postgres()
    var jwt = JWT()
    var schemaPolicy: String?
    var connections: Int?
    var maxBodyBytes: Int?
    var heartbeatSeconds: Double?
    var idleTimeoutSeconds: Double?
    var metrics: Bool?
    var logLevel: String?

    /// Each setting's key (in the file, in the shape of this type) and its environment
    /// variable (after `STRATA_RELAY_`).
    static let environmentNames: [String: String] = [
        "listen.host": "HOST", "listen.port": "PORT", "listen.tlsCertificateFile": "TLS_CERTIFICATE_FILE",
        "listen.tlsKeyFile": "TLS_KEY_FILE", "model.paths": "MODELS", "model.name": "MODEL_NAME",
        "postgres.host": "PG_HOST", "postgres.port": "PG_PORT", "postgres.socket": "PG_SOCKET", "postgres.user": "PG_USER",
        "postgres.password": "PG_PASSWORD", "postgres.passwordFile": "PG_PASSWORD_FILE", "postgres.database": "PG_DATABASE",
        "postgres.tls": "PG_TLS", "postgres.caFile": "PG_CA_FILE", "postgres.serverName": "PG_SERVER_NAME",
        "schemaPolicy": "SCHEMA_POLICY", "connections": "CONNECTIONS", "jwt.hs256Secret": "JWT_HS256_SECRET",
        "jwt.hs256SecretFile": "JWT_HS256_SECRET_FILE", "jwt.es256PublicKeyFile": "JWT_ES256_PUBLIC_KEY_FILE",
        "jwt.jwksFile": "JWT_JWKS_FILE", "jwt.issuer": "JWT_ISSUER", "jwt.audience": "JWT_AUDIENCE",
        "jwt.userClaim": "JWT_USER_CLAIM", "jwt.leewaySeconds": "JWT_LEEWAY_SECONDS", "jwt.requireExpiry": "JWT_REQUIRE_EXP",
        "maxBodyBytes": "MAX_BODY_BYTES", "heartbeatSeconds": "HEARTBEAT_SECONDS", "idleTimeoutSeconds": "IDLE_TIMEOUT_SECONDS",
        "metrics": "METRICS", "logLevel": "LOG_LEVEL",
    ]

    /// The settings read through swift-configuration: the environment's `STRATA_RELAY_…`
    /// variables (an empty one is unset; `STRATA_RELAY_MODELS` is `:`-separated) over the JSON
    /// file's keys. A value of the wrong type, in either, is an error that names it.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
    static func load(file: String?, environment: [String: String]) async throws -> RelaySettings {
        let names = environmentNames
        let variables = environment.filter { $0.key.hasPrefix("STRATA_RELAY_") && !$0.value.isEmpty }
        let secrets: Set<String> = ["STRATA_RELAY_PG_PASSWORD", "STRATA_RELAY_JWT_HS256_SECRET"]
        // A setting's key, looked up as its variable: the provider encodes a key's components
        // joined by "_", upper-cased.
        let fromEnvironment = KeyMappingProvider(
            upstream: EnvironmentVariablesProvider(environmentVariables: variables, secretsSpecifier: .specific(secrets), arraySeparator: ":")
        ) { key in
            guard let name = names[key.components.joined(separator: ".")] else { return AbsoluteConfigKey(["strata", "relay", "unknown"]) }
            return AbsoluteConfigKey(["strata", "relay"] + name.lowercased().split(separator: "_").map(String.init))
        }
        var providers: [any ConfigProvider] = [fromEnvironment]
        if let file {
            guard FileManager.default.isReadableFile(atPath: file) else { throw RelayConfigurationError("cannot read the configuration file \(file)") }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
            } catch {
                throw RelayConfigurationError("the configuration file \(file) is not the relay's JSON: \(error)")
            }
        }
        let config = ConfigReader(providers: providers)
        // Where a key's value comes from, for errors.
        func named(_ key: String) -> String { "\(key) (STRATA_RELAY_\(names[key] ?? ""))" }
        func string(_ key: String) throws -> String? {
            if let value = config.string(forKey: ConfigKey(key), isSecret: secrets.contains("STRATA_RELAY_\(names[key] ?? "")")) { return value }
            if config.int(forKey: ConfigKey(key)) != nil || config.double(forKey: ConfigKey(key)) != nil || config.bool(forKey: ConfigKey(key)) != nil {
                throw RelayConfigurationError("\(named(key)) is not text")
            }
            return nil
        }
        func int(_ key: String) throws -> Int? {
            if let value = config.int(forKey: ConfigKey(key)) { return value }
            if let text = config.string(forKey: ConfigKey(key)) { throw RelayConfigurationError("\(named(key))=\(text) is not a number") }
            return nil
        }
        func double(_ key: String) throws -> Double? {
            if let value = config.double(forKey: ConfigKey(key)) { return value }
            if let value = config.int(forKey: ConfigKey(key)) { return Double(value) }
            if let text = config.string(forKey: ConfigKey(key)) { throw RelayConfigurationError("\(named(key))=\(text) is not a number") }
            return nil
        }
        func bool(_ key: String) throws -> Bool? {
            if let value = config.bool(forKey: ConfigKey(key)) { return value }
            if let text = config.string(forKey: ConfigKey(key)) { throw RelayConfigurationError("\(named(key))=\(text) is not true or false") }
            return nil
        }
        var settings = RelaySettings()
        settings.listen = Listen(
            host: try string("listen.host"), port: try int("listen.port"), tlsCertificateFile: try string("listen.tlsCertificateFile"),
            tlsKeyFile: try string("listen.tlsKeyFile"))
        settings.model = Model(paths: config.stringArray(forKey: "model.paths"), name: try string("model.name"))
        settings.postgres = Postgres(
            host: try string("postgres.host"), port: try int("postgres.port"), socket: try string("postgres.socket"),
            user: try string("postgres.user"), password: try string("postgres.password"), passwordFile: try string("postgres.passwordFile"),
            database: try string("postgres.database"), tls: try string("postgres.tls"), caFile: try string("postgres.caFile"),
            serverName: try string("postgres.serverName"))
        settings.jwt = JWT(
            hs256Secret: try string("jwt.hs256Secret"), hs256SecretFile: try string("jwt.hs256SecretFile"),
            es256PublicKeyFile: try string("jwt.es256PublicKeyFile"), jwksFile: try string("jwt.jwksFile"), issuer: try string("jwt.issuer"),
            audience: try string("jwt.audience"), userClaim: try string("jwt.userClaim"), leewaySeconds: try double("jwt.leewaySeconds"),
            requireExpiry: try bool("jwt.requireExpiry"))
        settings.schemaPolicy = try string("schemaPolicy")
        settings.connections = try int("connections")
        settings.maxBodyBytes = try int("maxBodyBytes")
        settings.heartbeatSeconds = try double("heartbeatSeconds")
        settings.idleTimeoutSeconds = try double("idleTimeoutSeconds")
        settings.metrics = try bool("metrics")
        settings.logLevel = try string("logLevel")
        return settings
    }

    /// How long a connection may send nothing while the relay waits for its next request or
    /// the rest of one (60 seconds by default; nil for 0: never closed for that). A response
    /// under way (a signals stream) is not cut by it.
    var idleTimeout: Duration? {
        get throws {
            let seconds = idleTimeoutSeconds ?? 60
            guard seconds >= 0, seconds.isFinite else {
                throw RelayConfigurationError("the idle timeout \(seconds) is not a number of seconds (0: never)")
            }
            return seconds == 0 ? nil : .milliseconds(Int64(seconds * 1000))
        }
    }

    /// The relay's own TLS: its certificate chain and private key, read from their PEM files
    /// (nil without them: plain HTTP).
    func serverTLS() throws -> TLSConfiguration? {
        switch (listen.tlsCertificateFile, listen.tlsKeyFile) {
        case (nil, nil):
            return nil
        case (let certificateFile?, let keyFile?):
            let chain: [NIOSSLCertificate]
            let key: NIOSSLPrivateKey
            do { chain = try NIOSSLCertificate.fromPEMFile(certificateFile) } catch {
                throw RelayConfigurationError("cannot read the TLS certificate chain from \(certificateFile): \(error)")
            }
            do { key = try NIOSSLPrivateKey(file: keyFile, format: .pem) } catch {
                throw RelayConfigurationError("cannot read the TLS private key from \(keyFile): \(error)")
            }
            guard !chain.isEmpty else { throw RelayConfigurationError("no certificate in \(certificateFile)") }
            return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        default:
            throw RelayConfigurationError("TLS needs both STRATA_RELAY_TLS_CERTIFICATE_FILE and STRATA_RELAY_TLS_KEY_FILE")
        }
    }

    var level: Logger.Level {
        get throws {
            guard let logLevel else { return .info }
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw RelayConfigurationError("the log level \(logLevel) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return level
        }
    }

    static func read(_ path: String, _ what: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw RelayConfigurationError("cannot read \(what) from \(path)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The database connection: a Unix socket, or a host and port (TLS when asked).
    func postgresConfiguration() throws -> PostgresConnection.Configuration {
        guard let user = postgres.user else { throw RelayConfigurationError("no database role: set STRATA_RELAY_PG_USER") }
        var password = postgres.password
        if let file = postgres.passwordFile {
            password = try Self.read(file, "the database password").trimmingCharacters(in: .newlines)
        }
        if let socket = postgres.socket {
            return PostgresConnection.Configuration(unixSocketPath: socket, username: user, password: password, database: postgres.database)
        }
        guard let host = postgres.host else {
            throw RelayConfigurationError("no database server: set STRATA_RELAY_PG_HOST (and STRATA_RELAY_PG_PORT) or STRATA_RELAY_PG_SOCKET")
        }
        let tls: PostgresConnection.Configuration.TLS
        switch postgres.tls?.lowercased() ?? "require" {
        case "require":
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile = postgres.caFile { configuration.trustRoots = .file(caFile) }
            tls = .require(try NIOSSLContext(configuration: configuration))
        case "disable":
            tls = .disable
        case let other:
            throw RelayConfigurationError("STRATA_RELAY_PG_TLS=\(other): use require (the default over TCP) or disable")
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: postgres.port ?? 5432, username: user, password: password, database: postgres.database, tls: tls)
        if let serverName = postgres.serverName { configuration.options.tlsServerName = serverName }
        return configuration
    }

    /// The token rules: at least one key.
    func tokenRules() throws -> RelayTokenRules {
        var keys: [RelayTokenRules.Key] = []
        if let secret = jwt.hs256Secret { keys.append(.hs256(secret: secret)) }
        if let file = jwt.hs256SecretFile {
            keys.append(.hs256(secret: try Self.read(file, "the HS256 secret").trimmingCharacters(in: .newlines)))
        }
        if let file = jwt.es256PublicKeyFile { keys.append(.es256(publicKeyPEM: try Self.read(file, "the ES256 public key"))) }
        if let file = jwt.jwksFile { keys.append(.jwks(json: try Self.read(file, "the JWKS document"))) }
        guard !keys.isEmpty else {
            throw RelayConfigurationError(
                "no JWT key: set STRATA_RELAY_JWT_HS256_SECRET(_FILE), STRATA_RELAY_JWT_ES256_PUBLIC_KEY_FILE or STRATA_RELAY_JWT_JWKS_FILE")
        }
        return RelayTokenRules(
            keys: keys, issuer: jwt.issuer, audience: jwt.audience, userClaim: jwt.userClaim ?? "sub",
            requiresExpiry: jwt.requireExpiry ?? true, leeway: .milliseconds(Int64((jwt.leewaySeconds ?? 30) * 1000)))
    }

    func policy() throws -> PostgresSyncServer.SchemaPolicy {
        switch schemaPolicy ?? "createAndExtend" {
        case "createAndExtend": return .createAndExtend
        case "requireExisting": return .requireExisting
        case let other: throw RelayConfigurationError("the schema policy \(other) is not createAndExtend or requireExisting")
        }
    }
}
