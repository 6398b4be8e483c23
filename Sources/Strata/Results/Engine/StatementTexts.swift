import Foundation

/// The texts of the statements a fetcher runs at every commit (re-reads of a few ids, one
/// item's sort keys), each built once: building one from the plan cost more than running it.
/// Shared by the copies of a fetcher; the statements themselves stay prepared in the
/// connection's cache.
final class StatementTexts: @unchecked Sendable {
    enum Kind: Hashable {
        case reread(count: Int, keysOnly: Bool)
        case sortKeys
    }

    private let lock = NSLock()
    private var texts: [Kind: StatementText] = [:]

    /// The text of `kind`, built by `make` the first time.
    func text(for kind: Kind, _ make: () throws -> StatementText) rethrows -> StatementText {
        if let text = lock.withLock({ texts[kind] }) { return text }
        let text = try make()
        lock.withLock { texts[kind] = text }
        return text
    }
}
