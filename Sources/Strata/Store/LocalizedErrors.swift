import Foundation

// Every public error of Strata bridges to `localizedDescription` (and to `NSError`'s
// description on Apple platforms) with its readable `description`, which names what is at
// fault. The error types declared since carry the conformance themselves.

extension DeleteDeniedError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension MigrationError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension StoreError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension QueryError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension ResultsError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}

extension BatchValidationError: LocalizedError {
    /// The ``description``.
    public var errorDescription: String? { description }
}
