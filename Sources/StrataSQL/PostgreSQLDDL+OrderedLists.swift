extension SQLTable {
    /// The ordered to-ones of the table: each to-one's key column and the position column
    /// that follows it (a `.position` column comes right after the key of its to-one).
    public var orderedPositions: [(reference: String, position: String)] {
        var result: [(reference: String, position: String)] = []
        for (column, next) in zip(columns, columns.dropFirst()) where column.reference != nil {
            if case .position = next.kind { result.append((column.name, next.name)) }
        }
        return result
    }
}

extension PostgreSQLDDL {
    /// The distance between consecutive positions that the server hands out: the store's
    /// (`OrderedPositions.gap` in Strata, checked equal by the tests).
    public static let positionGap: Int64 = 1 << 16

    /// The name of the trigger that keeps an ordered to-one's positions as the store keeps
    /// them (`BEFORE INSERT OR UPDATE`), for the to-one whose key is `reference`.
    public static func positionTriggerName(_ reference: String) -> String { "strata_sync_position_\(reference)" }

    /// The name of the constraint trigger, deferred to the commit, that parts siblings a
    /// transaction left at one position, for the to-one whose key is `reference`.
    public static func tieTriggerName(_ reference: String) -> String { "strata_sync_ties_\(reference)" }

    /// Every table with an ordered to-one, and the statements that make its two triggers per
    /// such to-one (each made again by the script: `CREATE OR REPLACE`).
    public var positionTriggers: [(table: String, sql: [String])] {
        schema.tables.compactMap { table in
            let ordered = table.orderedPositions
            guard !ordered.isEmpty else { return nil }
            var sql: [String] = []
            for (reference, position) in ordered {
                let arguments = [reference, position, table.primaryKey].map(literal).joined(separator: ", ")
                sql.append(
                    """
                    CREATE OR REPLACE TRIGGER \(quoted(Self.positionTriggerName(reference))) BEFORE INSERT OR UPDATE ON \(quoted(table.name)) \
                    FOR EACH ROW EXECUTE FUNCTION strata_sync_position(\(arguments))
                    """)
                sql.append("DROP TRIGGER IF EXISTS \(quoted(Self.tieTriggerName(reference))) ON \(quoted(table.name))")
                sql.append(
                    """
                    CREATE CONSTRAINT TRIGGER \(quoted(Self.tieTriggerName(reference))) \
                    AFTER INSERT OR UPDATE OF \(quoted(reference)), \(quoted(position)) ON \(quoted(table.name)) \
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION strata_sync_ties(\(arguments))
                    """)
            }
            return (table.name, sql)
        }
    }

    /// The server keeps an ordered to-one's positions as every device's store keeps them, so
    /// that what a device reads from the server is what its own triggers would have written
    /// (see `OrderedPositions` in Strata): a row given a parent and no position, or whose
    /// parent changes while its position does not, goes last among its new siblings (their
    /// largest position plus ``positionGap``); a row without a parent has no position. Whoever
    /// writes (another service's SQL included) gets the same. When the position a device
    /// pushed is changed, the object is logged again without an origin, so that the device
    /// that pushed it pulls the server's position too.
    ///
    /// Arguments: the to-one's key column, its position column, the table's primary key.
    public static let positionFunction = """
        CREATE OR REPLACE FUNCTION strata_sync_position() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          n jsonb := to_jsonb(NEW);
          parent text := n ->> TG_ARGV[0];
          given bigint := (n ->> TG_ARGV[1])::bigint;
          place bigint := given;
        BEGIN
          IF TG_OP = 'UPDATE' AND parent IS DISTINCT FROM (to_jsonb(OLD) ->> TG_ARGV[0])
             AND given IS NOT DISTINCT FROM (to_jsonb(OLD) ->> TG_ARGV[1])::bigint THEN
            place := NULL;
          END IF;
          IF parent IS NULL THEN
            place := NULL;
          ELSIF place IS NULL THEN
            EXECUTE format('SELECT COALESCE(max(%I), 0) + \(positionGap) FROM %I.%I WHERE %I = $1::uuid AND %I <> $2::uuid',
              TG_ARGV[1], TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[2]) INTO place USING parent, n ->> TG_ARGV[2];
          END IF;
          IF place IS NOT DISTINCT FROM given THEN RETURN NEW; END IF;
          IF NULLIF(current_setting('strata.device', true), '') IS NOT NULL THEN
            PERFORM pg_advisory_xact_lock(\(logLock));
            INSERT INTO strata_sync_log (tbl, id, origin) VALUES (TG_TABLE_NAME, (n ->> TG_ARGV[2])::uuid, NULL);
          END IF;
          RETURN jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[1], place));
        END $$
        """

    /// At the commit of a transaction that wrote a row, when the row shares its position
    /// with a sibling, the row moves just after that position: halfway to the next sibling,
    /// or ``positionGap`` after it when it is the last; when no integer is left between them,
    /// the siblings after it move up by ``positionGap`` first. Two devices that appended to a
    /// list offline both chose the same position: the later to reach the server goes second,
    /// on every device. What moves is logged without an origin (every device pulls it, the
    /// one that pushed it too). Ties between rows written before this trigger existed stay
    /// until one of them is written again.
    ///
    /// Arguments: the to-one's key column, its position column, the table's primary key.
    public static let tieFunction = """
        CREATE OR REPLACE FUNCTION strata_sync_ties() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          id text := to_jsonb(NEW) ->> TG_ARGV[2];
          parent text; place bigint; following bigint; tied boolean; device text;
        BEGIN
          EXECUTE format('SELECT %I::text, %I FROM %I.%I WHERE %I = $1::uuid',
            TG_ARGV[0], TG_ARGV[1], TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[2]) INTO parent, place USING id;
          IF parent IS NULL OR place IS NULL THEN RETURN NULL; END IF;
          EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I WHERE %I = $1::uuid AND %I = $2 AND %I <> $3::uuid)',
            TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[1], TG_ARGV[2]) INTO tied USING parent, place, id;
          IF NOT tied THEN RETURN NULL; END IF;
          EXECUTE format('SELECT min(%I) FROM %I.%I WHERE %I = $1::uuid AND %I > $2',
            TG_ARGV[1], TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[1]) INTO following USING parent, place;
          device := current_setting('strata.device', true);
          PERFORM set_config('strata.device', '', true);
          IF following IS NULL OR following - place >= 2 THEN
            EXECUTE format('UPDATE %I.%I SET %I = $1 WHERE %I = $2::uuid', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[1], TG_ARGV[2])
              USING CASE WHEN following IS NULL THEN place + \(positionGap) ELSE place + (following - place) / 2 END, id;
          ELSE
            EXECUTE format('UPDATE %I.%I SET %I = %I + \(positionGap) WHERE %I = $1::uuid AND %I > $2',
              TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[1], TG_ARGV[1], TG_ARGV[0], TG_ARGV[1]) USING parent, place;
            EXECUTE format('UPDATE %I.%I SET %I = $1 WHERE %I = $2::uuid', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV[1], TG_ARGV[2])
              USING place + \(positionGap / 2), id;
          END IF;
          PERFORM set_config('strata.device', COALESCE(device, ''), true);
          RETURN NULL;
        END $$
        """
}
