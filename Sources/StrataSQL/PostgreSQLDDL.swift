/// The PostgreSQL statements that make a sync server's tables from an ``SQLSchema``: the
/// sync's own tables (the change log, the pushes already applied, the server's id), then
/// each entity's table, its indexes and its log trigger, then the join tables.
///
/// ```swift
/// print(PostgreSQLDDL(schema: description).sql)
/// ```
public struct PostgreSQLDDL: Sendable {
    /// The tables the statements make.
    public var schema: SQLSchema

    /// The statements of `schema`.
    public init(schema: SQLSchema) { self.schema = schema }

    /// Every statement, in order, as one script.
    public var sql: String { statements.map { $0 + ";\n" }.joined() }

    /// Every statement, in order: the sync's tables and the model's version, then each
    /// entity's table, its indexes, its log and lock triggers, then the join tables, then the
    /// triggers that keep ordered lists' positions, then those of the count rules. Each
    /// can be run again (`IF NOT EXISTS`, `OR REPLACE`; a count trigger is dropped and made
    /// again, so that a script of a newer model replaces the rules).
    public var statements: [String] {
        var result = Self.syncTables
        if let modelStatement { result.append(modelStatement) }
        // Tables with the destinations of their keys first, so each `REFERENCES` names a
        // table made before it.
        for table in schema.orderedTables {
            result.append(createTable(table))
            result += indexes(of: table)
            result.append(Self.logTrigger(on: table.name, key: table.primaryKey))
            result.append(Self.lockTrigger(on: table.name))
        }
        for join in schema.joinTables {
            result.append(createJoinTable(join))
            result.append(
                "CREATE INDEX IF NOT EXISTS \(quoted("strata_index_\(join.name)_\(join.inverseColumn)")) ON \(quoted(join.name)) (\(quoted(join.inverseColumn)))"
            )
            result.append(Self.linkTrigger(on: join))
            result.append(Self.lockTrigger(on: join.name))
        }
        let positionTriggers = positionTriggers
        if !positionTriggers.isEmpty {
            result += [Self.positionFunction, Self.tieFunction]
            for (_, statements) in positionTriggers { result += statements }
        }
        if !schema.countRules.isEmpty {
            result.append(Self.countFunction)
            for (table, trigger) in countTriggers {
                result.append("DROP TRIGGER IF EXISTS \(Self.countTriggerName) ON \(quoted(table))")
                result.append(trigger)
            }
        }
        return result
    }

    // MARK: - The sync's own tables

    /// The advisory lock that orders the change log: every transaction that writes a synced
    /// table takes it at its first change and keeps it to its commit, so log positions are
    /// handed out in commit order and a reader never sees a later position before an
    /// earlier one.
    public static let logLock = 51_730_911

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
        logMarksInserts,
        logFunction,
        lockFunction,
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

    /// The function of ``lockTrigger(on:)``.
    /// Whether a log entry is an object's insert (`created`): a user's pull leaves out the
    /// objects made after the device's cursor by others and outside the user's data, which
    /// the device cannot hold. A column of its own, so that a log made before it gains it (its
    /// entries say false); a device's hello adds it to a server made before, where it may.
    public static let logMarksInserts = "ALTER TABLE strata_sync_log ADD COLUMN IF NOT EXISTS created boolean NOT NULL DEFAULT false"

    /// The trigger function that logs each change of an object (its insert marked, see
    /// ``logMarksInserts``).
    public static let logFunction = """
        CREATE OR REPLACE FUNCTION strata_sync_log_object() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_advisory_xact_lock(\(logLock));
          INSERT INTO strata_sync_log (tbl, id, origin, created) VALUES (TG_TABLE_NAME,
            (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END ->> TG_ARGV[0])::uuid,
            NULLIF(current_setting('strata.device', true), ''), TG_OP = 'INSERT');
          IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) ->> TG_ARGV[0]) IS DISTINCT FROM (to_jsonb(NEW) ->> TG_ARGV[0]) THEN
            INSERT INTO strata_sync_log (tbl, id, origin) VALUES (TG_TABLE_NAME, (to_jsonb(OLD) ->> TG_ARGV[0])::uuid,
              NULLIF(current_setting('strata.device', true), ''));
          END IF;
          PERFORM pg_notify('strata_sync', '');
          RETURN NULL;
        END $$
        """

    public static let lockFunction = """
        CREATE OR REPLACE FUNCTION strata_sync_lock() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_advisory_xact_lock(\(logLock));
          RETURN NULL;
        END $$
        """

    /// The name of the statement trigger that takes the log's lock before a statement
    /// touches a synced table's rows.
    public static let lockTriggerName = "strata_sync_lock"

    /// Takes the log's lock (``logLock``) before any row of `table` is locked by the
    /// statement: a transaction that took a row's lock first and the log's lock at its row
    /// trigger could deadlock with a push, which takes the log's lock first and then the
    /// rows' (PostgreSQL would abort one of them).
    public static func lockTrigger(on table: String) -> String {
        """
        CREATE OR REPLACE TRIGGER \(lockTriggerName) BEFORE INSERT OR UPDATE OR DELETE ON \(quoted(table)) \
        FOR EACH STATEMENT EXECUTE FUNCTION strata_sync_lock()
        """
    }

    static func logTrigger(on table: String, key: String) -> String {
        """
        CREATE OR REPLACE TRIGGER strata_sync_log AFTER INSERT OR UPDATE OR DELETE ON \(quoted(table)) \
        FOR EACH ROW EXECUTE FUNCTION strata_sync_log_object(\(literal(key)))
        """
    }

    static func linkTrigger(on join: SQLJoinTable) -> String {
        """
        CREATE OR REPLACE TRIGGER strata_sync_log AFTER INSERT OR UPDATE OR DELETE ON \(quoted(join.name)) \
        FOR EACH ROW EXECUTE FUNCTION strata_sync_log_link(\(literal(join.column)), \(literal(join.inverseColumn)))
        """
    }

    // MARK: - Count rules

    /// The name of the count trigger of every table that has one (one a table), and of its
    /// constraint: `SET CONSTRAINTS strata_sync_count IMMEDIATE` checks the counts so far.
    public static let countTriggerName = "strata_sync_count"

    /// The arguments of `table`'s count trigger, in groups of eight, one group per rule it
    /// must check: the owner's table, its key, the relationship, the column of `table` that
    /// holds the owner's key (the links' column, or the owner's key itself for an owner
    /// inserted), the links' table and column, `minCount` and `maxCount` (empty for none).
    public func countTriggerArguments(of table: String) -> [String] {
        var result: [String] = []
        for rule in schema.countRules {
            let bounds = [rule.minCount.map(String.init) ?? "", rule.maxCount.map(String.init) ?? ""]
            if rule.linksTable == table {
                result += [rule.table, rule.key, rule.relationship, rule.linksColumn, rule.linksTable, rule.linksColumn] + bounds
            }
            // An owner made with too few: checked when it is inserted.
            if rule.table == table, (rule.minCount ?? 0) > 0 {
                result += [rule.table, rule.key, rule.relationship, rule.key, rule.linksTable, rule.linksColumn] + bounds
            }
        }
        return result
    }

    /// Each table with a count trigger, and the statement that makes it: a constraint
    /// trigger deferred to the commit (a transaction may insert an owner before its
    /// destinations, or move destinations between owners), run for each row inserted, deleted
    /// or moved to another owner, that counts the links of the owners the row names.
    public var countTriggers: [(table: String, sql: String)] {
        var tables: [String] = []
        for rule in schema.countRules {
            for table in [rule.linksTable, rule.table] where !tables.contains(table) && !countTriggerArguments(of: table).isEmpty {
                tables.append(table)
            }
        }
        return tables.map { table in
            let arguments = countTriggerArguments(of: table)
            var moved: [String] = []
            for start in stride(from: 0, to: arguments.count, by: 8) where arguments[start + 3] != arguments[start + 1] || arguments[start] != table {
                if !moved.contains(arguments[start + 3]) { moved.append(arguments[start + 3]) }
            }
            var events = ["INSERT"]
            if !moved.isEmpty { events += ["UPDATE OF \(moved.map(quoted).joined(separator: ", "))", "DELETE"] }
            let sql = """
                CREATE CONSTRAINT TRIGGER \(Self.countTriggerName) AFTER \(events.joined(separator: " OR ")) ON \(quoted(table)) \
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION strata_sync_check_counts(\(arguments.map(literal).joined(separator: ", ")))
                """
            return (table, sql)
        }
    }

    /// Counts the links of the owners a row names (before and after the change) and refuses
    /// a count out of range with SQLSTATE 23514 (`check_violation`), naming the owner's table
    /// (`TABLE`), the relationship (`COLUMN`) and the owner's key (`DETAIL`, with the count).
    public static let countFunction = """
        CREATE OR REPLACE FUNCTION strata_sync_check_counts() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE i integer := 0; owner text; n bigint; low bigint; high bigint;
        BEGIN
          WHILE i < TG_NARGS LOOP
            low := NULLIF(TG_ARGV[i + 6], '')::bigint;
            high := NULLIF(TG_ARGV[i + 7], '')::bigint;
            FOREACH owner IN ARRAY ARRAY[
                CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) ->> TG_ARGV[i + 3] END,
                CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) ->> TG_ARGV[i + 3] END] LOOP
              CONTINUE WHEN owner IS NULL;
              EXECUTE format('SELECT (SELECT count(*) FROM %I WHERE %I = $1::uuid) FROM %I WHERE %I = $1::uuid',
                TG_ARGV[i + 4], TG_ARGV[i + 5], TG_ARGV[i], TG_ARGV[i + 1]) INTO n USING owner;
              IF n < low THEN
                RAISE EXCEPTION '% %: % has fewer than % objects (minCount %)', TG_ARGV[i], owner, TG_ARGV[i + 2], low, low
                  USING ERRCODE = 'check_violation', TABLE = TG_ARGV[i], COLUMN = TG_ARGV[i + 2],
                    CONSTRAINT = '\(countTriggerName)', DETAIL = format('%s has %s', owner, n);
              ELSIF n > high THEN
                RAISE EXCEPTION '% %: % has more than % objects (maxCount %)', TG_ARGV[i], owner, TG_ARGV[i + 2], high, high
                  USING ERRCODE = 'check_violation', TABLE = TG_ARGV[i], COLUMN = TG_ARGV[i + 2],
                    CONSTRAINT = '\(countTriggerName)', DETAIL = format('%s has %s', owner, n);
              END IF;
            END LOOP;
            i := i + 8;
          END LOOP;
          RETURN NULL;
        END $$
        """

    // MARK: - Types and values

    /// PostgreSQL's type for a column of `type`. `Float` is kept as `double precision`, so
    /// that the value a device stored comes back bit for bit.
    public static func sqlType(_ type: SQLValueType) -> String {
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

    /// The SQL that turns wire text (`$n`, or a literal) into a value of `type`.
    public static func fromText(_ parameter: String, _ type: SQLValueType) -> String {
        switch type {
        case .date: "(\(parameter)::timestamp AT TIME ZONE 'UTC')"
        case .bool: "(\(parameter)::integer <> 0)"
        case .data: "decode(\(parameter), 'hex')"
        default: "\(parameter)::\(sqlType(type))"
        }
    }

    /// The SQL that reads a column of `type` as wire text (of `table`, or of whichever table
    /// the query's `FROM` gives the column).
    public static func toText(_ column: String, _ type: SQLValueType, of table: String? = nil) -> String {
        let column = (table.map { quoted($0) + "." } ?? "") + quoted(column)
        return switch type {
        case .date: "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
        case .bool: "(CASE WHEN \(column) THEN '1' ELSE '0' END)"
        case .data: "encode(\(column), 'hex')"
        default: "\(column)::text"
        }
    }

    // MARK: - Entity tables

    /// A column's definition in `CREATE TABLE` or `ALTER TABLE … ADD COLUMN`: its name, type,
    /// nullability, and its foreign key, or its default and checks.
    public static func columnDefinition(_ column: SQLColumn) -> String {
        var definition = "\(quoted(column.name)) \(sqlType(column.valueType))"
        if !column.isOptional { definition += " NOT NULL" }
        switch column.kind {
        case .reference(let reference):
            if let action = onDelete(reference.deleteRule) {
                definition += " REFERENCES \(quoted(reference.table)) (\(quoted(reference.key))) ON DELETE \(action)"
            }
        case .position:
            break
        case .value(let type, let defaultValue, let rules, _, _):
            if let defaultValue {
                switch defaultValue {
                case .now: definition += " DEFAULT now()"
                case .uuid: definition += " DEFAULT gen_random_uuid()"
                case .value(let text): definition += " DEFAULT \(fromText(literal(text), type))"
                }
            }
            var checks: [String] = []
            let name = quoted(column.name)
            if let minimum = rules.minimum { checks.append("\(name) >= \(fromText(literal(minimum), type))") }
            if let maximum = rules.maximum { checks.append("\(name) <= \(fromText(literal(maximum), type))") }
            if let minLength = rules.minLength { checks.append("char_length(\(name)) >= \(minLength)") }
            if let maxLength = rules.maxLength { checks.append("char_length(\(name)) <= \(maxLength)") }
            if case .enumeration(let cases) = type {
                checks.append("\(name) IN (\(cases.map(literal).joined(separator: ", ")))")
            }
            if !checks.isEmpty { definition += " CHECK (\(checks.joined(separator: " AND ")))" }
        }
        return definition
    }

    /// The `ON DELETE` action that does on the server what the inverse relationship's delete
    /// rule does in a store (nil: no foreign key, the reference may dangle).
    static func onDelete(_ rule: SQLDeleteRule) -> String? {
        switch rule {
        case .cascade: "CASCADE"
        case .nullify: "SET NULL"
        case .deny: "RESTRICT"
        case .noAction: nil
        }
    }

    func createTable(_ table: SQLTable) -> String {
        var parts = ["\(quoted(table.primaryKey)) uuid PRIMARY KEY"]
        parts += table.columns.map(Self.columnDefinition)
        var uniques = table.uniques
        for column in table.columns {
            if case .value(_, _, _, _, true) = column.kind { uniques.append([column.name]) }
        }
        // One-to-ones: the key column holds each destination once.
        for column in table.columns where column.reference?.isOneToOne == true { uniques.append([column.name]) }
        for columns in uniques { parts.append("UNIQUE (\(columns.map(quoted).joined(separator: ", ")))") }
        return "CREATE TABLE IF NOT EXISTS \(quoted(table.name)) (\(parts.joined(separator: ", ")))"
    }

    func indexes(of table: SQLTable) -> [String] {
        var lists = table.indexes
        for column in table.columns {
            if case .value(_, _, _, true, false) = column.kind { lists.append([SQLIndexColumn(column.name)]) }
        }
        for column in table.columns where column.reference != nil { lists.append([SQLIndexColumn(column.name)]) }
        return lists.map { columns in
            let name = "strata_index_\(table.name)_" + columns.map { $0.name + ($0.isDescending ? "_desc" : "") }.joined(separator: "_")
            let list = columns.map { quoted($0.name) + ($0.isDescending ? " DESC" : "") }.joined(separator: ", ")
            return "CREATE INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(table.name)) (\(list))"
        }
    }

    func createJoinTable(_ join: SQLJoinTable) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(quoted(join.name)) (\
        \(quoted(join.column)) uuid NOT NULL REFERENCES \(quoted(join.table)) (\(quoted(join.tableKey))) ON DELETE CASCADE, \
        \(quoted(join.inverseColumn)) uuid NOT NULL REFERENCES \(quoted(join.destination)) (\(quoted(join.destinationKey))) ON DELETE CASCADE, \
        PRIMARY KEY (\(quoted(join.column)), \(quoted(join.inverseColumn))))
        """
    }
}

extension PostgreSQLDDL {
    /// `"name"`, with inner quotes doubled: an SQL identifier.
    public static func identifier(_ name: String) -> String { quoted(name) }

    /// `'text'`, with inner quotes doubled: an SQL string literal.
    public static func stringLiteral(_ text: String) -> String { literal(text) }
}

func quoted(_ name: String) -> String { "\"" + doubling("\"", in: name) + "\"" }

func literal(_ text: String) -> String { "'" + doubling("'", in: text) + "'" }

private func doubling(_ quote: Unicode.Scalar, in text: String) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        scalars.append(scalar)
        if scalar == quote { scalars.append(scalar) }
    }
    return String(scalars)
}
