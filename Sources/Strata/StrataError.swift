import Foundation

/// The one pattern of Strata's public errors: each is a value (`Hashable`, `Sendable`) that
/// says what is at fault — the entity, object, attribute, rule or path — and, where there is
/// one, what to do, in its `description`; and each bridges to `localizedDescription` (and to
/// `NSError`'s description on Apple platforms) with that same text.
///
/// Catch a specific error to act on its fields; catch `any StrataError` to show or log any of
/// them.
///
/// ```swift
/// do {
///     try store.write { db in try db.insert(note) }
/// } catch let error as RuleViolationError {
///     highlight(error.member)              // "title"
/// } catch let error as any StrataError {
///     print(error.localizedDescription)    // what is at fault, in a sentence
/// }
/// ```
///
/// Errors of SQLite that Strata does not recognise are GRDB's `DatabaseError`, unchanged.
public protocol StrataError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {}

extension StrataError {
    /// The error's `description`.
    public var errorDescription: String? { description }
}

extension DeleteDeniedError: StrataError {}
extension IdentityChangeError: StrataError {}
extension UniqueConstraintError: StrataError {}
extension StorageError: StrataError {}
extension MigrationError: StrataError {}
extension StoreError: StrataError {}
extension StoreOpenError: StrataError {}
extension RuleViolationError: StrataError {}
extension HistoryPrunedError: StrataError {}
extension HistoryTokenAheadError: StrataError {}
extension ValueDecodingError: StrataError {}
extension InvalidValueError: StrataError {}
extension QueryError: StrataError {}
extension ResultsError: StrataError {}
extension ResultsEditError: StrataError {}
extension BatchValidationError: StrataError {}
extension OrderError: StrataError {}
