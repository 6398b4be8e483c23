/// Names that become Swift identifiers must be identifiers (keywords are fine: the generator
/// escapes them with backticks).
struct IdentifierRule: SchemaRule {
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name != "_" else { return false }
        guard first == "_" || first.properties.isXIDStart else { return false }
        return name.unicodeScalars.dropFirst().allSatisfy { $0 == "_" || $0.properties.isXIDContinue }
    }

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        func require(_ name: String, _ kind: String, at location: SourceLocation) {
            if !isIdentifier(name) {
                diagnostics.error(
                    "\(kind) name '\(name)' is not a valid identifier; use letters, digits and '_', not starting with a digit",
                    at: location)
            }
        }
        for enumType in context.schema.enums {
            require(enumType.name, "enum", at: enumType.location)
            for (index, name) in enumType.cases.enumerated() {
                require(
                    name, "enum case", at: context.location(.enumCase(index, of: enumType.name), or: enumType.location))
            }
        }
        for entity in context.schema.entities {
            require(entity.name, "entity", at: entity.location)
            if entity.primaryKey != "id" {
                require(entity.primaryKey, "primary key", at: context.location(.entity(entity.name, .primaryKey), or: entity.location))
            }
            for attribute in entity.attributes where attribute.inheritedFrom == nil {
                require(attribute.name, "attribute", at: attribute.location)
            }
            for relationship in entity.relationships {
                require(relationship.name, "relationship", at: relationship.location)
            }
            for fetch in entity.fetches { require(fetch.name, "fetch", at: fetch.location) }
        }
    }
}

/// Entities and enums may be named like Swift or standard library types (the generator
/// qualifies those), but not `Strata` (the runtime module), the model's own namespace, or
/// the names generated code declares or qualifies with; the model's namespace may not take
/// those names either. A name (the namespace's included) that hides a type `import Strata`
/// brings into the app's code is allowed, with a warning.
struct ReservedTypeNameRule: SchemaRule {
    /// Module names the generated code qualifies with, the generic parameters of `ToOne`
    /// extensions, and the nested names of every entity (`Note.ID`, `Note.Fetches`,
    /// `Note.Associations`).
    static let generatedTypeNames: Set<String> = [
        "GRDB", "Foundation", "Swift", "Root", "Destination", "ID", "Fetches", "Associations",
    ]

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let types = context.schema.entities.map { ("entity", $0.name, $0.location) }
            + context.schema.enums.map { ("enum", $0.name, $0.location) }
        for (kind, name, location) in types {
            if name == "Strata" {
                diagnostics.error("\(kind) name 'Strata' clashes with the Strata runtime module; rename it", at: location)
            } else if generatedTypeNames.contains(name) {
                diagnostics.error(
                    "\(kind) name '\(name)' clashes with a name the generated code uses; rename it", at: location)
            } else if name == context.schema.name {
                diagnostics.error("\(kind) name '\(name)' clashes with the model's namespace; rename it", at: location)
            }
        }
        // `Codable` is spelled like a type too (`Codable<T>`).
        for enumType in context.schema.enums where AttributeType.builtins[enumType.name] != nil || enumType.name == "Codable" {
            diagnostics.error(
                "enum name '\(enumType.name)' is a built-in attribute type; rename the enum", at: enumType.location)
        }
        // Allowed, but in the app's own files the generated type hides the runtime's or
        // Foundation's: say so, and how to write the other one.
        for (kind, name, location) in types {
            guard let module = shadowedTypes[name], kind == "entity" || AttributeType.builtins[name] == nil else { continue }
            diagnostics.warning(
                "\(kind) '\(name)' hides \(module).\(name) in the code of the target that generates it: write "
                    + "\(module).\(name) there for the \(module) type (generated code always does), or rename the \(kind)",
                at: location)
        }
        // The model's namespace is a generated type too. Its name comes from `--model-name`,
        // not from a file: its diagnostics have no location.
        let model = context.schema.name
        if model == "Strata" || generatedTypeNames.contains(model) {
            diagnostics.error(
                "model name '\(model)' clashes with a name the generated code uses; choose another --model-name", at: nil)
        } else if let module = shadowedTypes[model] {
            diagnostics.warning(
                "model name '\(model)' hides \(module).\(model) in the code of the target that generates it: write "
                    + "\(module).\(model) there for the \(module) type (generated code always does), or choose another --model-name",
                at: nil)
        }
    }

    /// Names that `import Strata` brings into the app's code unqualified, and their module
    /// (see `Docs/Decisions.md`).
    static let shadowedTypes: [String: String] = {
        var names: [String: String] = [:]
        for name in grdbTypes { names[name] = "GRDB" }
        for name in strataTypes { names[name] = "Strata" }
        for name in foundationTypes { names[name] = "Foundation" }
        return names
    }()

    /// Every public top-level type of GRDB 7.10 but the underscored ones: Strata re-exports
    /// GRDB whole (`@_exported import GRDB`), so app code meets all of them. (A test checks
    /// this list against GRDB's sources when they are at hand.)
    static let grdbTypes: [String] = [
        "AdaptedFetchRequest", "AggregatingRequest", "AllColumns", "AllColumnsExcluding", "AnyCursor",
        "AnyDatabaseCancellable", "AnyDatabaseReader", "AnyDatabaseRegionConvertible", "AnyDatabaseWriter",
        "AnyFetchRequest", "AnySQLJSONExpressible", "Association", "AssociationAggregate", "AssociationToMany",
        "AssociationToOne", "AsyncValueObservation", "AsyncValueObservationScheduler", "BelongsToAssociation",
        "Column", "ColumnAssignment", "ColumnDefinition", "ColumnExpression", "ColumnInfo", "ColumnMapping",
        "CommonTableExpression", "Configuration", "Cursor", "CustomTransactionClock", "Database", "DatabaseAggregate",
        "DatabaseBackupProgress", "DatabaseCancellable", "DatabaseCollation", "DatabaseColumnDecodingStrategy",
        "DatabaseColumnEncodingStrategy", "DatabaseCursor", "DatabaseDataDecodingStrategy",
        "DatabaseDataEncodingStrategy", "DatabaseDateComponents", "DatabaseDateDecodingStrategy",
        "DatabaseDateEncodingStrategy", "DatabaseError", "DatabaseEvent", "DatabaseEventKind", "DatabaseFunction",
        "DatabaseFuture", "DatabaseMigrator", "DatabaseObjectID", "DatabasePool", "DatabasePreUpdateEvent",
        "DatabasePublishers", "DatabaseQueue", "DatabaseReader", "DatabaseRegion", "DatabaseRegionConvertible",
        "DatabaseRegionObservation", "DatabaseSchemaID", "DatabaseSchemaSource", "DatabaseSnapshot",
        "DatabaseSnapshotPool", "DatabaseSnapshotReader", "DatabaseUUIDEncodingStrategy", "DatabaseValue",
        "DatabaseValueConvertible", "DatabaseValueCursor", "DatabaseWriter", "DebugDumpFormat",
        "DefaultTransactionClock", "DelayedMainActorValueObservationScheduler", "DerivableRequest", "DropFirstCursor",
        "DropWhileCursor", "DumpFormat", "DumpStream", "DumpTableHeaderOptions", "EmptyRowAdapter", "EncodableRecord",
        "EnumeratedCursor", "FTS3", "FTS3Pattern", "FTS3TableDefinition", "FTS3TokenizerDescriptor", "FTS4",
        "FTS4ColumnDefinition", "FTS4TableDefinition", "FTS5", "FTS5ColumnDefinition", "FTS5CustomTokenizer",
        "FTS5Pattern", "FTS5TableDefinition", "FTS5TokenCallback", "FTS5TokenFlags", "FTS5Tokenization",
        "FTS5Tokenizer", "FTS5TokenizerDescriptor", "FTS5WrapperTokenCallback", "FTS5WrapperTokenizer",
        "FastDatabaseValueCursor", "FetchRequest", "FetchableRecord", "FetchableRecordDecoder", "FilterCursor",
        "FilteredRequest", "FlattenCursor", "ForeignKey", "ForeignKeyDefinition", "ForeignKeyInfo",
        "ForeignKeyViolation", "GRDBSendableMetatype", "HasManyAssociation", "HasManyThroughAssociation",
        "HasOneAssociation", "HasOneThroughAssociation", "ImmediateValueObservationScheduler", "IndexInfo",
        "IndexOptions", "Inflections", "InsertionSuccess", "JSONColumn", "JSONDumpFormat", "JoinAssociation",
        "JoinableRequest", "LineDumpFormat", "ListDumpFormat", "MapCursor", "MutablePersistableRecord",
        "OrderedRequest", "PersistableRecord", "PersistenceConflictPolicy", "PersistenceContainer", "PersistenceError",
        "PersistenceSuccess", "PrefixCursor", "PrefixWhileCursor", "PreparedRequest", "PrimaryKeyInfo",
        "QueryInterfaceRequest", "QuoteDumpFormat", "RangeRowAdapter", "Record", "RecordCursor", "RecordError",
        "RenameColumnAdapter", "ResultCode", "Row", "RowAdapter", "RowCursor", "RowDecodingError", "SQL",
        "SQLDateModifier", "SQLExpressible", "SQLExpression", "SQLInterpolation", "SQLJSONExpressible", "SQLOrdering",
        "SQLOrderingTerm", "SQLRequest", "SQLSelectable", "SQLSelection", "SQLSpecificExpressible",
        "SQLStatementCursor", "SQLSubquery", "SQLSubqueryable", "SQLiteConnection", "SQLiteStatement", "ScopeAdapter",
        "SelectionRequest", "SharedValueObservation", "SharedValueObservationExtent", "Statement",
        "StatementArguments", "StatementBinding", "StatementColumnConvertible", "SuffixRowAdapter", "Table",
        "TableAlias", "TableAliasBase", "TableAlteration", "TableDefinition", "TableOptions", "TableRecord",
        "TableRequest", "TaskValueObservationScheduler", "TransactionClock", "TransactionObserver", "TypedRequest",
        "UpsertUpdateStrategy", "ValueObservation", "ValueObservationMainActorScheduler", "ValueObservationScheduler",
        "ValueReducer", "ValueReducers", "ViewOptions", "VirtualTableConfiguration", "VirtualTableModule",
        "VirtualTableOptions",
    ]

    /// Every public top-level type of the Strata runtime. (A test checks this list against
    /// `Sources/Strata`.)
    static let strataTypes: [String] = [
        "AccessDescriptor", "AttributeDescriptor", "BatchOperation", "BatchValidationError", "BatchValidator", "ChangeBatch",
        "CommitObservation", "CommittedChanges", "ComparisonOperator", "Coordinatable", "CountExpression",
        "DatabaseValueOrdering", "DefaultValueDescriptor", "DeleteDeniedError", "DeleteRule", "DestructiveChange",
        "EntityColumns", "EntityDescriptor", "EntityID", "EntityPredicate", "HistoryChanges", "HistoryPrunedError", "HistoryToken",
        "HistoryTokenAheadError", "HistoryTransaction", "IdentityChangeError", "IndexColumn", "IndexDescriptor",
        "IntValue", "InvalidValueError", "ItemPath", "LiveResults", "LiveSection", "MigrationError", "Move",
        "NoSection", "ObjectGraph", "OrderError", "OrderWrite", "PredicateEvaluator", "PredicateNode",
        "PredicateSubject", "Quantifier", "QueryError", "RelationshipDescriptor", "RelationshipStorage",
        "ResultsChangeType", "ResultsController", "ResultsControllerDelegate", "ResultsEditError", "ResultsError",
        "ResultsItem", "ResultsLoading", "ResultsOptions", "ResultsRequest", "ResultsRow", "ResultsRowID",
        "ResultsRows", "ResultsSection", "ResultsSnapshot", "ResultsUpdate", "RuleViolationError", "SQLQueryBuilder",
        "SchemaDescriptor", "SectionID", "SectionValue", "Sectioning", "SortKey", "SortNode", "StatementTrace",
        "StorageError", "Store", "StoreError", "StoreOpenError", "StoredDate", "StoredJSON", "StrataEntity",
        "StrataError", "StrataIntegerStored", "StringMatching", "StringOperator", "StringOptions", "StringValue",
        "ToMany", "ToOne", "TypedColumn", "UniqueConstraintError", "ValueDecodingError", "ValueNode", "ValueRules",
        "ValueType",
    ]

    /// The Foundation types that models use.
    static let foundationTypes: [String] = ["Date", "Data", "URL", "UUID", "Decimal", "Predicate"]
}

/// An enum and an entity can't share a name.
struct TypeNameCollisionRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for enumType in context.schema.enums {
            guard let entity = context.entity(enumType.name) else { continue }
            let (later, earlier) = entity.location < enumType.location
                ? (enumType.location, entity.location) : (entity.location, enumType.location)
            diagnostics.error("'\(enumType.name)' is declared both as an enum and as an entity", at: later)
            diagnostics.append(Diagnostic(.note, "'\(enumType.name)' is first declared here", at: earlier))
        }
    }
}

struct DuplicateEnumCaseRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for enumType in context.schema.enums {
            var seen: [String: Int] = [:]
            for (index, name) in enumType.cases.enumerated() {
                if let first = seen[name] {
                    diagnostics.error(
                        "duplicate case '\(name)' in enum '\(enumType.name)'",
                        at: context.location(.enumCase(index, of: enumType.name), or: enumType.location))
                    diagnostics.append(Diagnostic(
                        .note, "'\(name)' is first listed here",
                        at: context.location(.enumCase(first, of: enumType.name), or: enumType.location)))
                } else {
                    seen[name] = index
                }
            }
        }
    }
}

/// Attribute and relationship names share one namespace with the members Strata generates.
struct MemberNameRule: SchemaRule {
    /// Members of every entity, and of the `ToOne` paths that carry a destination's columns;
    /// the names Swift gives every type (`self`, `Type`); the members the compiler synthesizes
    /// (`CodingKeys`, `hashValue`, whose implementation is deprecated); and GRDB's associated
    /// types of record types (`Columns`, `DatabaseComponents`).
    static let generatedMembers: Set<String> = [
        "id", "entityDescriptor", "schemaDescriptor", "entityName", "databaseTableName", "Fetches", "ID", "init", "encode", "didInsert",
        "path", "isNil", "_column", "_toOne", "self", "Self", "Type", "Protocol", "CodingKeys", "hashValue",
        "Columns", "DatabaseComponents", "Associations",
    ]

    /// The members generated for `entity`: the common ones, its primary key, and
    /// `objectID`, the name under which `StrataEntity` reads every key.
    /// An abstract entity has no key: its own members are those of every entity.
    static func generatedMembers(of entity: Entity) -> Set<String> {
        generatedMembers.subtracting(["id"]).union(entity.isAbstract ? ["objectID"] : [entity.primaryKey, "objectID"])
    }

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            let generatedMembers = generatedMembers(of: entity)
            let keyLocation = context.location(.entity(entity.name, .primaryKey), or: entity.location)
            if entity.primaryKey != "id", entity.primaryKey != "objectID", Self.generatedMembers.contains(entity.primaryKey) {
                diagnostics.error(
                    "primary key name '\(entity.primaryKey)' clashes with the generated member '\(entity.name).\(entity.primaryKey)'; choose another",
                    at: keyLocation)
            }
            // name → (kind, location) of the first member with it.
            var members: [String: (String, SourceLocation)] = [:]
            // Inherited attributes are checked on their abstract entity, where they are declared.
            var declared: [(String, String, SourceLocation, Bool)] =
                entity.attributes.map { ("attribute", $0.name, $0.location, $0.inheritedFrom != nil) }
                + entity.relationships.map { ("relationship", $0.name, $0.location, false) }
            declared.sort { $0.2 < $1.2 }
            for (kind, name, location, inherited) in declared {
                if name == entity.primaryKey, !entity.isAbstract, inherited {
                    let parent = entity.attributes.first { $0.name == name }?.inheritedFrom ?? entity.parent ?? "?"
                    diagnostics.error(
                        "the attribute '\(name)' that '\(entity.name)' inherits from '\(parent)' clashes with its primary key '\(entity.name).\(name)'; name the key with 'primaryKey:' on '\(entity.name)' or at the top of its file",
                        at: entity.location)
                } else if name == entity.primaryKey, !entity.isAbstract, !inherited {
                    let hint = name == "id"
                        ? "; keep the name by choosing the key's name with 'primaryKey:' on '\(entity.name)' or at the top of its file (e.g. primaryKey: objectID)"
                        : " ('primaryKey: \(name)'); choose another key name or rename the \(kind)"
                    diagnostics.error(
                        "\(kind) name '\(name)' clashes with the primary key '\(entity.name).\(name)'\(hint)", at: location)
                } else if generatedMembers.contains(name), !inherited {
                    diagnostics.error(
                        "\(kind) name '\(name)' clashes with the generated member '\(entity.name).\(name)'; rename it",
                        at: location)
                }
                if let (firstKind, firstLocation) = members[name] {
                    diagnostics.error(
                        "\(kind) '\(name)' of '\(entity.name)' has the same name as \(article(firstKind)) \(firstKind)",
                        at: location)
                    diagnostics.append(Diagnostic(.note, "'\(name)' is first declared here", at: firstLocation))
                } else {
                    members[name] = (kind, location)
                }
            }
            var keys: [String: String] = [:]  // key property → its to-one
            for relationship in entity.relationships where !relationship.isToMany {
                let storage = StorageLayout.keyColumn(of: relationship)
                let hint = relationship.foreignKey == nil
                    ? "; keep both names by choosing the key's name with 'foreignKey:' on '\(relationship.name)' (e.g. foreignKey: \(relationship.name)Key)"
                    : "; choose another 'foreignKey'"
                if let (kind, _) = members[storage] {
                    diagnostics.error(
                        "the to-one relationship '\(relationship.name)' stores its id in '\(storage)', which clashes with the \(kind) '\(storage)' of '\(entity.name)'\(hint)",
                        at: relationship.location)
                } else if generatedMembers.contains(storage) {
                    diagnostics.error(
                        "the to-one relationship '\(relationship.name)' stores its id in '\(storage)', which clashes with a generated member\(hint)",
                        at: relationship.location)
                } else if let other = keys[storage] {
                    diagnostics.error(
                        "the to-one relationships '\(other)' and '\(relationship.name)' of '\(entity.name)' both store their id in '\(storage)'; choose another 'foreignKey'",
                        at: relationship.location)
                } else {
                    keys[storage] = relationship.name
                }
            }
        }
    }

    static func article(_ word: String) -> String { word.lowercased().first.map { "aeiou".contains($0) } == true ? "an" : "a" }
}

/// Enum cases share their enum's namespace with the names Swift gives every type (`P.Type`
/// is the metatype, `.init` the initializer) and the members of its conformances
/// (`RawValue` breaks `RawRepresentable`, `allCases` becomes ambiguous).
struct EnumCaseNameRule: SchemaRule {
    /// Case names a generated enum cannot declare.
    static let reservedCases: Set<String> = [
        "self", "Self", "Type", "Protocol", "init", "RawValue", "allCases",
    ]

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for enumType in context.schema.enums {
            for (index, name) in enumType.cases.enumerated() where reservedCases.contains(name) {
                diagnostics.error(
                    "enum case name '\(name)' clashes with the member '\(enumType.name).\(name)' that Swift or the enum's conformances define; rename it",
                    at: context.location(.enumCase(index, of: enumType.name), or: enumType.location))
            }
        }
    }
}

/// Fetches become static members of the entity's `Fetches` enum, which has the members every
/// Swift type has.
struct FetchNameRule: SchemaRule {
    /// Fetch names that `Fetches` cannot declare.
    static let reservedNames: Set<String> = ["self", "Self", "Type", "Protocol", "init"]

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for fetch in entity.fetches where reservedNames.contains(fetch.name) {
                diagnostics.error(
                    "fetch name '\(fetch.name)' clashes with the member '\(entity.name).Fetches.\(fetch.name)' that Swift defines for every type; rename it",
                    at: fetch.location)
            }
        }
    }
}
