import Foundation
import GRDB
import Testing
@testable import Strata


/// Records committed changes, in order.
final class CommitRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [CommittedChanges] = []
    private(set) var observation: CommitObservation?

    init(_ store: Store) {
        observation = store.observeCommits { [weak self] changes in
            guard let self else { return }
            self.lock.lock()
            self.recorded.append(changes)
            self.lock.unlock()
        }
    }

    var commits: [CommittedChanges] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    func reset() {
        lock.lock()
        recorded = []
        lock.unlock()
    }
}

/// A model with one relationship of each kind whose delete rules the tests choose:
/// `Parent.children` ↔ `Child.parent` (one-to-many) and `Left.rights` ↔ `Right.lefts`
/// (many-to-many).
enum RulesModel {
    static func schema(
        children: DeleteRule = .nullify, parent: DeleteRule = .nullify,
        rights: DeleteRule = .nullify, lefts: DeleteRule = .nullify
    ) -> SchemaDescriptor {
        SchemaDescriptor(name: "RulesModel", entities: [
            EntityDescriptor(
                name: "Parent", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "children", destination: "Child", inverse: "parent", isToMany: true,
                          deleteRule: children, storage: .inverseForeignKey),
                ]),
            EntityDescriptor(
                name: "Child", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "parent", destination: "Parent", inverse: "children", isToMany: false,
                          deleteRule: parent, storage: .foreignKey(column: "parentID")),
                ]),
            EntityDescriptor(
                name: "Left", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "rights", destination: "Right", inverse: "lefts", isToMany: true,
                          deleteRule: rights, storage: .joinTable(name: "Left_rights", column: "leftID", inverseColumn: "rightID")),
                ]),
            EntityDescriptor(
                name: "Right", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "lefts", destination: "Left", inverse: "rights", isToMany: true,
                          deleteRule: lefts, storage: .joinTable(name: "Left_rights", column: "rightID", inverseColumn: "leftID")),
                ]),
        ])
    }
}

/// A node whose to-one `twin` is its own inverse (a self-referencing one-to-one, like the
/// generator's EdgeCases `Node.twin`), with the delete rule the tests choose.
enum TwinModel {
    static func schema(twin: DeleteRule) -> SchemaDescriptor {
        SchemaDescriptor(name: "TwinModel", entities: [
            EntityDescriptor(
                name: "Node", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "twin", destination: "Node", inverse: "twin", isToMany: false,
                          deleteRule: twin, storage: .foreignKey(column: "twinID")),
                ]),
        ])
    }
}

/// A self-referencing many-to-many, `Person.friends` ↔ `Person.friendOf`, in one join
/// table whose two columns belong to different sides with their own delete rules.
enum FriendsModel {
    static func schema(friends: DeleteRule, friendOf: DeleteRule) -> SchemaDescriptor {
        SchemaDescriptor(name: "FriendsModel", entities: [
            EntityDescriptor(
                name: "Person", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "friends", destination: "Person", inverse: "friendOf", isToMany: true,
                          deleteRule: friends,
                          storage: .joinTable(name: "Person_friends", column: "personID", inverseColumn: "friendID")),
                    .init(name: "friendOf", destination: "Person", inverse: "friends", isToMany: true,
                          deleteRule: friendOf,
                          storage: .joinTable(name: "Person_friends", column: "friendID", inverseColumn: "personID")),
                ]),
        ])
    }
}

/// A many-to-many that is its own inverse, `Person.friends` ↔ `Person.friends`, laid out as
/// StorageLayout lays it out: join table `Person_friends`, one link per row in either order
/// (`personID`, `friendsID`), with the delete rule the tests choose.
enum SocialModel {
    static func schema(friends: DeleteRule) -> SchemaDescriptor {
        SchemaDescriptor(name: "SocialModel", entities: [
            EntityDescriptor(
                name: "Person", attributes: [.init(name: "name", type: .string)],
                relationships: [
                    .init(name: "friends", destination: "Person", inverse: "friends", isToMany: true,
                          deleteRule: friends,
                          storage: .joinTable(name: "Person_friends", column: "personID", inverseColumn: "friendsID")),
                ]),
        ])
    }
}

/// A person of ``SocialModel`` with the `nullify` rule, in the shape of generated code, for
/// the typed API (link, unlink, relationship requests, results controllers).
struct Person: StrataEntity, Identifiable {
    typealias ID = EntityID<Person>

    var id: ID
    var name: String
    var objectID: ID {
        get { id }
        set { id = newValue }
    }

    init(id: ID = .unsaved, name: String) {
        self.id = id
        self.name = name
    }

    static let schema = SocialModel.schema(friends: .nullify)
    static let databaseTableName = "Person"
    static let entityDescriptor = schema.entity(named: "Person")!

    init(row: GRDB.Row) throws {
        id = row["id"]
        name = row["name"]
    }

    func encode(to container: inout GRDB.PersistenceContainer) throws {
        if id.isSaved { container["id"] = id }
        container["name"] = name
    }

    mutating func didInsert(_ inserted: GRDB.InsertionSuccess) {
        id = ID(rawValue: inserted.rowID)
    }

    static var name: TypedColumn<Person, String> { .init("name") }
    static var friends: ToMany<Person, Person> { .init("friends") }
}

extension Database {
    func ids(_ table: String) throws -> [Int64] {
        try Int64.fetchAll(self, sql: "SELECT id FROM \"\(table)\" ORDER BY id")
    }

    func links() throws -> [[Int64]] {
        try GRDB.Row.fetchAll(self, sql: "SELECT leftID, rightID FROM Left_rights ORDER BY leftID, rightID").map { row in
            let left: Int64 = row[0]
            let right: Int64 = row[1]
            return [left, right]
        }
    }

    func count(_ table: String) throws -> Int {
        try Int.fetchOne(self, sql: "SELECT COUNT(*) FROM \"\(table)\"") ?? 0
    }
}

/// A small deterministic random generator (SplitMix64), so failures replay from a seed.
struct StoreRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The bytes of a store's file and of its `-wal` and `-shm` companions (nil when absent).
struct FileState: Equatable, CustomStringConvertible {
    var main: Data?
    var wal: Data?
    var shm: Data?

    init(_ path: String) {
        main = FileManager.default.contents(atPath: path)
        wal = FileManager.default.contents(atPath: path + "-wal")
        shm = FileManager.default.contents(atPath: path + "-shm")
    }

    var description: String {
        "file \(main.map { "\($0.count) bytes" } ?? "absent"), -wal \(wal.map { "\($0.count) bytes" } ?? "absent"), "
            + "-shm \(shm.map { "\($0.count) bytes" } ?? "absent")"
    }
}

/// A row read the way generated records read theirs: from a cursor whose row is made before
/// the statement first steps, each column looked up by name. A statement compiled against an
/// outdated schema shows here as a misplaced or missing column (one the row cannot find by
/// name reads as `<not found>`, where a generated record would trap) or an unexpected count.
struct StoredRow: Hashable, CustomStringConvertible {
    var values: [String: DatabaseValue]

    init(row: GRDB.Row, columns: [String]) {
        values = Dictionary(
            columns.map { ($0, row.hasColumn($0) ? row[$0] as DatabaseValue : "<not found>".databaseValue) },
            uniquingKeysWith: { first, _ in first })
        if row.count != columns.count { values["<column count>"] = row.count.databaseValue }
    }

    var description: String {
        values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }

    /// Every row of `table`, by rowid, expected to have `columns`.
    static func all(_ db: Database, _ table: String, columns: [String]) throws -> [StoredRow] {
        try Array(GRDB.Row.fetchCursor(db, sql: "SELECT * FROM \(quoted(table)) ORDER BY rowid").map {
            StoredRow(row: $0, columns: columns)
        })
    }
}
