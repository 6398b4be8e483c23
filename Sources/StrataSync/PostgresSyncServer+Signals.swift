import PostgresNIO

extension PostgresSyncServer {
    /// Which users the changes logged after position `seq` concern, among `users`: what a
    /// relay signals, so that a change wakes the devices of the users who may read it, not
    /// every connected device. Returns the log's last position (the next call's `seq`) and
    /// the users, or nil for *every user*:
    ///
    /// - when `seq` is nil (the caller starts listening: anything may have changed);
    /// - when the model declares no per-user data;
    /// - when a change may have taken an object out of someone's data, or cannot be traced to
    ///   its users: a change logged without a device (another service's write, or the access
    ///   triggers naming the objects whose users changed), a link, an object that no longer
    ///   exists (deleted), or one of an entity every user reads or that declares no users.
    ///
    /// Otherwise each logged object exists and belongs to a declared entity, and the users
    /// are those who may read it now, by the same rule a pull reads with
    /// (``ServerAccess/visible(_:_:depth:)``). A user's object that left nobody's data but
    /// this user's (never another's) is therefore signalled to exactly its readers; one that
    /// left someone's data is logged by the access triggers, without a device, and signals
    /// everyone.
    package func usersConcerned(after seq: Int64?, among users: [String]) async throws -> (position: Int64, users: Set<String>?) {
        try await race(timeout: requestTimeout) {
            try await self.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
                let position = try await self.logPosition(connection)
                guard let seq else { return (position, nil) }
                guard position > seq else { return (position, []) }
                let access = self.schema.access
                guard access.isDeclared else { return (position, nil) }
                let range = "l.seq > \(seq) AND l.seq <= \(position)"
                // The entities whose objects belong to users (an owner, members, or a parent's).
                let traced = self.schema.tables.entities.filter { entity in
                    switch entity.descriptor.access {
                    case .users?, .through?: true
                    case .everyone?, nil: false
                    }
                }
                let exists = traced.map { entity in
                    "(l.tbl = \(literal(entity.name)) AND EXISTS (SELECT 1 FROM \(quoted(entity.name)) t WHERE t.\(quoted(entity.primaryKey)) = l.id))"
                }
                let untraced = """
                    SELECT EXISTS (SELECT 1 FROM strata_sync_log l WHERE \(range) AND \
                    (l.origin IS NULL OR l.id IS NULL OR NOT (\(exists.isEmpty ? "false" : exists.joined(separator: " OR ")))))
                    """
                for value in try await connection.run(PostgresQuery(unsafeSQL: untraced), logger: self.logger).decode(Bool.self)
                where value {
                    return (position, nil)
                }
                if users.isEmpty { return (position, []) }
                // Each user who may read one of the objects: the pull's rule, with the user a
                // column of the list rather than the transaction's setting.
                let readable = traced.map { entity in
                    let visible = access.visible(entity.name, "t").replacingOccurrences(of: ServerAccess.user, with: "u.name")
                    return "(l.tbl = \(literal(entity.name)) AND EXISTS (SELECT 1 FROM \(quoted(entity.name)) t WHERE t.\(quoted(entity.primaryKey)) = l.id AND \(visible)))"
                }
                let sql = """
                    SELECT u.name FROM unnest($1::text[]) AS u(name) WHERE EXISTS \
                    (SELECT 1 FROM strata_sync_log l WHERE \(range) AND (\(readable.joined(separator: " OR "))))
                    """
                var binds = PostgresBindings()
                binds.append(users)
                var concerned: Set<String> = []
                for name in try await connection.run(PostgresQuery(unsafeSQL: sql, binds: binds), logger: self.logger).decode(String.self) {
                    concerned.insert(name)
                }
                return (position, concerned)
            }
        }
    }
}
