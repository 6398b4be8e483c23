import Foundation
import GRDB

/// The SQL that holds writes to the model's rules (see ``ValueRules``,
/// ``RelationshipDescriptor/minCount``).
///
/// - Bounds and lengths: for each rule, an `AFTER INSERT` and an `AFTER UPDATE OF` trigger
///   stored in the file (`strata_rule_…`), which `RAISE(ABORT, 'strata: rule: E||a|rule|limit')`:
///   every program writing the file keeps them. SQLite's `RAISE` takes a constant message,
///   so these cannot name the row; on the store's writer a TEMP twin of each
///   (`strata_rulewatch_…`, run first) calls ``RuleWatch/brokenFunctionName`` with the row's
///   id, which fails the statement with a message that names it.
/// - Patterns: only TEMP triggers on the store's writer, calling ``RuleWatch/matchFunctionName``
///   (Swift's `Regex`): SQLite has no regular expressions, and a trigger stored in the file
///   that called a function other programs lack would make their writes fail.
/// - Counts: TEMP triggers on the store's writer that tell ``RuleWatch`` the new count of
///   every object whose to-many changed; the watch checks them when the transaction commits.
struct RuleTriggers {
    let schema: SchemaDescriptor

    /// One value rule of one attribute, as SQL.
    struct ValueCheck {
        var entity: String
        var attribute: String
        var rule: String
        var limit: String
        /// True for a rule that only the store's connections can check (`pattern`).
        var needsSwift: Bool
        /// The entity's primary key column, quoted.
        var key: String
        /// The condition under which `value` (an SQL expression) breaks the rule.
        var breaks: (String) -> String
    }

    /// Every value rule of the schema, in declaration order.
    var valueChecks: [ValueCheck] {
        var result: [ValueCheck] = []
        for entity in schema.entities {
            for attribute in entity.attributes where !attribute.rules.isEmpty {
                let rules = attribute.rules
                func add(_ rule: String, _ limit: String, swift: Bool = false, _ breaks: @escaping (String) -> String) {
                    result.append(ValueCheck(
                        entity: entity.name, attribute: attribute.name, rule: rule, limit: limit, needsSwift: swift,
                        key: quoted(entity.primaryKey), breaks: breaks))
                }
                if let minimum = rules.minimum {
                    add("min", Self.text(minimum)) { "\($0) < \(SchemaSQL.literal(minimum))" }
                }
                if let maximum = rules.maximum {
                    add("max", Self.text(maximum)) { "\($0) > \(SchemaSQL.literal(maximum))" }
                }
                if let minLength = rules.minLength { add("minLength", String(minLength)) { "length(\($0)) < \(minLength)" } }
                if let maxLength = rules.maxLength { add("maxLength", String(maxLength)) { "length(\($0)) > \(maxLength)" } }
                if let pattern = rules.pattern {
                    let literal = SchemaSQL.literal(pattern.databaseValue)
                    add("pattern", pattern, swift: true) {
                        "\($0) IS NOT NULL AND NOT \(RuleWatch.matchFunctionName)(CAST(\($0) AS TEXT), \(literal))"
                    }
                }
            }
        }
        return result
    }

    /// A bound as messages write it.
    static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .int64(let int): return String(int)
        case .double(let double):
            return double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) : "\(double)"
        case .string(let text): return text
        default: return "\(value)"
        }
    }

    /// Trigger name → `CREATE TRIGGER` statement: the triggers stored in the file.
    var triggers: [String: String] {
        var result: [String: String] = [:]
        for check in valueChecks where !check.needsSwift {
            let message = SchemaSQL.literal(RuleViolationError.message(
                entity: check.entity, id: nil, member: check.attribute, rule: check.rule, limit: check.limit).databaseValue)
            for (event, suffix) in Self.events(check.attribute) {
                let name = "strata_rule_\(check.entity)_\(check.attribute)_\(check.rule)_\(suffix)"
                result[name] = """
                    CREATE TRIGGER \(quoted(name)) AFTER \(event) ON \(quoted(check.entity)) \
                    WHEN \(check.breaks("NEW.\(quoted(check.attribute))")) BEGIN SELECT RAISE(ABORT, \(message)); END
                    """
            }
        }
        return result
    }

    private static func events(_ attribute: String) -> [(String, String)] {
        [("INSERT", "insert"), ("UPDATE OF \(quoted(attribute))", "update")]
    }

    /// Trigger name → `CREATE TEMP TRIGGER` statement, for the store's writer connection:
    /// the value rules with the row's id, the patterns, and the count watches.
    var watches: [String: String] {
        var result: [String: String] = [:]
        for check in valueChecks {
            let arguments = [check.entity, check.attribute, check.rule, check.limit]
                .map { SchemaSQL.literal($0.databaseValue) }
            for (event, suffix) in Self.events(check.attribute) {
                let name = "strata_rulewatch_\(check.entity)_\(check.attribute)_\(check.rule)_\(suffix)"
                result[name] = """
                    CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(name)) AFTER \(event) ON main.\(quoted(check.entity)) \
                    WHEN \(check.breaks("NEW.\(quoted(check.attribute))")) BEGIN \
                    SELECT \(RuleWatch.brokenFunctionName)(\(arguments[0]), NEW.\(check.key), \(arguments[1]), \(arguments[2]), \(arguments[3])); END
                    """
            }
        }
        for count in countChecks {
            let note = { (id: String) in
                "SELECT \(RuleWatch.countFunctionName)(\(SchemaSQL.literal(count.entity.databaseValue)), \(SchemaSQL.literal(count.relationship.databaseValue)), \(id), \(count.count(id))) WHERE \(id) IS NOT NULL AND EXISTS (SELECT 1 FROM main.\(quoted(count.entity)) WHERE \(count.key) = \(id));"
            }
            let prefix = "strata_countwatch_\(count.entity)_\(count.relationship)"
            result[prefix + "_owner_insert"] = """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(prefix + "_owner_insert")) AFTER INSERT ON main.\(quoted(count.entity)) \
                BEGIN \(note("NEW.\(count.key)")) END
                """
            result[prefix + "_owner_delete"] = """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(prefix + "_owner_delete")) AFTER DELETE ON main.\(quoted(count.entity)) \
                BEGIN SELECT \(RuleWatch.countFunctionName)(\(SchemaSQL.literal(count.entity.databaseValue)), \(SchemaSQL.literal(count.relationship.databaseValue)), OLD.\(count.key), NULL); END
                """
            let column = quoted(count.column)
            result[prefix + "_insert"] = """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(prefix + "_insert")) AFTER INSERT ON main.\(quoted(count.table)) \
                BEGIN \(note("NEW.\(column)")) END
                """
            result[prefix + "_delete"] = """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(prefix + "_delete")) AFTER DELETE ON main.\(quoted(count.table)) \
                BEGIN \(note("OLD.\(column)")) END
                """
            result[prefix + "_update"] = """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(prefix + "_update")) AFTER UPDATE OF \(column) ON main.\(quoted(count.table)) \
                BEGIN \(note("OLD.\(column)")) \(note("NEW.\(column)")) END
                """
        }
        return result
    }

    // MARK: - Counts

    /// A to-many with `minCount` or `maxCount`, and where its links are stored.
    struct CountCheck {
        var entity: String
        var relationship: String
        var minCount: Int?
        var maxCount: Int?
        /// The table holding one row per link (the destination, or the join table), and its
        /// column holding the owner's id.
        var table: String
        var column: String
        /// The owner entity's primary key column, quoted.
        var key: String
        /// True for the side of a one-to-one that does not store the key and is `required`:
        /// a count of 0 breaks ``RuleViolationError/Rule/required``.
        var isRequiredToOne = false

        /// The SQL count of the links of the owner whose id is `id`.
        func count(_ id: String) -> String {
            "(SELECT COUNT(*) FROM main.\(quoted(table)) WHERE \(quoted(column)) = \(id))"
        }

        /// The condition under which `count` breaks the rule, and the rule.
        func rule(for count: Int) -> RuleViolationError.Rule? {
            if isRequiredToOne { return count < 1 ? .required : nil }
            if let minCount, count < minCount { return .minCount(minCount) }
            if let maxCount, count > maxCount { return .maxCount(maxCount) }
            return nil
        }
    }

    /// The to-manys with `minCount` or `maxCount`, and the required to-ones whose key the
    /// other side of their one-to-one stores (`required: true` there means at least one
    /// object points back, checked at commit like `minCount: 1`).
    var countChecks: [CountCheck] {
        var result: [CountCheck] = []
        for entity in schema.entities {
            for relationship in entity.relationships
            where !relationship.isToMany && relationship.isRequired && relationship.storage == .inverseForeignKey {
                guard let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
                      case .foreignKey(let foreignKey) = inverse.storage
                else { continue }
                result.append(CountCheck(
                    entity: entity.name, relationship: relationship.name, minCount: 1, maxCount: nil,
                    table: relationship.destination, column: foreignKey, key: quoted(entity.primaryKey),
                    isRequiredToOne: true))
            }
            for relationship in entity.relationships
            where relationship.isToMany && (relationship.minCount != nil || relationship.maxCount != nil) {
                let table: String, column: String
                switch relationship.storage {
                case .joinTable(let name, let own, _):
                    (table, column) = (name, own)
                case .inverseForeignKey:
                    guard let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
                          case .foreignKey(let foreignKey) = inverse.storage
                    else { continue }
                    (table, column) = (relationship.destination, foreignKey)
                case .foreignKey:
                    continue
                }
                result.append(CountCheck(
                    entity: entity.name, relationship: relationship.name, minCount: relationship.minCount,
                    maxCount: relationship.maxCount, table: table, column: column, key: quoted(entity.primaryKey)))
            }
        }
        return result
    }

    // MARK: - Existing rows

    /// Every row of the database that breaks a rule (for migrations), at most `limit` per
    /// rule, in entity and id order.
    /// With `requiredToOnesOnly`, only the required to-ones whose key the other side of their
    /// one-to-one stores.
    func violations(_ db: Database, limit: Int = 1_000, requiredToOnesOnly: Bool = false) throws -> [RuleViolationError] {
        var result: [RuleViolationError] = []
        for check in valueChecks where !requiredToOnesOnly {
            let ids = try Int64.fetchAll(db, sql: """
                SELECT \(check.key) FROM \(quoted(check.entity)) WHERE \(check.breaks(quoted(check.attribute))) ORDER BY \(check.key) LIMIT \(limit)
                """)
            guard let rule = RuleViolationError(message: RuleViolationError.message(
                entity: check.entity, id: nil, member: check.attribute, rule: check.rule, limit: check.limit))?.rule
            else { continue }
            result += ids.map { RuleViolationError(entity: check.entity, id: $0, member: check.attribute, rule: rule) }
        }
        for check in countChecks where check.isRequiredToOne || !requiredToOnesOnly {
            var conditions: [String] = []
            if check.isRequiredToOne {
                conditions.append("n < 1")
            } else if let minCount = check.minCount { conditions.append("n < \(minCount)") }
            if !check.isRequiredToOne, let maxCount = check.maxCount { conditions.append("n > \(maxCount)") }
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, n FROM (SELECT o.\(check.key) AS id, \(check.count("o.\(check.key)")) AS n FROM main.\(quoted(check.entity)) o) \
                WHERE \(conditions.joined(separator: " OR ")) ORDER BY id LIMIT \(limit)
                """)
            for row in rows {
                let id: Int64 = row[0], count: Int = row[1]
                if let rule = check.rule(for: count) {
                    result.append(RuleViolationError(entity: check.entity, id: id, member: check.relationship, rule: rule))
                }
            }
        }
        return result
    }
}

/// The store's writer-side part of the rules: the SQL functions that its TEMP triggers call
/// (see ``RuleTriggers``), and the commit check of the count rules.
///
/// The count triggers report each changed object's new count to ``countFunctionName``; at
/// commit (`databaseWillCommit`, where SQLite allows no query) the watch throws the first
/// count that breaks its rule, which rolls the transaction back. The function is
/// registered on every connection of the store (migrations check patterns with it).
final class RuleWatch: TransactionObserver, @unchecked Sendable {
    static let brokenFunctionName = "strata_rule_broken"
    static let matchFunctionName = "strata_matches"
    static let countFunctionName = "strata_note_count"
    static let danglingFunctionName = "strata_note_dangling"

    private struct Key: Hashable, Comparable {
        var entity: String
        var relationship: String
        var id: Int64
        static func < (a: Key, b: Key) -> Bool { (a.entity, a.id, a.relationship) < (b.entity, b.id, b.relationship) }
    }

    private let checks: [String: RuleTriggers.CountCheck]
    private let tables: Set<String>
    /// The latest count of each object whose count changed in this transaction (nil: deleted).
    private let counts = LockedValue<[Key: Int?]>([:])
    /// The objects whose key checked at commit was written pointing to no object in this
    /// transaction (``RelationshipChecks``), in the order they were noted.
    private let dangling = LockedValue<[Key]>([])
    private let relationshipChecks: RelationshipChecks

    init(schema: SchemaDescriptor) {
        let countChecks = RuleTriggers(schema: schema).countChecks
        var checks: [String: RuleTriggers.CountCheck] = [:]
        for check in countChecks { checks[check.entity + "." + check.relationship] = check }
        self.checks = checks
        self.tables = Set(SchemaSQL(schema: schema).columnsByTable.keys)
        self.relationshipChecks = RelationshipChecks(schema: schema)
    }

    /// `strata_matches(text, pattern)`: whether the whole text matches the regular expression.
    static let matchFunction = DatabaseFunction(matchFunctionName, argumentCount: 2, pure: true) { values in
        guard let text = String.fromDatabaseValue(values[0]), let pattern = String.fromDatabaseValue(values[1]) else {
            return nil
        }
        return try PatternCache.shared.matches(text, pattern)
    }

    /// Registers the functions and creates the TEMP triggers on the writer connection.
    func install(_ db: Database, schema: SchemaDescriptor) throws {
        db.add(function: DatabaseFunction(Self.brokenFunctionName, argumentCount: 5, pure: false) { values in
            let id = Int64.fromDatabaseValue(values[1])
            let parts = [values[0], values[2], values[3], values[4]].map { String.fromDatabaseValue($0) ?? "" }
            throw DatabaseError(
                resultCode: .SQLITE_CONSTRAINT,
                message: RuleViolationError.message(
                    entity: parts[0], id: id, member: parts[1], rule: parts[2], limit: parts[3]))
        })
        let counts = self.counts
        db.add(function: DatabaseFunction(Self.countFunctionName, argumentCount: 4, pure: false) { values in
            guard let entity = String.fromDatabaseValue(values[0]), let relationship = String.fromDatabaseValue(values[1]),
                  let id = Int64.fromDatabaseValue(values[2])
            else { return nil }
            let count = Int.fromDatabaseValue(values[3])
            counts.withLock { $0[Key(entity: entity, relationship: relationship, id: id)] = .some(count) }
            return nil
        })
        let dangling = self.dangling
        db.add(function: DatabaseFunction(Self.danglingFunctionName, argumentCount: 3, pure: false) { values in
            guard let entity = String.fromDatabaseValue(values[0]), let id = Int64.fromDatabaseValue(values[1]),
                  let relationship = String.fromDatabaseValue(values[2])
            else { return nil }
            let key = Key(entity: entity, relationship: relationship, id: id)
            dangling.withLock { if !$0.contains(key) { $0.append(key) } }
            return nil
        })
        let watches = RuleTriggers(schema: schema).watches.merging(relationshipChecks.watches) { $1 }
        for (_, sql) in watches.sorted(by: { $0.key < $1.key }) {
            try db.execute(sql: sql)
        }
    }

    /// The first object noted in this transaction whose key checked at commit still points
    /// to no object. Called by ``Store/write(_:)`` before it commits; a write made on the
    /// writer directly leaves that check to SQLite (`FOREIGN KEY constraint failed`).
    func firstDangling(_ db: Database) throws -> RuleViolationError? {
        let noted = dangling.withLock { $0 }
        guard !noted.isEmpty else { return nil }
        return try relationshipChecks.firstDangling(db, among: noted.map { ($0.entity, $0.id, $0.relationship) })
    }

    /// Counts again, with SQL, every count reported in this transaction: a statement that
    /// failed after its triggers reported a count (or a savepoint rolled back) left it
    /// stale. Called by ``Store/write(_:)`` before it commits; writes made on the writer
    /// directly rely on the reported counts.
    func recount(_ db: Database) throws {
        let pending = counts.withLock { Array($0.keys) }
        guard !pending.isEmpty else { return }
        var fresh: [Key: Int?] = [:]
        for key in pending {
            guard let check = checks[key.entity + "." + key.relationship] else { continue }
            let count = try Int.fetchOne(db, sql: """
                SELECT \(check.count("o.\(check.key)")) FROM main.\(quoted(check.entity)) o WHERE o.\(check.key) = ?
                """, arguments: [key.id])
            fresh[key] = .some(count)
        }
        counts.withLock { $0 = fresh }
    }

    /// The count rules that the objects whose counts changed in this transaction break now
    /// (counted again with SQL): what the commit would refuse.
    func brokenCounts(_ db: Database) throws -> [RuleViolationError] {
        try recount(db)
        let pending = counts.withLock { $0 }
        return pending.sorted(by: { $0.key < $1.key }).compactMap { key, count in
            guard let count, let check = checks[key.entity + "." + key.relationship], let rule = check.rule(for: count) else {
                return nil
            }
            return RuleViolationError(entity: key.entity, id: key.id, member: key.relationship, rule: rule)
        }
    }

    /// The model's tables, as the store's ``CommitObserver`` observes them. (With an observer
    /// interested in none of them, the multi-process tests' controllers fell behind the
    /// other processes' commits: GRDB then filters the events it reports by kind.)
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { tables.contains(eventKind.tableName) }

    func databaseDidChange(with event: DatabaseEvent) {}

    func databaseWillCommit() throws {
        let pending = counts.withLock { $0 }
        for (key, count) in pending.sorted(by: { $0.key < $1.key }) {
            guard let count, let check = checks[key.entity + "." + key.relationship],
                  let rule = check.rule(for: count)
            else { continue }
            throw RuleViolationError(entity: key.entity, id: key.id, member: key.relationship, rule: rule)
        }
    }

    func databaseDidCommit(_ db: Database) {
        counts.withLock { $0 = [:] }
        dangling.withLock { $0 = [] }
    }

    func databaseDidRollback(_ db: Database) {
        counts.withLock { $0 = [:] }
        dangling.withLock { $0 = [] }
    }
}

/// Compiled regular expressions by pattern, shared by every connection.
final class PatternCache: @unchecked Sendable {
    static let shared = PatternCache()
    private let lock = NSLock()
    private var regexes: [String: Regex<AnyRegexOutput>] = [:]

    func matches(_ text: String, _ pattern: String) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let regex: Regex<AnyRegexOutput>
        if let cached = regexes[pattern] {
            regex = cached
        } else {
            regex = try Regex(pattern)
            regexes[pattern] = regex
        }
        return try regex.wholeMatch(in: text) != nil
    }
}
