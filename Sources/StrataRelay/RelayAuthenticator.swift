import Foundation
import JWTKit

/// How the relay checks a device's bearer token (a JWT): the keys that may sign it and the
/// claims it must carry.
///
/// Every token must be signed by one of the keys (an HS256 secret, an ES256 public key, or a
/// key of a JWKS document: RS256, ES256, …), must not be expired (`exp`, required unless
/// ``requiresExpiry`` is false) or not yet valid (`nbf`), must name ``issuer`` in `iss` and
/// ``audience`` in `aud` when they are set, and must carry the user id in ``userClaim``.
/// ``leeway`` allows for clocks that differ a little.
public struct RelayTokenRules: Sendable {
    /// A key that may sign tokens.
    public enum Key: Sendable {
        /// An HMAC SHA-256 secret (HS256), shared with whoever signs the tokens.
        case hs256(secret: String, kid: String? = nil)
        /// An ECDSA P-256 public key (ES256), in PEM (`-----BEGIN PUBLIC KEY-----`).
        case es256(publicKeyPEM: String, kid: String? = nil)
        /// A JWKS document (`{"keys": [...]}`, as an identity provider publishes it): each key
        /// needs its `kid`; RS256, ES256 and the other algorithms of jwt-kit.
        case jwks(json: String)
    }

    /// The keys; a token's `kid` header picks one, and a token without `kid` is tried
    /// against each.
    public var keys: [Key]
    /// The issuer a token must name in `iss`; nil: not checked.
    public var issuer: String?
    /// The audience a token must name in `aud` (a string or one of a list); nil: not checked.
    public var audience: String?
    /// The claim that holds the user id (`sub` by default).
    public var userClaim: String
    /// Whether a token without `exp` is refused (true by default: a token that never expires
    /// cannot be taken back).
    public var requiresExpiry: Bool
    /// How far `exp` and `nbf` may be off (clocks that differ).
    public var leeway: Duration

    public init(
        keys: [Key], issuer: String? = nil, audience: String? = nil, userClaim: String = "sub",
        requiresExpiry: Bool = true, leeway: Duration = .seconds(30)
    ) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.userClaim = userClaim
        self.requiresExpiry = requiresExpiry
        self.leeway = leeway
    }
}

/// Why a token was refused: the `error` code and the `reason` of the relay's 401 answer.
/// The reason names what was wrong (and the claim's value when it is the token's own, as the
/// expiry), never a key or a secret.
public struct RelayAuthenticationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var error: String
    public var reason: String
    public var description: String { "\(error): \(reason)" }

    static func missing() -> Self {
        Self(error: "missing_token", reason: "no bearer token: send the header Authorization: Bearer <JWT>")
    }
    static func malformed(_ why: String) -> Self { Self(error: "malformed_token", reason: "the bearer token is not a JWT: \(why)") }
}

/// A user the relay let in: who the token names, and until when.
public struct RelayUser: Sendable, Hashable {
    /// The user id, from the configured claim.
    public var id: String
    /// When the token expires (its `exp`), if it says: a signals stream ends then, and the
    /// device opens another with a fresh token.
    public var expiresAt: Date?
}

/// Checks bearer tokens against ``RelayTokenRules``.
public final class RelayAuthenticator: Sendable {
    let rules: RelayTokenRules
    let keys: JWTKeyCollection

    /// An authenticator with the rules' keys; throws when a key cannot be read (a PEM or a
    /// JWKS that does not parse), naming which.
    public init(rules: RelayTokenRules) async throws {
        guard !rules.keys.isEmpty else { throw RelayConfigurationError("no JWT key: give an HS256 secret, an ES256 public key or a JWKS file") }
        self.rules = rules
        let keys = JWTKeyCollection()
        for (index, key) in rules.keys.enumerated() {
            // Every key gets a kid, so that a token without one is tried against each
            // (jwt-kit iterates over the keys it holds by kid).
            switch key {
            case .hs256(let secret, let kid):
                guard !secret.isEmpty else { throw RelayConfigurationError("the HS256 secret is empty") }
                await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid ?? "strata-relay-key-\(index)"))
            case .es256(let pem, let kid):
                let key: ES256PublicKey
                do { key = try ES256PublicKey(pem: pem) } catch {
                    throw RelayConfigurationError("the ES256 public key is not a P-256 public key in PEM (-----BEGIN PUBLIC KEY-----)")
                }
                await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid ?? "strata-relay-key-\(index)"))
            case .jwks(let json):
                do { try await keys.add(jwksJSON: json) } catch {
                    throw RelayConfigurationError("the JWKS document could not be read (each key needs a kid): \(error)")
                }
            }
        }
        self.keys = keys
    }

    /// The user a request's `Authorization` header names, or why not.
    public func authenticate(authorization: String?, now: Date = Date()) async -> Result<RelayUser, RelayAuthenticationFailure> {
        guard let authorization, !authorization.trimmingCharacters(in: .whitespaces).isEmpty else { return .failure(.missing()) }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .failure(.malformed("the Authorization header is not \"Bearer <JWT>\""))
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else {
            return .failure(.malformed("it does not have three non-empty parts separated by dots"))
        }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self, iteratingKeys: true)
        } catch let error as JWTError where error.errorType == .malformedToken {
            return .failure(.malformed("its header or claims cannot be decoded"))
        } catch is DecodingError {
            return .failure(.malformed("its claims are not a JSON object"))
        } catch {
            // A signature that does not verify, or one of an algorithm none of the keys
            // uses (jwt-kit says which in words of its own: neither tells more).
            return .failure(RelayAuthenticationFailure(
                error: "invalid_signature", reason: "the token's signature does not verify with any key of the relay"))
        }
        return check(claims, now: now)
    }

    func check(_ claims: Claims, now: Date) -> Result<RelayUser, RelayAuthenticationFailure> {
        let leeway = Double(rules.leeway.components.seconds) + Double(rules.leeway.components.attoseconds) / 1e18
        let time = now.timeIntervalSince1970
        func iso(_ seconds: Double) -> String {
            Date(timeIntervalSince1970: seconds).formatted(.iso8601)
        }
        switch claims.values["exp"] {
        case .number(let exp)?:
            if time > exp + leeway {
                return .failure(RelayAuthenticationFailure(error: "expired_token", reason: "the token expired at \(iso(exp)) (exp)"))
            }
        case nil, .null?:
            if rules.requiresExpiry {
                return .failure(RelayAuthenticationFailure(error: "invalid_token", reason: "the token has no expiry (exp), which the relay requires"))
            }
        default:
            return .failure(RelayAuthenticationFailure(error: "invalid_token", reason: "the token's exp is not a number of seconds"))
        }
        switch claims.values["nbf"] {
        case .number(let nbf)?:
            if time + leeway < nbf {
                return .failure(RelayAuthenticationFailure(error: "token_not_yet_valid", reason: "the token is not valid before \(iso(nbf)) (nbf)"))
            }
        case nil, .null?: break
        default:
            return .failure(RelayAuthenticationFailure(error: "invalid_token", reason: "the token's nbf is not a number of seconds"))
        }
        if let issuer = rules.issuer {
            guard case .string(let iss)? = claims.values["iss"], iss == issuer else {
                return .failure(RelayAuthenticationFailure(error: "wrong_issuer", reason: "the token's issuer (iss) is not the one the relay accepts"))
            }
        }
        if let audience = rules.audience {
            let audiences: [String]
            switch claims.values["aud"] {
            case .string(let one)?: audiences = [one]
            case .array(let many)?: audiences = many.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: audiences = []
            }
            guard audiences.contains(audience) else {
                return .failure(RelayAuthenticationFailure(
                    error: "wrong_audience", reason: "the token is not meant for this relay: its audience (aud) does not name \"\(audience)\""))
            }
        }
        let user: String
        switch claims.values[rules.userClaim] {
        case .string(let text)? where !text.isEmpty: user = text
        case .number(let number)? where number == number.rounded() && abs(number) < 1e15: user = String(Int64(number))
        default:
            return .failure(RelayAuthenticationFailure(
                error: "invalid_token", reason: "the token has no user id in its claim \"\(rules.userClaim)\""))
        }
        var expiry: Date?
        if case .number(let exp)? = claims.values["exp"] { expiry = Date(timeIntervalSince1970: exp + leeway) }
        return .success(RelayUser(id: user, expiresAt: expiry))
    }

    /// A token's claims, whatever they are: the rules are checked after the signature.
    struct Claims: JWTPayload {
        var values: [String: ClaimValue]

        init(values: [String: ClaimValue]) { self.values = values }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var values: [String: ClaimValue] = [:]
            for key in container.allKeys { values[key.stringValue] = try container.decode(ClaimValue.self, forKey: key) }
            self.values = values
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in values { try container.encode(value, forKey: AnyKey(stringValue: key)) }
        }

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// One claim's JSON value.
    enum ClaimValue: Codable, Sendable, Equatable {
        case string(String), number(Double), bool(Bool), array([ClaimValue]), object([String: ClaimValue]), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([ClaimValue].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: ClaimValue].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            case .null: try container.encodeNil()
            }
        }
    }
}

/// The relay's configuration cannot be used: what is wrong, in words.
public struct RelayConfigurationError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
