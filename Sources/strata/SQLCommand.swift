import ArgumentParser
import Foundation
import StrataSQL
import StrataSchema

/// `strata sql --dialect postgresql Models`: the DDL of a sync server's tables for the model,
/// the same statements as StrataSync's `PostgresSchema(schema:).sql` but the triggers of
/// per-user data (`access:`), which it names on standard error when the model declares any.
struct SQLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Print the SQL that makes a sync server's tables for the model.",
        discussion: """
            The statements are those StrataSync's PostgresSchema(schema:).sql gives for the \
            generated schema descriptor: the sync's own tables, one table per entity (with its \
            keys, checks, indexes and log trigger), one per many-to-many join table, and the \
            triggers that check the count rules (minCount, maxCount) at commit. The triggers \
            of per-user data (access:) are not written yet: a note on standard error names \
            the entities that declare it.
            """
    )

    @Option(name: .long, help: "The SQL dialect: \(SQLDialect.allCases.map(\.rawValue).joined(separator: ", ")).")
    var dialect: String

    @OptionGroup var model: ModelOptions

    func validate() throws {
        guard SQLDialect(rawValue: dialect) != nil else {
            let supported = SQLDialect.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw ValidationError("Unknown SQL dialect '\(dialect)': the supported dialect is \(supported).")
        }
    }

    func run() throws {
        let (schema, _) = try model.load()
        switch SQLDialect(rawValue: dialect) {
        case .postgresql?:
            print(PostgreSQLDDL(schema: SQLSchema(schema)).sql, terminator: "")
            let declared = schema.entities.filter { $0.access != nil }.map(\.name)
            if !declared.isEmpty {
                FileHandle.standardError.write(Data("""
                    note: the triggers of the per-user data (access: of \(declared.joined(separator: ", "))) are not in \
                    this script: apply StrataSync's PostgresSchema(schema:).sql of the model, or let the relay or a \
                    device make them (createAndExtend)

                    """.utf8))
            }
        case nil: throw ExitCode.validationFailure
        }
    }
}

extension SQLSchema {
    /// The tables of every entity of `schema` (abstract ones aside), as the generated schema
    /// descriptor lays them out: transient attributes have no column, a to-one stores its key
    /// (and its position when its inverse is ordered) where ``StorageLayout`` puts it.
    init(_ schema: Schema) {
        let layout = StorageLayout(schema: schema)
        let entities = schema.entities.filter { !$0.isAbstract }
        func key(of name: String) -> String { schema.entity(named: name)?.primaryKey ?? "id" }
        var tables: [SQLTable] = []
        var joins: [SQLJoinTable] = []
        var seenJoins: Set<String> = []
        var countRules: [SQLCountRule] = []
        for entity in entities {
            var columns = entity.attributes.filter { !$0.isTransient }.map { SQLColumn($0, in: schema) }
            for relationship in entity.relationships {
                switch layout.storage(of: relationship, in: entity) {
                case .foreignKey(let column):
                    let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse)
                    let rule = inverse?.deleteRule ?? .nullify
                    columns.append(SQLColumn(
                        name: column,
                        kind: .reference(SQLReference(
                            table: relationship.destination, key: key(of: relationship.destination),
                            deleteRule: SQLDeleteRule(rawValue: rule.rawValue) ?? .nullify,
                            isOneToOne: !relationship.isToMany && inverse.map { !$0.isToMany } == true)),
                        isOptional: !relationship.isRequired))
                    if let position = layout.positionColumn(of: relationship, in: entity) {
                        columns.append(SQLColumn(name: position, kind: .position, isOptional: true))
                    }
                case .joinTable(let name, let column, let inverseColumn):
                    if seenJoins.insert(name).inserted {
                        joins.append(SQLJoinTable(
                            name: name, table: entity.name, tableKey: entity.primaryKey, column: column,
                            destination: relationship.destination, destinationKey: key(of: relationship.destination),
                            inverseColumn: inverseColumn))
                    }
                case .inverseForeignKey:
                    break
                }
                // The count rules, as the store checks them: the links are the rows of the
                // join table (its column for this entity) or of the destination (its key).
                if relationship.isToMany, relationship.minCount != nil || relationship.maxCount != nil {
                    var links: (table: String, column: String)?
                    switch layout.storage(of: relationship, in: entity) {
                    case .joinTable(let name, let column, _): links = (name, column)
                    case .inverseForeignKey:
                        if let destination = schema.entity(named: relationship.destination),
                           let inverse = destination.relationship(named: relationship.inverse),
                           let column = layout.foreignKeyColumn(of: inverse, in: destination)
                        {
                            links = (destination.name, column)
                        }
                    case .foreignKey: break
                    }
                    if let links {
                        countRules.append(SQLCountRule(
                            table: entity.name, key: entity.primaryKey, relationship: relationship.name, linksTable: links.table,
                            linksColumn: links.column, minCount: relationship.minCount, maxCount: relationship.maxCount))
                    }
                }
            }
            // Unique constraints and indexes name to-ones, stored as their key columns.
            func column(_ name: String) -> String {
                entity.relationship(named: name).flatMap { layout.foreignKeyColumn(of: $0, in: entity) } ?? name
            }
            tables.append(SQLTable(
                name: entity.name, primaryKey: entity.primaryKey, columns: columns,
                uniques: entity.uniques.map { $0.map(column) },
                indexes: entity.indexes.map { index in
                    zip(index.columns, index.descending).map { SQLIndexColumn(column($0), isDescending: $1) }
                }))
        }
        self.init(tables: tables, joinTables: joins, countRules: countRules, modelName: schema.name)
    }
}

extension SQLColumn {
    /// The column of `attribute`, with its default and rules as wire text: the text StrataSync
    /// sends for the value the generated descriptor holds.
    init(_ attribute: Attribute, in schema: Schema) {
        let type: SQLValueType = switch attribute.type {
        case .string: .string
        case .int: .int
        case .int32: .int32
        case .int16: .int16
        case .double: .double
        case .float: .float
        case .bool: .bool
        case .date: .date
        case .uuid: .uuid
        case .data: .data
        case .decimal: .decimal
        case .url: .url
        case .enumeration(let name): .enumeration(cases: schema.enumType(named: name)?.cases ?? [])
        case .codable: .json
        }
        let defaultValue: SQLDefault? = attribute.defaultValue.map { value in
            switch value {
            case .now: .now
            case .uuid: .uuid
            default: .value(WireText.of(value, as: attribute.type))
            }
        }
        let rules = SQLRules(
            minimum: attribute.rules.min.map { WireText.of($0, as: attribute.type) },
            maximum: attribute.rules.max.map { WireText.of($0, as: attribute.type) },
            minLength: attribute.rules.minLength, maxLength: attribute.rules.maxLength)
        self.init(
            name: attribute.name,
            kind: .value(type, default: defaultValue, rules: rules, isIndexed: attribute.isIndexed, isUnique: attribute.isUnique),
            isOptional: attribute.isOptional)
    }
}

/// The text a sync sends for a value written in the model: the canonical form of the value
/// the generated descriptor holds (an integer, a real or a text, as the store keeps it).
enum WireText {
    static func of(_ value: DefaultValue, as type: AttributeType) -> String {
        switch value {
        case .bool(let flag): return flag ? "1" : "0"
        case .int(let number):
            switch type {
            case .double, .float: return real(Double(number))
            case .decimal: return decimal(Decimal(number))
            default: return String(number)
            }
        case .double(let number):
            switch type {
            case .decimal: return decimal(Decimal(string: "\(number)") ?? Decimal(number))
            case .int, .int32, .int16, .bool: return Int64(exactly: number).map { String($0) } ?? real(number)
            default: return real(number)
            }
        case .string(let text):
            switch type {
            case .uuid: return UUID(uuidString: text)?.uuidString.lowercased() ?? text.lowercased()
            case .url: return URL(string: text)?.absoluteString ?? text
            case .decimal: return Decimal(string: text).map(decimal) ?? text
            case .data: return Data(text.utf8).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            default: return text
            }
        case .enumCase(let name): return name
        case .date(let milliseconds): return DefaultValue.dateText(milliseconds: milliseconds, storage: true)
        case .now, .uuid: return ""
        }
    }

    static func of(_ bound: RuleBound, as type: AttributeType) -> String {
        switch bound {
        case .int(let number):
            switch type {
            case .double, .float: return real(Double(number))
            default: return String(number)
            }
        case .double(let number):
            switch type {
            case .int, .int32, .int16, .bool: return Int64(exactly: number).map { String($0) } ?? real(number)
            default: return real(number)
            }
        case .date(let text): return text
        }
    }

    /// Swift's shortest round-trip form; `Infinity`, `-Infinity`, `NaN`.
    static func real(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return "\(number)"
    }

    /// A decimal as the store keeps it (GRDB's text of a `Decimal`).
    static func decimal(_ number: Decimal) -> String {
        NSDecimalNumber(decimal: number).description(withLocale: Locale(identifier: "en_US_POSIX"))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
