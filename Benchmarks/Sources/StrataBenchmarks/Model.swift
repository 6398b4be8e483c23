// Copied from Tests/StrataTests/Fixtures/NotesModel.swift (the hand-written shape of generated
// code, kept in step with StrataCodegen's reference output). Keep this copy in sync with it.
import Foundation
import GRDB
import Strata

/// String-backed enum `Priority`.
public enum Priority: String, Sendable, Hashable, Codable, CaseIterable, DatabaseValueConvertible {
    case low
    case normal
    case high
}

/// A notebook groups notes.
public struct Notebook: Strata.StrataEntity {
    public typealias ID = Strata.EntityID<Notebook>

    public var id: ID
    public var name: String
    public var createdAt: Foundation.Date
    public var position: Int
    public var color: String?

    public init(
        id: ID = .unsaved,
        name: String,
        createdAt: Foundation.Date = Foundation.Date(),
        position: Int = 0,
        color: String? = nil
    ) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.position = position
        self.color = color
    }
}

extension Notebook {
    public static let databaseTableName = "Notebook"
    public static let entityDescriptor = NotesModel.schema.entity(named: "Notebook")!

    public init(row: GRDB.Row) throws {
        id = row["id"]
        name = row["name"]
        createdAt = row["createdAt"]
        position = row["position"]
        color = row["color"]
    }

    public func encode(to container: inout GRDB.PersistenceContainer) throws {
        if id.isSaved { container["id"] = id }
        container["name"] = name
        container["createdAt"] = createdAt
        container["position"] = position
        container["color"] = color
    }

    public mutating func didInsert(_ inserted: GRDB.InsertionSuccess) {
        id = ID(rawValue: inserted.rowID)
    }
}

extension Notebook {
    public static var id: Strata.TypedColumn<Notebook, ID> { .init("id") }
    public static var name: Strata.TypedColumn<Notebook, String> { .init("name") }
    public static var createdAt: Strata.TypedColumn<Notebook, Foundation.Date> { .init("createdAt") }
    public static var position: Strata.TypedColumn<Notebook, Int> { .init("position") }
    public static var color: Strata.TypedColumn<Notebook, String?> { .init("color") }
    public static var notes: Strata.ToMany<Notebook, Note> { .init("notes") }
}

extension Strata.ToOne where Destination == Notebook {
    public var id: Strata.TypedColumn<Root, Notebook.ID?> { _column("id") }
    public var name: Strata.TypedColumn<Root, String?> { _column("name") }
    public var createdAt: Strata.TypedColumn<Root, Foundation.Date?> { _column("createdAt") }
    public var position: Strata.TypedColumn<Root, Int?> { _column("position") }
    public var color: Strata.TypedColumn<Root, String?> { _column("color") }
}

public struct Note: Strata.StrataEntity {
    public typealias ID = Strata.EntityID<Note>

    public var id: ID
    public var title: String
    public var body: String
    public var pinned: Bool
    public var priority: Priority
    public var updatedAt: Foundation.Date
    public var notebookID: Notebook.ID?

    public init(
        id: ID = .unsaved,
        title: String,
        body: String = "",
        pinned: Bool = false,
        priority: Priority = .normal,
        updatedAt: Foundation.Date,
        notebookID: Notebook.ID? = nil
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.pinned = pinned
        self.priority = priority
        self.updatedAt = updatedAt
        self.notebookID = notebookID
    }
}

extension Note {
    public static let databaseTableName = "Note"
    public static let entityDescriptor = NotesModel.schema.entity(named: "Note")!

    public init(row: GRDB.Row) throws {
        id = row["id"]
        title = row["title"]
        body = row["body"]
        pinned = row["pinned"]
        priority = row["priority"]
        updatedAt = row["updatedAt"]
        notebookID = row["notebookID"]
    }

    public func encode(to container: inout GRDB.PersistenceContainer) throws {
        if id.isSaved { container["id"] = id }
        container["title"] = title
        container["body"] = body
        container["pinned"] = pinned
        container["priority"] = priority
        container["updatedAt"] = updatedAt
        container["notebookID"] = notebookID
    }

    public mutating func didInsert(_ inserted: GRDB.InsertionSuccess) {
        id = ID(rawValue: inserted.rowID)
    }
}

extension Note {
    public static var id: Strata.TypedColumn<Note, ID> { .init("id") }
    public static var title: Strata.TypedColumn<Note, String> { .init("title") }
    public static var body: Strata.TypedColumn<Note, String> { .init("body") }
    public static var pinned: Strata.TypedColumn<Note, Bool> { .init("pinned") }
    public static var priority: Strata.TypedColumn<Note, Priority> { .init("priority") }
    public static var updatedAt: Strata.TypedColumn<Note, Foundation.Date> { .init("updatedAt") }
    public static var notebookID: Strata.TypedColumn<Note, Notebook.ID?> { .init("notebookID") }
    public static var notebook: Strata.ToOne<Note, Notebook> { .init("notebook") }
    public static var tags: Strata.ToMany<Note, Tag> { .init("tags") }
}

extension Strata.ToOne where Destination == Note {
    public var id: Strata.TypedColumn<Root, Note.ID?> { _column("id") }
    public var title: Strata.TypedColumn<Root, String?> { _column("title") }
    public var body: Strata.TypedColumn<Root, String?> { _column("body") }
    public var pinned: Strata.TypedColumn<Root, Bool?> { _column("pinned") }
    public var priority: Strata.TypedColumn<Root, Priority?> { _column("priority") }
    public var updatedAt: Strata.TypedColumn<Root, Foundation.Date?> { _column("updatedAt") }
    public var notebookID: Strata.TypedColumn<Root, Notebook.ID?> { _column("notebookID") }
    public var notebook: Strata.ToOne<Root, Notebook> { _toOne("notebook") }
}

extension Note {
    /// The fetches of the model's `fetches:` entries.
    public enum Fetches {
        public static var all: Strata.ResultsRequest<Note, Strata.NoSection> {
            .init(sortedBy: [Note.title.ascending])
        }

        public static var pinned: Strata.ResultsRequest<Note, Strata.NoSection> {
            .init(where: Note.pinned == true, sortedBy: [Note.updatedAt.descending])
        }

        public static func search(text: String) -> Strata.ResultsRequest<Note, Strata.NoSection> {
            .init(
                where: Note.title.contains(text, .caseInsensitive) || Note.body.contains(text, .caseInsensitive),
                sortedBy: [Note.title.ascending]
            )
        }

        public static var byNotebook: Strata.ResultsRequest<Note, Notebook> {
            .init(
                sortedBy: [Note.pinned.descending, Note.title.ascending],
                sections: .entity(Note.notebook, sortedBy: [Notebook.position.ascending, Notebook.name.ascending])
            )
        }

        public static var byPriority: Strata.ResultsRequest<Note, Priority> {
            .init(sortedBy: [Note.priority.ascending, Note.title.ascending], sections: .key(Note.priority))
        }
    }
}

public struct Tag: Strata.StrataEntity {
    public typealias ID = Strata.EntityID<Tag>

    public var id: ID
    public var name: String

    public init(id: ID = .unsaved, name: String) {
        self.id = id
        self.name = name
    }
}

extension Tag {
    public static let databaseTableName = "Tag"
    public static let entityDescriptor = NotesModel.schema.entity(named: "Tag")!

    public init(row: GRDB.Row) throws {
        id = row["id"]
        name = row["name"]
    }

    public func encode(to container: inout GRDB.PersistenceContainer) throws {
        if id.isSaved { container["id"] = id }
        container["name"] = name
    }

    public mutating func didInsert(_ inserted: GRDB.InsertionSuccess) {
        id = ID(rawValue: inserted.rowID)
    }
}

extension Tag {
    public static var id: Strata.TypedColumn<Tag, ID> { .init("id") }
    public static var name: Strata.TypedColumn<Tag, String> { .init("name") }
    public static var notes: Strata.ToMany<Tag, Note> { .init("notes") }
}

extension Strata.ToOne where Destination == Tag {
    public var id: Strata.TypedColumn<Root, Tag.ID?> { _column("id") }
    public var name: Strata.TypedColumn<Root, String?> { _column("name") }
}

/// The model's storage layout, which `Store` creates and migrates.
public enum NotesModel {
    public static let schema = Strata.SchemaDescriptor(
        name: "NotesModel",
        entities: [
            Strata.EntityDescriptor(
                name: "Notebook",
                attributes: [
                    .init(name: "name", type: .string),
                    .init(name: "createdAt", type: .date, defaultValue: .now),
                    .init(name: "position", type: .int, defaultValue: .value(0.databaseValue), isIndexed: true),
                    .init(name: "color", type: .string, isOptional: true),
                ],
                relationships: [
                    .init(
                        name: "notes", destination: "Note", inverse: "notebook", isToMany: true,
                        deleteRule: .cascade, storage: .inverseForeignKey),
                ],
                uniques: [["name"]]
            ),
            Strata.EntityDescriptor(
                name: "Note",
                attributes: [
                    .init(name: "title", type: .string),
                    .init(name: "body", type: .string, defaultValue: .value("".databaseValue)),
                    .init(name: "pinned", type: .bool, defaultValue: .value(false.databaseValue)),
                    .init(
                        name: "priority", type: .enumeration(name: "Priority", cases: ["low", "normal", "high"]),
                        defaultValue: .value("normal".databaseValue)),
                    .init(name: "updatedAt", type: .date),
                ],
                relationships: [
                    .init(
                        name: "notebook", destination: "Notebook", inverse: "notes", isToMany: false,
                        storage: .foreignKey(column: "notebookID")),
                    .init(
                        name: "tags", destination: "Tag", inverse: "notes", isToMany: true,
                        storage: .joinTable(name: "Note_tags", column: "noteID", inverseColumn: "tagID")),
                ],
                indexes: [["notebookID", "updatedAt"]]
            ),
            Strata.EntityDescriptor(
                name: "Tag",
                attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(
                        name: "notes", destination: "Note", inverse: "tags", isToMany: true,
                        storage: .joinTable(name: "Note_tags", column: "tagID", inverseColumn: "noteID")),
                ]
            ),
        ]
    )
}
