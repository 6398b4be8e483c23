import Foundation

/// A position in a store's change history: every transaction recorded in the file has the
/// next token, in commit order, whichever process committed it. Tokens are never reused,
/// even after pruning, so a token saved to disk (it is `Codable`) stays meaningful across
/// launches.
///
/// ```swift
/// let start = try store.historyToken()
/// // … commits, in this process or another …
/// let history = try store.changes(since: start)
/// save(history.token)   // read from here next time
/// ```
///
/// See <doc:ChangeHistory>.
public struct HistoryToken: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The token of the last transaction before this position (0: before the first one).
    public let rawValue: Int64

    /// A token from its raw value, as saved.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Before the first transaction of every store.
    public static let beginning = HistoryToken(rawValue: 0)

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "HistoryToken(\(rawValue))" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One committed transaction, as recorded in the store's change history.
public struct HistoryTransaction: Hashable, Sendable {
    /// The transaction's token (the history after it starts here).
    public var token: HistoryToken
    /// When it was committed (the committing process's clock).
    public var date: Date
    /// Who wrote it: the `author` given to ``Store/write(author:_:)``, or the store's
    /// ``Store/Options/author``; nil when neither was set. A sync engine tags the remote
    /// changes it writes, and leaves out its own transactions when it reads the history.
    public var author: String?
    /// What it changed: rowids by table, net over the transaction, with the columns its
    /// updates could set (see ``CommittedChanges``). Its ``CommittedChanges/token`` and
    /// ``CommittedChanges/authors`` are filled in too.
    public var changes: CommittedChanges

    /// A transaction.
    public init(token: HistoryToken, date: Date, author: String?, changes: CommittedChanges) {
        self.token = token
        self.date = date
        self.author = author
        self.changes = changes
    }
}

/// What ``Store/changes(since:excludingAuthors:)`` returns: the transactions committed
/// after a token, and the token to read from next time.
public struct HistoryChanges: Hashable, Sendable {
    /// The transactions after the token, in commit order (the excluded authors' left out).
    public var transactions: [HistoryTransaction]
    /// The position after the last transaction read, excluded ones included: pass it to the
    /// next call.
    public var token: HistoryToken

    /// Changes and the next token.
    public init(transactions: [HistoryTransaction], token: HistoryToken) {
        self.transactions = transactions
        self.token = token
    }
}

/// The history no longer holds every transaction after the token asked for: it was pruned
/// past it (``Store/pruneHistory(through:)``, ``Store/pruneHistory(before:)``). What changed
/// since then cannot be told row by row; read everything again, then go on from
/// ``currentToken``.
public struct HistoryPrunedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The token that was asked for.
    public var token: HistoryToken
    /// The latest token when the error was thrown.
    public var currentToken: HistoryToken

    /// An error.
    public init(token: HistoryToken, currentToken: HistoryToken) {
        self.token = token
        self.currentToken = currentToken
    }

    public var description: String {
        "the change history was pruned past \(token.rawValue) (now at \(currentToken.rawValue)); "
            + "read everything again and continue from the current token"
    }

}

/// The token given to ``Store/changes(since:excludingAuthors:)`` is past the last transaction
/// of the file's history: the file was replaced by an earlier copy since the token was read
/// (a backup restored, a file copied back), or the token is another file's. Transactions
/// with the tokens between were never in this file, and the next ones will take those
/// numbers again, so the saved token cannot be used: read everything again and continue from
/// ``currentToken``, as after ``HistoryPrunedError``.
public struct HistoryTokenAheadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The token that was asked for.
    public var token: HistoryToken
    /// The file's latest token when the error was thrown.
    public var currentToken: HistoryToken

    /// An error.
    public init(token: HistoryToken, currentToken: HistoryToken) {
        self.token = token
        self.currentToken = currentToken
    }

    public var description: String {
        "the history token \(token.rawValue) is past this file's last transaction (\(currentToken.rawValue)): "
            + "the file is an earlier copy, or the token is another file's; read everything again and continue from the current token"
    }

}
