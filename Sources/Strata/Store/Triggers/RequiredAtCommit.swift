import GRDB

/// The required to-one relationships that are checked when a transaction commits rather
/// than by each statement, as Core Data checks them at save.
///
/// A required to-one stored as a foreign key is checked at commit when an immediate check
/// would make a valid model impossible:
/// - its destination's inverse has the `nullify` rule: deleting the destination leaves the
///   object without one, and the transaction must give it another (or delete it);
/// - it is part of a cycle of required to-ones (`Person.passport` ↔ `Passport.holder`,
///   each required): no object of the cycle could be inserted first.
///
/// Its column stays `NOT NULL`, and references its destination with a foreign key that
/// SQLite checks at commit (`DEFERRABLE INITIALLY DEFERRED`). "Not set" is the id 0
/// (``EntityID/unsaved``), which SQLite never assigns: insert the first object of a cycle
/// with the key `.unsaved` and set it before the transaction ends; a `nullify` rule sets it
/// to 0. ``Store/write(_:)`` then fails with ``RuleViolationError`` (rule
/// ``RuleViolationError/Rule/required``) naming the object whose key is still 0, or
/// ``RuleViolationError/Rule/missingDestination(_:)`` naming one whose key was written
/// pointing to a missing row and still does (see ``RelationshipChecks``); SQLite refuses any
/// other commit whose keys point at missing rows (`FOREIGN KEY constraint failed`).
struct RequiredAtCommit {
    let schema: SchemaDescriptor
    /// Every required to-one of the schema checked at commit (found once: ``Store`` checks
    /// them at the end of every write transaction).
    private(set) var keys: [Key] = []

    init(schema: SchemaDescriptor) {
        self.schema = schema
        keys = findKeys()
    }

    /// One such relationship: its entity, name and foreign key column.
    struct Key: Hashable {
        var entity: String
        var relationship: String
        var column: String
        /// The entity's primary key column, quoted.
        var key: String
    }

    private func findKeys() -> [Key] {
        var result: [Key] = []
        for entity in schema.entities {
            for relationship in entity.relationships where isCheckedAtCommit(relationship, of: entity) {
                if case .foreignKey(let column) = relationship.storage {
                    result.append(Key(entity: entity.name, relationship: relationship.name, column: column, key: quoted(entity.primaryKey)))
                }
            }
        }
        return result
    }

    /// Whether `relationship` of `entity` is a required to-one checked at commit.
    func isCheckedAtCommit(_ relationship: RelationshipDescriptor, of entity: EntityDescriptor) -> Bool {
        guard relationship.isRequired, !relationship.isToMany, case .foreignKey = relationship.storage else { return false }
        if let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
           inverse.deleteRule == .nullify, !(relationship.destination == entity.name && relationship.inverse == relationship.name)
        {
            return true
        }
        return reaches(relationship.destination, entity.name)
    }

    /// Whether `start` reaches `goal` through required to-ones stored as foreign keys.
    private func reaches(_ start: String, _ goal: String) -> Bool {
        var seen: Set<String> = []
        var stack = [start]
        while let name = stack.popLast() {
            if name == goal { return true }
            guard seen.insert(name).inserted, let entity = schema.entity(named: name) else { continue }
            for relationship in entity.relationships where relationship.isRequired && !relationship.isToMany {
                if case .foreignKey = relationship.storage { stack.append(relationship.destination) }
            }
        }
        return false
    }

    /// The first object (by entity, then id) whose required key checked at commit is not set.
    func firstUnset(_ db: Database) throws -> RuleViolationError? {
        for key in keys {
            if let id = try Int64.fetchOne(
                db, sql: "SELECT \(key.key) FROM \(quoted(key.entity)) WHERE \(quoted(key.column)) = 0 ORDER BY \(key.key) LIMIT 1")
            {
                return RuleViolationError(entity: key.entity, id: id, member: key.relationship, rule: .required)
            }
        }
        return nil
    }

    /// Every object whose required key checked at commit is not set (for migrations).
    func unset(_ db: Database, limit: Int) throws -> [RuleViolationError] {
        var result: [RuleViolationError] = []
        for key in keys {
            let ids = try Int64.fetchAll(
                db, sql: "SELECT \(key.key) FROM \(quoted(key.entity)) WHERE \(quoted(key.column)) = 0 ORDER BY \(key.key) LIMIT \(limit)")
            result += ids.map { RuleViolationError(entity: key.entity, id: $0, member: key.relationship, rule: .required) }
        }
        return result
    }
}
