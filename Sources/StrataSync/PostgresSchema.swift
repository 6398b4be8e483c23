import Foundation
import GRDB
import Strata

/// The server's tables, made from the same model as the devices' stores: one typed table
/// per synced entity, one per many-to-many join table, and the sync's own tables (the
/// change log, the pushes already applied, the server's id).
///
/// ```swift
/// print(PostgresSchema(schema: NotesModel.schema).sql)   // review it, or apply it yourself
/// ```
public struct PostgresSchema: Sendable {
    let tables: SyncedTables

    /// The server schema of `schema`'s entities (all of them, or those named in `entities`).
    public init(schema: SchemaDescriptor, entities: Set<String>? = nil) throws {
        tables = try SyncedTables(schema: schema, only: entities)
    }

    init(tables: SyncedTables) { self.tables = tables }

    /// Every statement, in order, as one script.
    public var sql: String { statements.map { $0 + ";\n" }.joined() }

    /// Every statement, in order: the sync's tables, then each entity's table, its indexes
    /// and its log trigger, then the join tables. Each can be run again (`IF NOT EXISTS`).
    public var statements: [String] {
        var result = Self.syncTables
        for entity in orderedEntities {
            result.append(createTable(entity))
            result += indexes(of: entity)
            result.append(Self.logTrigger(on: entity.name, key: entity.primaryKey))
        }
        for join in tables.joins {
            result.append(createJoinTable(join))
            result.append("CREATE INDEX IF NOT EXISTS \(quoted("strata_index_\(join.name)_\(join.inverseColumn)")) ON \(quoted(join.name)) (\(quoted(join.inverseColumn)))")
            result.append(Self.linkTrigger(on: join))
        }
        return result
    }

    /// Entities with the destinations of their keys first, so each `REFERENCES` names a table
    /// made before it (a cycle's back references are added by `ALTER TABLE` at the end).
    var orderedEntities: [SyncedTables.Entity] { tables.dependencyOrder.compactMap(tables.entity(named:)) }

    // MARK: - The sync's own tables

    /// The advisory lock that orders the change log: every transaction that writes a synced
    /// table takes it at its first change and keeps it to its commit, so log positions are
    /// handed out in commit order and a reader never sees a later position before an
    /// earlier one.
    static let logLock = 51_730_911

    static let syncTables: [String] = [
        "CREATE TABLE IF NOT EXISTS strata_sync_meta (key text PRIMARY KEY, value text NOT NULL)",
        "INSERT INTO strata_sync_meta (key, value) VALUES ('server', gen_random_uuid()::text) ON CONFLICT (key) DO NOTHING",
        """
        CREATE TABLE IF NOT EXISTS strata_sync_log (seq bigserial PRIMARY KEY, tbl text NOT NULL, id uuid, \
        a uuid, b uuid, origin text, at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS strata_sync_pushes (push uuid PRIMARY KEY, device text NOT NULL, \
        result text NOT NULL, at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE OR REPLACE FUNCTION strata_sync_log_object() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_advisory_xact_lock(\(logLock));
          INSERT INTO strata_sync_log (tbl, id, origin) VALUES (TG_TABLE_NAME,
            (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END ->> TG_ARGV[0])::uuid,
            NULLIF(current_setting('strata.device', true), ''));
          IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) ->> TG_ARGV[0]) IS DISTINCT FROM (to_jsonb(NEW) ->> TG_ARGV[0]) THEN
            INSERT INTO strata_sync_log (tbl, id, origin) VALUES (TG_TABLE_NAME, (to_jsonb(OLD) ->> TG_ARGV[0])::uuid,
              NULLIF(current_setting('strata.device', true), ''));
          END IF;
          PERFORM pg_notify('strata_sync', '');
          RETURN NULL;
        END $$
        """,
        """
        CREATE OR REPLACE FUNCTION strata_sync_log_link() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE r jsonb;
        BEGIN
          PERFORM pg_advisory_xact_lock(\(logLock));
          IF TG_OP <> 'INSERT' THEN
            r := to_jsonb(OLD);
            INSERT INTO strata_sync_log (tbl, a, b, origin) VALUES (TG_TABLE_NAME, (r ->> TG_ARGV[0])::uuid,
              (r ->> TG_ARGV[1])::uuid, NULLIF(current_setting('strata.device', true), ''));
          END IF;
          IF TG_OP <> 'DELETE' THEN
            r := to_jsonb(NEW);
            INSERT INTO strata_sync_log (tbl, a, b, origin) VALUES (TG_TABLE_NAME, (r ->> TG_ARGV[0])::uuid,
              (r ->> TG_ARGV[1])::uuid, NULLIF(current_setting('strata.device', true), ''));
          END IF;
          PERFORM pg_notify('strata_sync', '');
          RETURN NULL;
        END $$
        """,
    ]

    static func logTrigger(on table: String, key: String) -> String {
        """
        CREATE OR REPLACE TRIGGER strata_sync_log AFTER INSERT OR UPDATE OR DELETE ON \(quoted(table)) \
        FOR EACH ROW EXECUTE FUNCTION strata_sync_log_object(\(literal(key)))
        """
    }

    static func linkTrigger(on join: SyncedTables.Join) -> String {
        """
        CREATE OR REPLACE TRIGGER strata_sync_log AFTER INSERT OR UPDATE OR DELETE ON \(quoted(join.name)) \
        FOR EACH ROW EXECUTE FUNCTION strata_sync_log_link(\(literal(join.column)), \(literal(join.inverseColumn)))
        """
    }

    // MARK: - Entity tables

    /// PostgreSQL's type for a column of `type`. `Float` is kept as `double precision`, so
    /// that the value a device stored comes back bit for bit.
    static func sqlType(_ type: ValueType) -> String {
        switch type {
        case .string, .url, .enumeration: "text"
        case .int: "bigint"
        case .int32: "integer"
        case .int16: "smallint"
        case .double, .float: "double precision"
        case .bool: "boolean"
        case .date: "timestamp(3) with time zone"
        case .uuid: "uuid"
        case .data: "bytea"
        case .decimal: "numeric"
        case .json: "json"
        }
    }

    /// The SQL that turns wire text (`$n`) into a value of `type`.
    static func fromText(_ parameter: String, _ type: ValueType) -> String {
        switch type {
        case .date: "(\(parameter)::timestamp AT TIME ZONE 'UTC')"
        case .bool: "(\(parameter)::integer <> 0)"
        case .data: "decode(\(parameter), 'hex')"
        default: "\(parameter)::\(sqlType(type))"
        }
    }

    /// The SQL that reads a column of `type` as wire text.
    static func toText(_ column: String, _ type: ValueType) -> String {
        let column = quoted(column)
        return switch type {
        case .date: "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
        case .bool: "(CASE WHEN \(column) THEN '1' ELSE '0' END)"
        case .data: "encode(\(column), 'hex')"
        default: "\(column)::text"
        }
    }

    func columnDefinition(_ column: SyncedTables.Column, of entity: SyncedTables.Entity) -> String {
        var definition = "\(quoted(column.name)) \(Self.sqlType(column.valueType))"
        if !column.isOptional { definition += " NOT NULL" }
        guard case .value(let type) = column.kind, let attribute = entity.descriptor.attribute(named: column.name) else {
            if case .reference(let destination) = column.kind,
               let relationship = entity.descriptor.relationships.first(where: {
                   if case .foreignKey(let name) = $0.storage { return name == column.name } else { return false }
               }),
               let action = onDelete(of: relationship, destination: destination)
            {
                let key = tables.entity(named: destination)?.primaryKey ?? "id"
                definition += " REFERENCES \(quoted(destination)) (\(quoted(key))) ON DELETE \(action)"
            }
            return definition
        }
        if let value = attribute.defaultValue {
            switch value {
            case .now: definition += " DEFAULT now()"
            case .uuid: definition += " DEFAULT gen_random_uuid()"
            case .value(let value):
                if let text = SyncValue.text(of: value, as: type) {
                    definition += " DEFAULT \(Self.fromText(literal(text), type))"
                }
            }
        }
        var checks: [String] = []
        let name = quoted(column.name)
        let rules = attribute.rules
        if let minimum = rules.minimum, let text = SyncValue.text(of: minimum, as: type) {
            checks.append("\(name) >= \(Self.fromText(literal(text), type))")
        }
        if let maximum = rules.maximum, let text = SyncValue.text(of: maximum, as: type) {
            checks.append("\(name) <= \(Self.fromText(literal(text), type))")
        }
        if let minLength = rules.minLength { checks.append("char_length(\(name)) >= \(minLength)") }
        if let maxLength = rules.maxLength { checks.append("char_length(\(name)) <= \(maxLength)") }
        if case .enumeration(_, let cases) = type {
            checks.append("\(name) IN (\(cases.map(literal).joined(separator: ", ")))")
        }
        if !checks.isEmpty { definition += " CHECK (\(checks.joined(separator: " AND ")))" }
        return definition
    }

    /// The `ON DELETE` action that does on the server what the inverse relationship's delete
    /// rule does in a store (nil: no foreign key, the reference may dangle).
    func onDelete(of relationship: RelationshipDescriptor, destination: String) -> String? {
        let rule = tables.schema.entity(named: destination)?.relationship(named: relationship.inverse)?.deleteRule ?? .nullify
        return switch rule {
        case .cascade: "CASCADE"
        case .nullify: "SET NULL"
        case .deny: "RESTRICT"
        case .noAction: nil
        }
    }

    func createTable(_ entity: SyncedTables.Entity) -> String {
        var parts = ["\(quoted(entity.primaryKey)) uuid PRIMARY KEY"]
        parts += entity.columns.map { columnDefinition($0, of: entity) }
        var uniques = entity.descriptor.uniques
        uniques += entity.descriptor.attributes.filter(\.isUnique).map { [$0.name] }
        // One-to-ones: the key column holds each destination once.
        for relationship in entity.descriptor.relationships where !relationship.isToMany {
            if case .foreignKey(let column) = relationship.storage,
               let inverse = tables.schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
               !inverse.isToMany
            {
                uniques.append([column])
            }
        }
        for columns in uniques { parts.append("UNIQUE (\(columns.map(quoted).joined(separator: ", ")))") }
        return "CREATE TABLE IF NOT EXISTS \(quoted(entity.name)) (\(parts.joined(separator: ", ")))"
    }

    func indexes(of entity: SyncedTables.Entity) -> [String] {
        var result: [String] = []
        var lists = entity.descriptor.indexes.map { $0.columns.map { ($0.name, $0.isDescending) } }
        lists += entity.descriptor.attributes.filter { $0.isIndexed && !$0.isUnique }.map { [($0.name, false)] }
        lists += entity.references.map { [($0.column, false)] }
        for columns in lists {
            let name = "strata_index_\(entity.name)_" + columns.map { $0.0 + ($0.1 ? "_desc" : "") }.joined(separator: "_")
            let list = columns.map { quoted($0.0) + ($0.1 ? " DESC" : "") }.joined(separator: ", ")
            result.append("CREATE INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(entity.name)) (\(list))")
        }
        return result
    }

    func createJoinTable(_ join: SyncedTables.Join) -> String {
        let entityKey = tables.entity(named: join.entity)?.primaryKey ?? "id"
        let destinationKey = tables.entity(named: join.destination)?.primaryKey ?? "id"
        return """
            CREATE TABLE IF NOT EXISTS \(quoted(join.name)) (\
            \(quoted(join.column)) uuid NOT NULL REFERENCES \(quoted(join.entity)) (\(quoted(entityKey))) ON DELETE CASCADE, \
            \(quoted(join.inverseColumn)) uuid NOT NULL REFERENCES \(quoted(join.destination)) (\(quoted(destinationKey))) ON DELETE CASCADE, \
            PRIMARY KEY (\(quoted(join.column)), \(quoted(join.inverseColumn))))
            """
    }

    // MARK: - Versions

    /// Every synced table's columns, with their wire types, as the server should have them.
    var columnTypes: [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for entity in tables.entities {
            var columns = [entity.primaryKey: "uuid"]
            for column in entity.columns { columns[column.name] = Self.sqlType(column.valueType) }
            result[entity.name] = columns
        }
        for join in tables.joins { result[join.name] = [join.column: "uuid", join.inverseColumn: "uuid"] }
        return result
    }

    /// The model's name and a fingerprint of its synced tables, columns and types.
    public var version: SyncModelVersion {
        let lines = columnTypes.flatMap { table, columns in columns.map { "\(table).\($0.key):\($0.value)" } }.sorted()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in lines.joined(separator: "\n").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return SyncModelVersion(name: tables.schema.name, fingerprint: String(hash, radix: 16))
    }
}

/// `"name"`, with inner quotes doubled.
func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

/// `'text'`, with inner quotes doubled.
func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
