import Foundation
import GRDB

/// A delete refused by a ``DeleteRule/deny`` rule: an object of `entity` still had objects
/// in `relationship`. The whole transaction was rolled back.
///
/// ```swift
/// do {
///     try store.write { db in try db.delete(notebook) }
/// } catch let error as DeleteDeniedError {
///     print("\(error.entity).\(error.relationship) is not empty")
/// }
/// ```
public struct DeleteDeniedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The entity of the object whose delete was refused.
    public var entity: String
    /// The relationship with the deny rule that still had objects.
    public var relationship: String

    /// An error for a delete of an `entity` refused by its `relationship`.
    public init(entity: String, relationship: String) {
        self.entity = entity
        self.relationship = relationship
    }

    /// The deny error behind a GRDB error raised by a delete-rule trigger, if it is one.
    /// Use it when you write with GRDB directly rather than through ``Store/write(_:)``.
    public init?(_ error: any Error) {
        guard let error = error as? DatabaseError, let message = error.message else { return nil }
        self.init(message: message)
    }

    /// The deny error named by a delete-rule trigger's message.
    init?(message: String) {
        guard let range = message.range(of: DeleteRuleTriggers.denyMessagePrefix) else { return nil }
        let name = message[range.upperBound...]
        guard let dot = name.firstIndex(of: ".") else { return nil }
        self.entity = String(name[..<dot])
        self.relationship = String(name[name.index(after: dot)...])
    }

    /// A readable message that names what is at fault.
    public var description: String {
        "cannot delete \(entity): its relationship '\(relationship)' is not empty and has the deny rule"
    }
}

/// An update that would change a row's id, refused: ids are identities.
///
/// Results controllers, change events and relationships follow rows by id; a row whose id
/// changed would be a new object that took another's place. Every entity table has a
/// trigger that refuses such an update, whoever runs it (raw SQL or GRDB's query interface
/// on ``Store/writer``, another connection or program on the file, a file opened before
/// this version of Strata, whose trigger the store adds when it opens it), so insert a new
/// row and delete the old one
/// instead. The statement is undone; through ``Store/write(_:)`` the error fails the
/// transaction like any other.
///
/// ```swift
/// try store.writer.write { db in
///     try db.execute(sql: "UPDATE Note SET id = 100 WHERE id = 1")   // throws
/// }
/// ```
public struct IdentityChangeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The entity whose row's id the update would change.
    public var entity: String

    /// An error for an update of `entity`.
    public init(entity: String) {
        self.entity = entity
    }

    /// The identity error behind a GRDB error raised by the identity trigger, if it is one.
    /// Use it when you write with GRDB directly rather than through ``Store/write(_:)``.
    public init?(_ error: any Error) {
        guard let error = error as? DatabaseError, let message = error.message,
              let range = message.range(of: DeleteRuleTriggers.identityMessagePrefix)
        else { return nil }
        self.entity = String(message[range.upperBound...])
    }

    /// A readable message that names the entity and what to do.
    public var description: String {
        "cannot change the id of a \(entity) row: ids are identities (insert a new row and delete the old one instead)"
    }
}

/// A write refused by a `unique` constraint of the model (or by the uniqueness of ids, or
/// of a many-to-many link written by raw SQL): another row already has the same values.
/// A one-to-one's key, also kept unique, is refused with ``RuleViolationError`` instead
/// (``RuleViolationError/Rule/oneToOne(_:)``), which names the object and the relationship.
///
/// ```swift
/// do {
///     try store.insert(Notebook(name: "Work"))   // a notebook named Work exists
/// } catch let error as UniqueConstraintError {
///     print(error.entity, error.attributes)       // Notebook ["name"]
/// }
/// ```
public struct UniqueConstraintError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The entity (or join table) whose constraint refused the write.
    public var entity: String
    /// The constrained attributes (columns), in the constraint's order.
    public var attributes: [String]

    /// An error for the constraint on `attributes` of `entity`.
    public init(entity: String, attributes: [String]) {
        self.entity = entity
        self.attributes = attributes
    }

    /// The unique-constraint error behind a GRDB error, if it is one. Use it when you write
    /// with GRDB directly rather than through ``Store/write(_:)``.
    public init?(_ error: any Error) {
        // SQLite: "UNIQUE constraint failed: Table.a, Table.b" (or "PRIMARY KEY", for ids).
        guard let error = error as? DatabaseError,
              error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
                || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY,
              let message = error.message,
              let colon = message.range(of: "constraint failed: ")
        else { return nil }
        var entity: String?
        var attributes: [String] = []
        for part in message[colon.upperBound...].split(separator: ",") {
            let item = part.trimmingCharacters(in: .whitespaces)
            guard let dot = item.firstIndex(of: ".") else { continue }
            entity = entity ?? String(item[..<dot])
            attributes.append(String(item[item.index(after: dot)...]))
        }
        guard let entity else { return nil }
        self.init(entity: entity, attributes: attributes)
    }

    /// A readable message that names the entity and the attributes.
    public var description: String {
        let list = attributes.joined(separator: ", ")
        return "another \(entity) already has the same \(attributes.count == 1 ? "value" : "values") of \(list) (unique constraint)"
    }
}

/// The storage under a store failed during a read or write: the disk is full, the file
/// became read-only, its content is corrupt, or the operating system reported an I/O error.
///
/// The transaction that met it was rolled back; what was committed before is intact
/// (SQLite's write-ahead log commits atomically), except for the pages of a corrupt file.
///
/// ```swift
/// do {
///     try store.insert(note)
/// } catch let error as StorageError where error.kind == .full {
///     showFreeSomeSpaceAlert()   // the note was not saved; earlier notes are safe
/// }
/// ```
public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Hashable, Sendable {
        /// The disk (or the database's size limit) is full: `SQLITE_FULL`.
        case full
        /// The file or its folder cannot be written any more: `SQLITE_READONLY`.
        case readOnly
        /// The file's content is damaged: `SQLITE_CORRUPT`, `SQLITE_NOTADB`.
        case corrupt
        /// The operating system reported an error reading or writing: `SQLITE_IOERR`.
        case io
    }

    /// What failed.
    public var kind: Kind
    /// The store's file; nil for an in-memory store.
    public var path: String?
    /// SQLite's own message.
    public var message: String

    /// An error of `kind` for the store at `path`.
    public init(kind: Kind, path: String?, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// The storage error behind a GRDB error, if it is one.
    public init?(_ error: any Error, path: String?) {
        guard let error = error as? DatabaseError else { return nil }
        let kind: Kind
        switch error.resultCode {
        case .SQLITE_FULL: kind = .full
        case .SQLITE_READONLY: kind = .readOnly
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: kind = .corrupt
        case .SQLITE_IOERR: kind = .io
        default: return nil
        }
        self.init(kind: kind, path: path, message: error.message ?? "\(error.resultCode)")
    }

    /// A readable message: what failed, where, and what to do.
    public var description: String {
        let file = path.map { "the store at \($0)" } ?? "the in-memory store"
        switch kind {
        case .full:
            return "\(file) cannot grow: the disk is full (\(message)). Free some space and try again; nothing of this transaction was saved, earlier commits are intact"
        case .readOnly:
            return "\(file) cannot be written (\(message)). Check that the file and its folder are writable and the file system is not read-only"
        case .corrupt:
            return "\(file) is damaged (\(message)). Restore it from a backup; `PRAGMA integrity_check` tells what is affected"
        case .io:
            return "reading or writing \(file) failed (\(message)). Check the disk, and that its file system is mounted writable"
        }
    }
}

/// A change of model that the store cannot apply without losing data.
public enum DestructiveChange: Hashable, Sendable, CustomStringConvertible {
    /// An entity is no longer in the model: its table and rows would go.
    case removedEntity(entity: String)
    /// An attribute is no longer in the model: its column and values would go.
    case removedAttribute(entity: String, attribute: String)
    /// An attribute has another type: values that do not convert would be replaced.
    case changedType(entity: String, attribute: String)
    /// An optional attribute (or to-one relationship) became required.
    case madeRequired(entity: String, attribute: String)
    /// A new attribute is required and has no default: existing rows have no value for it.
    case newRequiredAttribute(entity: String, attribute: String)
    /// A relationship (its foreign key or join table) was removed.
    case removedRelationship(entity: String, relationship: String)
    /// A new required to-one relationship: existing objects have no destination.
    case newRequiredRelationship(entity: String, relationship: String)
    /// Cases were removed from an enumeration attribute's type: stored values of those
    /// cases would no longer decode (with data loss allowed, they take the attribute's
    /// default, NULL when optional, or the first remaining case).
    case removedEnumCases(entity: String, attribute: String, cases: [String])

    /// The entity the change is about.
    public var entity: String {
        switch self {
        case .removedEntity(let entity), .removedAttribute(let entity, _), .changedType(let entity, _),
            .madeRequired(let entity, _), .newRequiredAttribute(let entity, _),
            .removedRelationship(let entity, _), .newRequiredRelationship(let entity, _),
            .removedEnumCases(let entity, _, _):
            entity
        }
    }

    /// The attribute or relationship, when the change is about one.
    public var property: String? {
        switch self {
        case .removedEntity: nil
        case .removedAttribute(_, let name), .changedType(_, let name), .madeRequired(_, let name),
            .newRequiredAttribute(_, let name), .removedRelationship(_, let name),
            .newRequiredRelationship(_, let name), .removedEnumCases(_, let name, _):
            name
        }
    }

    /// A readable message that names what is at fault.
    public var description: String {
        switch self {
        case .removedEntity(let e): "entity \(e) was removed"
        case .removedAttribute(let e, let a): "attribute \(e).\(a) was removed"
        case .changedType(let e, let a): "attribute \(e).\(a) changed type"
        case .madeRequired(let e, let a): "attribute \(e).\(a) is no longer optional"
        case .newRequiredAttribute(let e, let a): "new attribute \(e).\(a) is required and has no default"
        case .removedRelationship(let e, let r): "relationship \(e).\(r) was removed"
        case .newRequiredRelationship(let e, let r): "new relationship \(e).\(r) is required"
        case .removedEnumCases(let e, let a, let cases):
            "attribute \(e).\(a) lost enum case\(cases.count == 1 ? "" : "s") " + cases.joined(separator: ", ")
        }
    }
}

/// Why a store refused the content of its file: the file was not modified.
///
/// A file that cannot be opened at all (a missing folder, a file that is not a SQLite
/// database, missing permissions) is a ``StoreOpenError`` instead.
public enum MigrationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The model changed in ways that lose data; the file was not modified. Open with
    /// ``Store/Options/allowDataLoss`` to apply them anyway.
    case destructiveChanges([DestructiveChange])
    /// The file has tables but no Strata metadata: it was not created by a Strata store.
    case notAStrataStore
    /// The file has Strata's metadata table, but the model description in it is missing,
    /// cannot be read, or the table has another shape.
    case unreadableMetadata
    /// After migrating, some rows reference missing rows; nothing was changed.
    case foreignKeyViolations(table: String)
    /// A `unique` constraint the model adds (or an attribute made `unique`) does not hold
    /// for the rows already stored: some share the values of `attributes`. `rows` lists the
    /// ids of the rows that share values, one group per set of equal values, in id order (at
    /// most 20 groups). Nothing was changed; remove or edit the duplicates with the older
    /// model first.
    case duplicateValues(entity: String, attributes: [String], rows: [[Int64]])
    /// Stored rows break rules of the model (a rule added, or tightened, by the new model;
    /// or rows written without Strata; or objects sharing a one-to-one's destination, or
    /// required sides of one-to-ones left empty, in a file written before Strata kept
    /// one-to-ones), listed with their entity, id and rule (at most 1,000 per rule). Nothing was changed; fix or delete those rows with the older model
    /// first, or open with ``Store/Options/allowDataLoss``, which deletes them (with their
    /// delete rules, as a delete through the store would).
    case ruleViolations([RuleViolationError])

    /// A readable message that names what is at fault.
    public var description: String {
        switch self {
        case .destructiveChanges(let changes):
            "the model changed destructively: " + changes.map(\.description).joined(separator: "; ")
                + " (open the store with allowDataLoss to apply)"
        case .notAStrataStore: "the database was not created by a Strata store"
        case .unreadableMetadata: "the store's model description cannot be read"
        case .foreignKeyViolations(let table): "migration would leave invalid references in table \(table)"
        case .duplicateValues(let entity, let attributes, let rows):
            "the new unique constraint on \(entity) (\(attributes.joined(separator: ", "))) does not hold: "
                + (rows.isEmpty ? "stored rows share those values" : "stored rows share those values (ids "
                    + rows.map { $0.map(String.init).joined(separator: ", ") }.joined(separator: "; ") + ")")
                + "; remove the duplicates first"
        case .ruleViolations(let violations):
            "stored rows break the model's rules: "
                + violations.prefix(20).map(\.description).joined(separator: "; ")
                + (violations.count > 20 ? "; and \(violations.count - 20) more" : "")
                + " (fix them first, or open the store with allowDataLoss to delete them)"
        }
    }
}

/// Errors of the store's typed reads and writes.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The row to update or delete does not exist.
    case notFound(entity: String, id: Int64)
    /// The value has not been inserted yet (``EntityID/unsaved``).
    case unsaved(entity: String)
    /// The entity type is not part of the store's schema.
    case unknownEntity(String)
    /// The relationship does not exist or has the wrong kind for the call.
    case invalidRelationship(entity: String, relationship: String)
    /// The store was closed (``Store/close()``): it reads and writes nothing more.
    case closed

    /// A readable message that names what is at fault.
    public var description: String {
        switch self {
        case .notFound(let entity, let id): "no \(entity) with id \(id)"
        case .unsaved(let entity): "the \(entity) has not been inserted"
        case .unknownEntity(let name): "entity \(name) is not in the store's schema"
        case .invalidRelationship(let entity, let relationship):
            "\(entity) has no relationship '\(relationship)' usable here"
        case .closed: "the store is closed"
        }
    }
}

/// Why a store's file could not be opened, with its path; the description says what to do.
///
/// ```swift
/// do {
///     store = try Store(schema: StrataModel.schema, path: path)
/// } catch let error as StoreOpenError where error.reason == .missingFolder {
///     try FileManager.default.createDirectory(
///         atPath: (error.path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
///     store = try Store(schema: StrataModel.schema, path: path)
/// }
/// ```
///
/// An open refused for the file's content as a store — not made by Strata, or a model that
/// would change destructively — is a ``MigrationError`` instead. Either way, the file was
/// not modified.
public struct StoreOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the path.
    public enum Reason: Hashable, Sendable {
        /// The folder that should hold the file does not exist.
        case missingFolder
        /// The path is empty. (SQLite would open a temporary database, gone when closed.)
        case emptyPath
        /// The path is a folder, not a file.
        case isDirectory
        /// The file is not a SQLite database: another kind of file, or a damaged or
        /// encrypted database.
        case notADatabase
        /// The process may not read or write the file, or create files in its folder.
        case permissionDenied
        /// SQLite could not open the file for another reason: its (primary) result code and
        /// message.
        case sqlite(code: Int32, message: String)
    }

    /// The path the store was opened with.
    public var path: String
    /// What is wrong with it.
    public var reason: Reason

    /// An error for the store at `path`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// A readable message that names the path, what is wrong, and what to do.
    public var description: String {
        let problem: String
        switch reason {
        case .missingFolder:
            problem = "the folder \((path as NSString).deletingLastPathComponent) does not exist; "
                + "create it first, or choose a path in an existing folder"
        case .emptyPath:
            problem = "the path is empty; give the path of a database file (for a store that is not kept, "
                + "use Store.inMemory(schema:))"
        case .isDirectory:
            problem = "it is a folder, not a file; give the path of a database file, for example one inside this folder"
        case .notADatabase:
            problem = "the file is not a SQLite database (another kind of file, or a damaged or encrypted database); "
                + "move it away or choose another path"
        case .permissionDenied:
            problem = "permission denied; this process must be able to read and write the file and create files in "
                + "its folder (SQLite keeps -wal and -shm files beside it): change the permissions or choose another path"
        case .sqlite(let code, let message):
            problem = "SQLite error \(code) (\(message)); check that the disk is available and not full, "
                + "and that no other process holds the file locked"
        }
        return "cannot open the store at \(path): \(problem)"
    }
}
