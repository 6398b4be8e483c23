extension SQLSchema {
    /// Every table's columns with the PostgreSQL type of each, the primary key's (`uuid`)
    /// included, and each join table's two columns: what a device's hello is compared with.
    public var columnTypes: [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for table in tables {
            var columns = [table.primaryKey: "uuid"]
            for column in table.columns { columns[column.name] = PostgreSQLDDL.sqlType(column.valueType) }
            result[table.name] = columns
        }
        for join in joinTables { result[join.name] = [join.column: "uuid", join.inverseColumn: "uuid"] }
        return result
    }

    /// A hash (FNV-1a, 64 bits, in hexadecimal) of every table, column and type of
    /// ``columnTypes``: two models whose synced tables are alike have the same fingerprint.
    public var fingerprint: String {
        let lines = columnTypes.flatMap { table, columns in columns.map { "\(table).\($0.key):\($0.value)" } }.sorted()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in lines.joined(separator: "\n").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

extension PostgreSQLDDL {
    /// The statement that records the model's name and ``SQLSchema/fingerprint`` in
    /// `strata_sync_meta` (key `model`, a JSON object with `name` and `fingerprint`), so
    /// that a device whose model does not fit names the server's model in its error. Nil
    /// when the schema has no ``SQLSchema/modelName``.
    public var modelStatement: String? {
        guard let name = schema.modelName else { return nil }
        // A model's name is a Swift identifier and the fingerprint hexadecimal: neither
        // holds a quote, a backslash or a control character to escape in JSON.
        let value = #"{"name":"\#(name)","fingerprint":"\#(schema.fingerprint)"}"#
        return "INSERT INTO strata_sync_meta (key, value) VALUES ('model', \(literal(value))) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    }
}
