/// What one ``StoreSync/sync()`` did.
public struct SyncReport: Hashable, Sendable, CustomStringConvertible {
    /// Changes pushed and acknowledged by the server, those it refused included.
    public var pushedChanges = 0
    /// Pushed changes the server refused (a unique value taken, a deleted destination, a
    /// count rule): each is undone here and recorded in the conflict log.
    public var changesRefusedByServer = 0
    /// Changes pulled from the server.
    public var pulledChanges = 0
    /// Pulled changes that met a local change or rule and were recorded in the conflict log
    /// (a local change a deletion overrode, a server change a rule here could not take).
    public var conflictsWhilePulling = 0

    /// The entries this sync added to the conflict log (``StoreSync/conflicts(since:)``):
    /// the refused pushed changes and the conflicts met while pulling.
    public var conflictsRecorded: Int { changesRefusedByServer + conflictsWhilePulling }

    public init() {}

    /// `pushed 4 (4 refused by the server), pulled 0 (0 conflicts); 4 conflicts recorded`.
    public var description: String {
        "pushed \(pushedChanges) (\(changesRefusedByServer) refused by the server), pulled \(pulledChanges) "
            + "(\(conflictsWhilePulling) conflicts); \(conflictsRecorded) conflicts recorded"
    }

    /// The old name of ``pushedChanges``.
    @available(*, deprecated, renamed: "pushedChanges")
    public var pushed: Int {
        get { pushedChanges }
        set { pushedChanges = newValue }
    }

    /// The old name of ``changesRefusedByServer``.
    @available(*, deprecated, renamed: "changesRefusedByServer")
    public var refused: Int {
        get { changesRefusedByServer }
        set { changesRefusedByServer = newValue }
    }

    /// The old name of ``pulledChanges``.
    @available(*, deprecated, renamed: "pulledChanges")
    public var pulled: Int {
        get { pulledChanges }
        set { pulledChanges = newValue }
    }

    /// The old name of ``conflictsWhilePulling`` (the conflicts of the pull only; see
    /// ``conflictsRecorded`` for all those a sync recorded).
    @available(*, deprecated, renamed: "conflictsWhilePulling")
    public var conflicts: Int {
        get { conflictsWhilePulling }
        set { conflictsWhilePulling = newValue }
    }
}
