import Foundation
import Hummingbird
import Logging
import PostgresNIO
import StrataSync

/// A refusal of the relay: an HTTP status and the body `{"error": "...", "reason": "..."}`
/// (`error`, a short code; `reason`, what was wrong in words).
public struct RelayHTTPError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// The short code: `missing_token`, `expired_token`, `body_too_large`, `malformed_body`,
    /// `incomplete_body`, `unsupported_media_type`, …
    public var error: String
    /// What was wrong, in words (never a secret, nor the database's own error).
    public var reason: String
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, error: String, reason: String, headers: HTTPFields = [:]) {
        self.status = status
        self.error = error
        self.reason = reason
        self.headers = headers
    }

    /// The body's JSON.
    struct Body: Codable {
        var error: String
        var reason: String
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        let body = (try? JSONEncoder().encode(Body(error: error, reason: reason))) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func unauthorized(_ failure: RelayAuthenticationFailure) -> Self {
        // RFC 6750: the scheme, and the error for a token that was given.
        let code = failure.error == "missing_token" ? "" : ", error=\"invalid_token\""
        return Self(
            .unauthorized, error: failure.error, reason: failure.reason,
            headers: [.wwwAuthenticate: "Bearer realm=\"strata-relay\"\(code)"])
    }

    static func tooLarge(limit: Int) -> Self {
        Self(.contentTooLarge, error: "body_too_large", reason: "the body is larger than the relay takes (\(limit) bytes)")
    }

    static func unsupportedMediaType(_ contentType: String) -> Self {
        Self(
            .unsupportedMediaType, error: "unsupported_media_type",
            reason: "the body must be JSON (Content-Type: application/json), not \(contentType.prefix(100))")
    }

    static func incompleteBody() -> Self {
        Self(.badRequest, error: "incomplete_body", reason: "the body ended before its length, or its connection failed")
    }

    static func malformed(_ what: String, _ error: any Error) -> Self {
        Self(.badRequest, error: "malformed_body", reason: "the body is not a \(what) in JSON: \(describe(error))")
    }

    /// A decoding error in words, without the body's values.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "it is not JSON" }
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "the top level" : String(path.dropFirst(path.hasPrefix(".") ? 1 : 0))
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not valid JSON" : "the value at \(path(context)) is not valid"
        case .keyNotFound(let key, let context):
            return "\"\(key.stringValue)\" is missing at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "the value at \(path(context)) has the wrong type"
        @unknown default:
            return "it does not decode"
        }
    }

    /// A server's error as the relay answers it: the model's refusal in words (409), the
    /// database out of reach (503), anything else as an internal error whose details stay in
    /// the relay's log.
    static func from(serverError error: any Error, logger: Logger) -> Self {
        if let error = error as? RelayHTTPError { return error }
        if let error = error as? SyncDeviceOwnerError {
            return Self(.forbidden, error: "device_of_another_user", reason: error.description)
        }
        if let error = error as? SyncModelError {
            return Self(.conflict, error: "model_mismatch", reason: error.description)
        }
        let lostConnection = (error as? PSQLError).map {
            [.serverClosedConnection, .clientClosedConnection, .connectionError].contains($0.code)
        } ?? false
        if error is SyncTimeoutError || error is SyncConnectionError || lostConnection {
            logger.error("the database failed", metadata: ["error": "\(String(reflecting: error))"])
            return Self(.serviceUnavailable, error: "database_unavailable", reason: "the relay cannot reach its database now; try again later")
        }
        logger.error("a request failed", metadata: ["error": "\(String(reflecting: error))"])
        return Self(.internalServerError, error: "internal_error", reason: "the relay failed to answer; see its log")
    }
}

/// Answers every error of the relay's routes with its JSON body, and logs each request:
/// method, path, status, user and duration.
struct RelayRequestMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let user = RequestUser()
        let response: Response
        let refusal: RelayHTTPError?
        do {
            response = try await RequestUser.$current.withValue(user) { try await next(request, context) }
            refusal = nil
        } catch {
            let refused = self.refusal(for: error)
            refusal = refused
            response = try refused.response(from: request, context: context)
        }
        let elapsed = start.duration(to: .now)
        RelayMetrics.record(path: request.uri.path, status: Int(response.status.code), error: refusal?.error, elapsed: elapsed)
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        logger.info(
            "\(request.method) \(request.uri.path) \(response.status.code)",
            metadata: [
                "status": "\(response.status.code)", "path": "\(request.uri.path)", "user": "\(user.id ?? "-")",
                "ms": "\((milliseconds * 10).rounded() / 10)",
            ])
        return response
    }
}

extension RelayRequestMiddleware {
    /// The refusal that answers `error`.
    func refusal(for error: any Error) -> RelayHTTPError {
        switch error {
        case let error as RelayHTTPError:
            return error
        case let error as HTTPError:
            // The router's own refusals (no such route, a method it does not take).
            return RelayHTTPError(error.status, error: "http_\(error.status.code)", reason: error.body ?? error.status.reasonPhrase)
        default:
            return RelayHTTPError.from(serverError: error, logger: logger)
        }
    }
}

/// Answers the router's own refusals (no such route: 404; a method the route does not take)
/// and any other error with the relay's JSON body, `{"error": "...", "reason": "..."}`. Add it
/// to a router that serves only the relay, before its routes (`strata-relay` does); the
/// relay's routes answer their own errors so.
public struct RelayErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    public init(logger: Logger = Logger(label: "strata.relay")) { self.logger = logger }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as RelayHTTPError {
            RelayMetrics.record(path: request.uri.path, status: Int(error.status.code), error: error.error, elapsed: .zero)
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            logger.info("\(request.method) \(request.uri.path) \(error.status.code)", metadata: ["status": "\(error.status.code)"])
            let reason: String
            switch error.status {
            case .notFound: reason = "the relay has no route \(request.method) \(request.uri.path)"
            case .methodNotAllowed: reason = "the route \(request.uri.path) does not take \(request.method)"
            default: reason = error.body ?? error.status.reasonPhrase
            }
            let refusal = RelayHTTPError(error.status, error: error.status == .notFound ? "not_found" : "http_\(error.status.code)", reason: reason)
            RelayMetrics.record(path: request.uri.path, status: Int(error.status.code), error: refusal.error, elapsed: .zero)
            return try refusal.response(from: request, context: context)
        } catch {
            let refusal = RelayHTTPError.from(serverError: error, logger: logger)
            RelayMetrics.record(path: request.uri.path, status: Int(refusal.status.code), error: refusal.error, elapsed: .zero)
            return try refusal.response(from: request, context: context)
        }
    }
}

/// The user a request signed in as, for its log line.
final class RequestUser: @unchecked Sendable {
    @TaskLocal static var current: RequestUser?
    private let lock = NSLock()
    private var value: String?
    var id: String? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
