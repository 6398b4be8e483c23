import Foundation
import GRDB
import Strata
import StrataSQL

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

    /// The statements, made by StrataSQL from the tables' neutral description (the same
    /// that `strata sql --dialect postgresql` makes from the model files).
    var ddl: PostgreSQLDDL { PostgreSQLDDL(schema: tables.sqlSchema) }

    /// Every statement, in order, as one script.
    public var sql: String { ddl.sql }

    /// Every statement, in order: the sync's tables, then each entity's table, its indexes
    /// and its log trigger, then the join tables. Each can be run again (`IF NOT EXISTS`).
    public var statements: [String] { ddl.statements }

    /// The advisory lock that orders the change log (StrataSQL's `PostgreSQLDDL.logLock`).
    static var logLock: Int { PostgreSQLDDL.logLock }

    /// The name of the tables' count triggers (StrataSQL's `PostgreSQLDDL.countTriggerName`).
    static var countTriggerName: String { PostgreSQLDDL.countTriggerName }

    /// Each table with a count trigger, and the trigger's arguments (its rules).
    var countTriggerArguments: [String: [String]] {
        var result: [String: [String]] = [:]
        for rule in tables.countRules {
            for table in [rule.table, rule.linksTable] {
                let arguments = ddl.countTriggerArguments(of: table)
                if !arguments.isEmpty { result[table] = arguments }
            }
        }
        return result
    }

    /// PostgreSQL's type for a column of `type`.
    static func sqlType(_ type: ValueType) -> String { PostgreSQLDDL.sqlType(type.sqlValueType) }

    /// The SQL that turns wire text (`$n`) into a value of `type`.
    static func fromText(_ parameter: String, _ type: ValueType) -> String {
        PostgreSQLDDL.fromText(parameter, type.sqlValueType)
    }

    /// The SQL that reads a column of `type` as wire text.
    static func toText(_ column: String, _ type: ValueType, of table: String? = nil) -> String {
        PostgreSQLDDL.toText(column, type.sqlValueType, of: table)
    }

    /// The definition of `column` of `entity`, as `CREATE TABLE` has it.
    func columnDefinition(_ column: SyncedTables.Column, of entity: SyncedTables.Entity) -> String {
        PostgreSQLDDL.columnDefinition(tables.sqlColumn(column, of: entity))
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
func quoted(_ name: String) -> String { PostgreSQLDDL.identifier(name) }

/// `'text'`, with inner quotes doubled.
func literal(_ text: String) -> String { PostgreSQLDDL.stringLiteral(text) }
