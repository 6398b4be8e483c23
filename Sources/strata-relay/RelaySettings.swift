import Foundation
import Logging
import NIOSSL
import PostgresNIO
import StrataRelay
import StrataSync

/// The relay's settings: a JSON file (`--config PATH`), then the environment, which wins.
/// Every setting, with its variable and its key in the file:
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
struct RelaySettings: Codable {
    struct Listen: Codable {
        var host: String?
        var port: Int?
        var tlsCertificateFile: String?
        var tlsKeyFile: String?
    }
    struct Model: Codable {
        var paths: [String]?
        var name: String?
    }
    struct Postgres: Codable {
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
    struct JWT: Codable {
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

    init() {}

    /// Every key optional, the groups (`listen`, `model`, `postgres`, `jwt`) too.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listen = try container.decodeIfPresent(Listen.self, forKey: .listen) ?? Listen()
        model = try container.decodeIfPresent(Model.self, forKey: .model) ?? Model()
        postgres = try container.decodeIfPresent(Postgres.self, forKey: .postgres) ?? Postgres()
        jwt = try container.decodeIfPresent(JWT.self, forKey: .jwt) ?? JWT()
        schemaPolicy = try container.decodeIfPresent(String.self, forKey: .schemaPolicy)
        connections = try container.decodeIfPresent(Int.self, forKey: .connections)
        maxBodyBytes = try container.decodeIfPresent(Int.self, forKey: .maxBodyBytes)
        heartbeatSeconds = try container.decodeIfPresent(Double.self, forKey: .heartbeatSeconds)
        idleTimeoutSeconds = try container.decodeIfPresent(Double.self, forKey: .idleTimeoutSeconds)
        metrics = try container.decodeIfPresent(Bool.self, forKey: .metrics)
        logLevel = try container.decodeIfPresent(String.self, forKey: .logLevel)
    }

    /// The file's settings (every key optional), then the environment's over them.
    static func load(file: String?, environment: [String: String]) throws -> RelaySettings {
        var settings = RelaySettings()
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw RelayConfigurationError("cannot read the configuration file \(file)") }
            do { settings = try JSONDecoder().decode(RelaySettings.self, from: data) } catch {
                throw RelayConfigurationError("the configuration file \(file) is not the relay's JSON: \(error)")
            }
        }
        func string(_ name: String) -> String? { environment["STRATA_RELAY_" + name].flatMap { $0.isEmpty ? nil : $0 } }
        func number<T: LosslessStringConvertible>(_ name: String, _ type: T.Type) throws -> T? {
            guard let text = string(name) else { return nil }
            guard let value = T(text) else { throw RelayConfigurationError("STRATA_RELAY_\(name)=\(text) is not a number") }
            return value
        }
        settings.listen.host = string("HOST") ?? settings.listen.host
        settings.listen.port = try number("PORT", Int.self) ?? settings.listen.port
        settings.listen.tlsCertificateFile = string("TLS_CERTIFICATE_FILE") ?? settings.listen.tlsCertificateFile
        settings.listen.tlsKeyFile = string("TLS_KEY_FILE") ?? settings.listen.tlsKeyFile
        if let paths = string("MODELS") { settings.model.paths = paths.split(separator: ":").map(String.init) }
        settings.model.name = string("MODEL_NAME") ?? settings.model.name
        settings.postgres.host = string("PG_HOST") ?? settings.postgres.host
        settings.postgres.port = try number("PG_PORT", Int.self) ?? settings.postgres.port
        settings.postgres.socket = string("PG_SOCKET") ?? settings.postgres.socket
        settings.postgres.user = string("PG_USER") ?? settings.postgres.user
        settings.postgres.password = string("PG_PASSWORD") ?? settings.postgres.password
        settings.postgres.passwordFile = string("PG_PASSWORD_FILE") ?? settings.postgres.passwordFile
        settings.postgres.database = string("PG_DATABASE") ?? settings.postgres.database
        settings.postgres.tls = string("PG_TLS") ?? settings.postgres.tls
        settings.postgres.caFile = string("PG_CA_FILE") ?? settings.postgres.caFile
        settings.postgres.serverName = string("PG_SERVER_NAME") ?? settings.postgres.serverName
        settings.schemaPolicy = string("SCHEMA_POLICY") ?? settings.schemaPolicy
        settings.connections = try number("CONNECTIONS", Int.self) ?? settings.connections
        settings.jwt.hs256Secret = string("JWT_HS256_SECRET") ?? settings.jwt.hs256Secret
        settings.jwt.hs256SecretFile = string("JWT_HS256_SECRET_FILE") ?? settings.jwt.hs256SecretFile
        settings.jwt.es256PublicKeyFile = string("JWT_ES256_PUBLIC_KEY_FILE") ?? settings.jwt.es256PublicKeyFile
        settings.jwt.jwksFile = string("JWT_JWKS_FILE") ?? settings.jwt.jwksFile
        settings.jwt.issuer = string("JWT_ISSUER") ?? settings.jwt.issuer
        settings.jwt.audience = string("JWT_AUDIENCE") ?? settings.jwt.audience
        settings.jwt.userClaim = string("JWT_USER_CLAIM") ?? settings.jwt.userClaim
        settings.jwt.leewaySeconds = try number("JWT_LEEWAY_SECONDS", Double.self) ?? settings.jwt.leewaySeconds
        if let text = string("JWT_REQUIRE_EXP") {
            guard let flag = Bool(text.lowercased()) else { throw RelayConfigurationError("STRATA_RELAY_JWT_REQUIRE_EXP=\(text) is not true or false") }
            settings.jwt.requireExpiry = flag
        }
        settings.maxBodyBytes = try number("MAX_BODY_BYTES", Int.self) ?? settings.maxBodyBytes
        settings.heartbeatSeconds = try number("HEARTBEAT_SECONDS", Double.self) ?? settings.heartbeatSeconds
        settings.idleTimeoutSeconds = try number("IDLE_TIMEOUT_SECONDS", Double.self) ?? settings.idleTimeoutSeconds
        if let text = string("METRICS") {
            guard let flag = Bool(text.lowercased()) else { throw RelayConfigurationError("STRATA_RELAY_METRICS=\(text) is not true or false") }
            settings.metrics = flag
        }
        settings.logLevel = string("LOG_LEVEL") ?? settings.logLevel
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
