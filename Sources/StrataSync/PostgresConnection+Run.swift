import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// Runs `query` and returns its rows, or fails once the connection is closed: the server's
    /// statements go through here, never through postgres-nio's `query` directly.
    ///
    /// postgres-nio drops a query written to a connection whose channel has closed (its
    /// handlers are gone; the query's future never completes: vapor/postgres-nio#487, reverted
    /// by #501), and a request waiting for it would hold its task group forever, past
    /// ``PostgresSyncServer``'s deadline. Here the query is sent first (the `EventLoopFuture`
    /// API writes it at once) and the connection looked at after: still open, the query was
    /// sent before the channel began to close, and its handler answers it (or fails it when
    /// the connection closes); already closed, the answer is the query's or the connection's
    /// closing, whichever comes first.
    @discardableResult
    func run(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        let sent: EventLoopFuture<PostgresQueryResult> = self.query(query, logger: logger)
        guard isClosed else { return try await sent.get().rows }
        let answer = eventLoop.makePromise(of: PostgresQueryResult.self)
        sent.cascade(to: answer)
        closeFuture.whenComplete { _ in answer.fail(ChannelError.ioOnClosedChannel) }  // (the first completion wins)
        return try await answer.futureResult.get().rows
    }
}

extension [PostgresRow] {
    /// Each row's columns, decoded (as `PostgresRowSequence.decode` does).
    func decode<each Column: PostgresDecodable>(
        _ columnType: (repeat each Column).Type, file: String = #fileID, line: Int = #line
    ) throws -> [(repeat each Column)] {
        try map { try $0.decode(columnType, file: file, line: line) }
    }
}
