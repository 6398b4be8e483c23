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
    public var sql: String {
        let access = self.access.triggers.flatMap(\.sql)
        return access.isEmpty ? ddl.sql : ddl.sql + access.map { $0 + ";\n" }.joined()
    }

    /// Every statement, in order: the sync's tables, then each entity's table, its indexes
    /// and its log trigger, then the join tables, then the triggers of per-user data (see
    /// `access:` in the model language). Each can be run again (`IF NOT EXISTS`, `OR REPLACE`).
    public var statements: [String] { ddl.statements + access.triggers.flatMap(\.sql) }

    /// The model's per-user data, as SQL.
    var access: ServerAccess { ServerAccess(tables: tables) }

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
    var columnTypes: [String: [String: String]] { tables.sqlSchema.columnTypes }

    /// The model's name and a fingerprint of its synced tables, columns and types (the
    /// script records both in `strata_sync_meta`).
    public var version: SyncModelVersion {
        SyncModelVersion(name: tables.schema.name, fingerprint: tables.sqlSchema.fingerprint)
    }
}

/// `"name"`, with inner quotes doubled.
func quoted(_ name: String) -> String { PostgreSQLDDL.identifier(name) }

/// `'text'`, with inner quotes doubled.
func literal(_ text: String) -> String { PostgreSQLDDL.stringLiteral(text) }
