import GRDB

/// The delete rules of a schema as SQLite triggers.
///
/// The rule on relationship R of entity A says what happens to R's destinations when an A
/// is deleted (Core Data's meaning). Foreign keys only guard integrity (`REFERENCES`
/// without actions); every rule is carried out by a trigger on A, so that all rules look
/// alike, can change in a migration without rebuilding tables, and are seen by the
/// committed-change events (SQLite's update hook reports trigger-made changes):
///
/// | storage of R | `nullify` | `cascade` | `deny` | `noAction` |
/// | --- | --- | --- | --- | --- |
/// | foreign key in A (to-one) | nothing (A's row is gone) | delete the destination | refuse while the destination exists | nothing |
/// | foreign key in the destination | set it to NULL | delete the destinations | refuse while any exists | nothing, and no constraint: references dangle |
/// | join table | delete A's join rows | delete the destinations, then A's join rows | refuse while any linked destination exists | nothing, and no constraint: join rows dangle |
///
/// A to-one relationship that is its own inverse (a self-referencing one-to-one, `Node.twin`)
/// has both roles at once: its rule applies to the node the deleted one points at and to
/// every node pointing at it. Likewise a many-to-many that is its own inverse
/// (`Person.friends`): a link is one join row in either order, so its rule applies to the
/// people on the other side of every row naming the deleted one in either column. In both
/// cases `deny` ignores an object's link to itself, which goes with the object.
///
/// `deny` triggers run `BEFORE DELETE` and `RAISE(ABORT, 'strata: delete denied: A.R')`,
/// which the store maps to ``DeleteDeniedError``; the others run `AFTER DELETE`. The
/// connection enables `recursive_triggers`, so a cascade through a self-referencing
/// relationship (a tree) reaches every level (up to SQLite's trigger depth, 1000).
struct DeleteRuleTriggers {
    let schema: SchemaDescriptor

    static let denyMessagePrefix = "strata: delete denied: "

    static let identityMessagePrefix = "strata: identity change: "

    /// Trigger name → `CREATE TRIGGER` statement: the delete rules, and for every entity
    /// table a trigger that refuses a change of a row's id (ids are identities; see
    /// ``IdentityChangeError``).
    var triggers: [String: String] {
        var result: [String: String] = [:]
        for entity in schema.entities {
            let name = "strata_identity_\(entity.name)"
            let k = quoted(entity.primaryKey)
            result[name] = """
                CREATE TRIGGER \(quoted(name)) BEFORE UPDATE OF \(k) ON \(quoted(entity.name)) \
                WHEN NEW.\(k) IS NOT OLD.\(k) BEGIN \
                SELECT RAISE(ABORT, '\(Self.identityMessagePrefix)\(entity.name)'); END
                """
        }
        for entity in schema.entities {
            for relationship in entity.relationships {
                if let (name, sql) = trigger(for: relationship, of: entity, watch: false) { result[name] = sql }
                if let (name, sql) = selfLinkCleanup(entity, relationship) { result[name] = sql }
            }
        }
        return result
    }

    /// The trigger of `relationship`'s rule; with `watch`, the watch of its `deny` rule instead.
    private func trigger(
        for relationship: RelationshipDescriptor, of entity: EntityDescriptor, watch: Bool
    ) -> (String, String)? {
        let name = "strata_delete_\(entity.name)_\(relationship.name)"
        let table = quoted(entity.name)
        let destination = quoted(relationship.destination)
        // This table's key (`OLD.<k>`) and the destination's.
        let k = quoted(entity.primaryKey)
        let dk = quoted(schema.entity(named: relationship.destination)?.primaryKey ?? "id")
        let rule = relationship.deleteRule
        if rule == .noAction { return nil }

        switch relationship.storage {
        case .foreignKey(let column):
            let fk = quoted(column)
            if relationship.destination == entity.name && relationship.inverse == relationship.name {
                return selfInverseTrigger(name, entity, relationship, fk: fk, watch: watch)
            }
            switch rule {
            case .nullify, .noAction:
                return nil
            case .cascade:
                return (name, """
                    CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) WHEN OLD.\(fk) IS NOT NULL BEGIN \
                    DELETE FROM \(destination) WHERE \(dk) = OLD.\(fk); END
                    """)
            case .deny:
                return denyTrigger(name, entity, relationship, watch: watch, when: """
                    OLD.\(fk) IS NOT NULL AND EXISTS (SELECT 1 FROM \(destination) WHERE \(dk) = OLD.\(fk))
                    """)
            }

        case .inverseForeignKey:
            guard let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
                  case .foreignKey(let column) = inverse.storage
            else { return nil }
            let fk = quoted(column)
            switch rule {
            case .noAction:
                return nil
            case .nullify:
                // A required key checked at commit becomes unset (0), to be set again
                // before the transaction ends (``RequiredAtCommit``).
                let unset = schema.entity(named: relationship.destination).map {
                    RequiredAtCommit(schema: schema).isCheckedAtCommit(inverse, of: $0)
                } == true ? "0" : "NULL"
                return (name, """
                    CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                    UPDATE \(destination) SET \(fk) = \(unset) WHERE \(fk) = OLD.\(k); END
                    """)
            case .cascade:
                return (name, """
                    CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                    DELETE FROM \(destination) WHERE \(fk) = OLD.\(k); END
                    """)
            case .deny:
                return denyTrigger(name, entity, relationship, watch: watch, when: """
                    EXISTS (SELECT 1 FROM \(destination) WHERE \(fk) = OLD.\(k))
                    """)
            }

        case .joinTable(let joinName, let column, let inverseColumn):
            let join = quoted(joinName), col = quoted(column), inv = quoted(inverseColumn)
            if relationship.destination == entity.name && relationship.inverse == relationship.name {
                return selfInverseJoinTrigger(name, entity, relationship, join: join, col: col, inv: inv, watch: watch)
            }
            switch rule {
            case .noAction:
                return nil
            case .nullify:
                return (name, """
                    CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                    DELETE FROM \(join) WHERE \(col) = OLD.\(k); END
                    """)
            case .cascade:
                return (name, """
                    CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                    DELETE FROM \(destination) WHERE \(dk) IN (SELECT \(inv) FROM \(join) WHERE \(col) = OLD.\(k)); \
                    DELETE FROM \(join) WHERE \(col) = OLD.\(k); END
                    """)
            case .deny:
                return denyTrigger(name, entity, relationship, watch: watch, when: """
                    EXISTS (SELECT 1 FROM \(join) JOIN \(destination) ON \(destination).\(dk) = \(join).\(inv) \
                    WHERE \(join).\(col) = OLD.\(k))
                    """)
            }
        }
    }

    /// The trigger of a to-one relationship that is its own inverse (`Node.twin` ↔
    /// `Node.twin`): a node's destinations are the node its column points at and every node
    /// whose column points at it, so both directions are handled — in particular, `nullify`
    /// clears the references to the deleted node, which the foreign key would refuse.
    private func selfInverseTrigger(
        _ name: String, _ entity: EntityDescriptor, _ relationship: RelationshipDescriptor, fk: String, watch: Bool
    ) -> (String, String)? {
        let table = quoted(entity.name), k = quoted(entity.primaryKey)
        let destinations = "(\(k) = OLD.\(fk) OR \(fk) = OLD.\(k))"
        switch relationship.deleteRule {
        case .noAction:
            return nil
        case .nullify:
            return (name, """
                CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                UPDATE \(table) SET \(fk) = NULL WHERE \(fk) = OLD.\(k); END
                """)
        case .cascade:
            return (name, """
                CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                DELETE FROM \(table) WHERE \(destinations); END
                """)
        case .deny:
            return denyTrigger(name, entity, relationship, watch: watch, when: """
                EXISTS (SELECT 1 FROM \(table) WHERE \(destinations) AND \(k) <> OLD.\(k))
                """)
        }
    }

    /// The trigger of a many-to-many relationship that is its own inverse (`Person.friends`
    /// ↔ `Person.friends`): a link is one join row, stored in either order, so a person's
    /// destinations are the people on the other side of every row that has the person in
    /// either column. `cascade` deletes them (and, through the recursive triggers, their own
    /// friends in turn); `deny` ignores a person's link to itself, which goes with the person
    /// (see ``selfLinkCleanup(_:_:)``), as a node that is its own twin does.
    private func selfInverseJoinTrigger(
        _ name: String, _ entity: EntityDescriptor, _ relationship: RelationshipDescriptor,
        join: String, col: String, inv: String, watch: Bool
    ) -> (String, String)? {
        let table = quoted(entity.name), k = quoted(entity.primaryKey)
        let links = "\(col) = OLD.\(k) OR \(inv) = OLD.\(k)"
        switch relationship.deleteRule {
        case .noAction:
            return nil
        case .nullify:
            return (name, """
                CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                DELETE FROM \(join) WHERE \(links); END
                """)
        case .cascade:
            return (name, """
                CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(table) BEGIN \
                DELETE FROM \(table) WHERE \(k) IN \
                (SELECT \(inv) FROM \(join) WHERE \(col) = OLD.\(k) UNION SELECT \(col) FROM \(join) WHERE \(inv) = OLD.\(k)); \
                DELETE FROM \(join) WHERE \(links); END
                """)
        case .deny:
            return denyTrigger(name, entity, relationship, watch: watch, when: """
                EXISTS (SELECT 1 FROM \(join) JOIN \(table) ON \(table).\(k) IN (\(join).\(col), \(join).\(inv)) \
                WHERE (\(join).\(col) = OLD.\(k) OR \(join).\(inv) = OLD.\(k)) AND \(table).\(k) <> OLD.\(k))
                """)
        }
    }

    /// With `deny` on a many-to-many relationship that is its own inverse, the trigger that
    /// removes a deleted person's links to itself (the only links the deny rule lets
    /// through), which the foreign keys would otherwise refuse.
    private func selfLinkCleanup(
        _ entity: EntityDescriptor, _ relationship: RelationshipDescriptor
    ) -> (String, String)? {
        guard relationship.deleteRule == .deny, relationship.destination == entity.name,
              relationship.inverse == relationship.name,
              case .joinTable(let joinName, let column, let inverseColumn) = relationship.storage
        else { return nil }
        let name = "strata_selflinks_\(entity.name)_\(relationship.name)"
        let k = quoted(entity.primaryKey)
        return (name, """
            CREATE TRIGGER \(quoted(name)) AFTER DELETE ON \(quoted(entity.name)) BEGIN \
            DELETE FROM \(quoted(joinName)) WHERE \(quoted(column)) = OLD.\(k) AND \(quoted(inverseColumn)) = OLD.\(k); END
            """)
    }

    /// A `deny` trigger: refuses the delete when `condition` holds. With `watch`, its watch
    /// instead: a TEMP trigger for the store's writer connection, with the same condition,
    /// that calls ``DeniedDeleteWatch/functionName`` (SQLite runs a table's TEMP triggers
    /// before its own), so that the store learns of a refused delete even when the caller
    /// swallows the error — `RAISE(ABORT)` undoes only the statement.
    private func denyTrigger(
        _ name: String, _ entity: EntityDescriptor, _ relationship: RelationshipDescriptor, watch: Bool,
        when condition: String
    ) -> (String, String) {
        let message = denyMessage(entity, relationship)
        if watch {
            let watchName = "strata_watch_\(entity.name)_\(relationship.name)"
            return (watchName, """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(watchName)) BEFORE DELETE ON main.\(quoted(entity.name)) \
                WHEN \(condition) BEGIN SELECT \(DeniedDeleteWatch.functionName)(\(message)); END
                """)
        }
        return (name, """
            CREATE TRIGGER \(quoted(name)) BEFORE DELETE ON \(quoted(entity.name)) WHEN \(condition) BEGIN \
            SELECT RAISE(ABORT, \(message)); END
            """)
    }

    /// The watches of the `deny` rules (see ``denyTrigger(_:_:_:watch:when:)``): trigger
    /// name → `CREATE TEMP TRIGGER` statement.
    var denyWatches: [String: String] {
        var result: [String: String] = [:]
        for entity in schema.entities {
            for relationship in entity.relationships where relationship.deleteRule == .deny {
                guard let (name, sql) = trigger(for: relationship, of: entity, watch: true) else { continue }
                result[name] = sql
            }
        }
        return result
    }

    private func denyMessage(_ entity: EntityDescriptor, _ relationship: RelationshipDescriptor) -> String {
        SchemaSQL.literal((Self.denyMessagePrefix + "\(entity.name).\(relationship.name)").databaseValue)
    }
}
