import Foundation
import GRDB
import Strata
import Testing

// The sources in Generated/ are symlinks to the reference output of StrataCodegenTests
// (Tests/StrataCodegenTests/Resources/{EdgeCases,Notes,Predicates}): this target compiles them and
// exercises them. Entities named Section, Item, Store, Predicate, Snapshot and Date shadow
// runtime, Foundation and standard library names here.

@Suite struct EdgeCaseModelTests {
    @Test func defaultsKeepExactValues() {
        let item = Item(name: "n", sectionID: Section.ID(1))
        #expect(item.default == #"say "hi""#)
        #expect(item.class == .class)
        #expect(item.backslash == #"C:\path\to\file"#)
        #expect(item.interpolation == #"\(notInterpolated)"#)
        #expect(item.triple == "\"\"\" and #\"raw\"#")
        #expect(item.emoji == "👩‍💻 naïve ✓")
        #expect(item.multiline == "line one\nline two\ttabbed\r")
        #expect(item.count == -3)
        #expect(item.small == 7)
        #expect(item.medium == nil)
        #expect(item.ratio == 0.25)
        #expect(item.weight == 1)
        #expect(item.flag)
        #expect(item.fixedToken == Foundation.UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        #expect(item.amount == Foundation.Decimal(string: "12.5"))
        #expect(item.storeID == nil)
        #expect(!item.id.isSaved)
    }

    @Test func selfRelationshipsAndNumericDefaults() throws {
        let node = Node()
        #expect(node.home.absoluteString == "https://example.com/path?q=1&r=%20")
        #expect(node.offset == -1.5 && node.ratio == -2 && node.budget == 3)
        #expect(node.parentID == nil && node.twinID == nil)
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        let roots = try store.write { db -> [Node] in
            let root = try db.insert(Node())
            let child = try db.insert(Node(parentID: root.id))
            let twin = try db.insert(Node(parentID: root.id, twinID: child.id))
            _ = twin
            return try db.fetchAll(Node.Fetches.roots)
        }
        #expect(roots.count == 1)
        #expect(roots.first?.parentID == nil)
    }

    @Test func shadowingNamesAreUsable() {
        let date = Date(value: "today")
        let stamp: Foundation.Date = Item(name: "n", sectionID: .init(1)).stamp
        #expect(date.value == "today")
        #expect(stamp <= Foundation.Date())
        let predicate: Strata.EntityPredicate<Predicate> = Predicate.level == .high
        #expect(predicate.node == .compare(.path(["level"]), .equal, .value("high".databaseValue)))
        #expect(Kind.allCases.map(\.rawValue) == ["default", "class", "plain"])
    }

    @Test func descriptorStorageAgreesOnBothSides() throws {
        let schema = EdgeModel.schema
        #expect(schema.entities.map(\.name) == ["Section", "Item", "Store", "Snapshot", "Predicate", "Date", "Passport", "Node"])
        let date = try #require(schema.entity(named: "Date"))
        #expect(date.relationship(named: "after")?.storage == .joinTable(name: "Date_after", column: "beforeID", inverseColumn: "afterID"))
        #expect(date.relationship(named: "before")?.storage == .joinTable(name: "Date_after", column: "afterID", inverseColumn: "beforeID"))
        #expect(date.relationship(named: "passport")?.storage == .inverseForeignKey)
        #expect(schema.entity(named: "Passport")?.relationship(named: "holder")?.storage == .foreignKey(column: "holderID"))
        #expect(schema.entity(named: "Snapshot")?.relationship(named: "store")?.storage == .foreignKey(column: "storeID"))
        #expect(schema.entity(named: "Store")?.relationship(named: "owner")?.storage == .inverseForeignKey)
        let item = try #require(schema.entity(named: "Item"))
        #expect(item.uniques == [["name", "sectionID"]])
        #expect(item.indexes == [["storeID", "count"]])
        #expect(item.attribute(named: "default")?.defaultValue == .value(#"say "hi""#.databaseValue))
        #expect(item.attribute(named: "count")?.defaultValue == .value((-3).databaseValue))
        #expect(item.attribute(named: "stamp")?.defaultValue == .now)
        #expect(item.attribute(named: "token")?.defaultValue == .uuid)
        #expect(item.attribute(named: "class")?.type == .enumeration(name: "Kind", cases: ["default", "class", "plain"]))
    }

    @Test func fetchesBuildTypedRequests() {
        #expect(Item.Fetches.strings(prefix: "a").predicate?.node == .or([
            .or([
                .or([
                    .match(.path(["name"]), .beginsWith, .value("a".databaseValue), .caseInsensitive),
                    .match(.path(["name"]), .endsWith, .value("z".databaseValue), .diacriticInsensitive),
                ]),
                .match(.path(["name"]), .like, .value("a*b?".databaseValue), [.caseInsensitive, .diacriticInsensitive]),
            ]),
            .match(.path(["default"]), .contains, .value("x".databaseValue), []),
        ]))
        #expect(Item.Fetches.counts(minimum: 3).predicate?.node == .and([
            .compare(.count(["predicates"]), .greater, .value(2.databaseValue)),
            .compare(.count(["section", "items"]), .greaterOrEqual, .value(3.databaseValue)),
        ]))
        #expect(Item.Fetches.optionalLists(names: ["a"], levels: [.high], max: 3, default: "d").predicate?.node == .and([
            .and([
                .and([
                    .isIn(.path(["store", "name"]), ["a".databaseValue]),
                    .isIn(.path(["level"]), ["high".databaseValue]),
                ]),
                .between(.path(["section", "order"]), 1.databaseValue, 3.databaseValue),
            ]),
            .compare(.path(["name"]), .notEqual, .value("d".databaseValue)),
        ]))
        #expect(Item.Fetches.byKey.sectioning.kind == .key(path: ["class"], descending: false, firstLetter: false))
        #expect(Item.Fetches.byLetter.sectioning.kind == .key(path: ["name"], descending: false, firstLetter: true))
        #expect(Item.Fetches.byOptionalKey.sectioning.kind == .key(path: ["store", "name"], descending: true, firstLetter: false))
        #expect(Item.Fetches.byStore(storePrefix: "S").sectioning.kind == .entity(
            relationship: ["store"], sort: [],
            predicate: .match(.path(["name"]), .beginsWith, .value("S".databaseValue), []), orphans: true))
        #expect(Item.Fetches.throughToOne(title: "t").sortKeys.map(\.node) == [
            SortNode(path: ["section", "order"], descending: false), SortNode(path: ["store", "name"], descending: true),
        ])
    }

    @Test func recordsRoundTripThroughAStore() throws {
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        let saved = try store.write { db -> Item in
            let section = try db.insert(Section(title: "S"))
            var item = Item(name: "n", sectionID: section.id)
            item.blob = Foundation.Data([0, 1, 2])
            item.link = Foundation.URL(string: "https://example.com/a?b=c")
            item.level = .high
            return try db.insert(item)
        }
        #expect(saved.id.isSaved)
        let fetched = try store.read { db in try db.fetchOne(Item.self, id: saved.id) }
        // Dates lose sub-millisecond precision in SQLite.
        var expected = saved
        expected.stamp = fetched?.stamp ?? saved.stamp
        #expect(fetched == expected)
    }

    @Test func everyFetchRunsAgainstAStore() throws {
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        try store.read { db in
            _ = try db.fetchAll(Item.Fetches.all)
            _ = try db.fetchAll(Item.Fetches.everything)
            _ = try db.fetchAll(Item.Fetches.nothing)
            _ = try db.fetchAll(Item.Fetches.comparisons)
            _ = try db.fetchAll(Item.Fetches.strings(prefix: "a"))
            _ = try db.fetchAll(Item.Fetches.literals)
            _ = try db.fetchAll(Item.Fetches.parameters(since: Foundation.Date(), classes: [.plain], medium: nil, amount: 1))
            _ = try db.fetchAll(Item.Fetches.lists(low: 0, high: 1))
            _ = try db.fetchAll(Item.Fetches.optionalLists(names: ["a"], levels: [.high], max: 3, default: "d"))
            _ = try db.fetchAll(Item.Fetches.negation)
            _ = try db.fetchAll(Item.Fetches.throughToOne(title: "t"))
            _ = try db.fetchAll(Item.Fetches.quantified(text: "t"))
            _ = try db.fetchAll(Item.Fetches.counts(minimum: 1))
            _ = try db.fetchAll(Item.Fetches.columns)
        }
    }
}

@Suite struct NotesModelTests {
    @Test func designModelShape() throws {
        let note = Note(title: "Milk", updatedAt: Foundation.Date(timeIntervalSince1970: 0))
        #expect(note.body == "" && !note.pinned && note.priority == .normal && note.notebookID == nil)
        #expect(Note.Fetches.search(text: "m").predicate?.node == .or([
            .match(.path(["title"]), .contains, .value("m".databaseValue), .caseInsensitive),
            .match(.path(["body"]), .contains, .value("m".databaseValue), .caseInsensitive),
        ]))
        #expect(NotesModel.schema.entity(named: "Tag")?.relationship(named: "notes")?.storage
            == .joinTable(name: "Note_tags", column: "tagID", inverseColumn: "noteID"))
    }
}

/// The generated GRDB associations, through GRDB's own query interface on a Strata store.
@Suite struct AssociationTests {
    @Test func notesModelAssociationsJoinTheRightRows() throws {
        let store = try Strata.Store.inMemory(schema: NotesModel.schema)
        let stamp = Foundation.Date(timeIntervalSince1970: 0)
        try store.write { db in
            let work = try db.insert(Notebook(name: "Work"))
            _ = try db.insert(Notebook(name: "Empty"))
            let filed = try db.insert(Note(title: "Filed", updatedAt: stamp, notebookID: work.id))
            _ = try db.insert(Note(title: "Loose", updatedAt: stamp))
            let urgent = try db.insert(Tag(name: "urgent"))
            try db.link(urgent.id, Tag.notes, filed.id)
        }
        try store.read { db in
            // belongsTo: only the note with a notebook, its notebook decoded under "notebook".
            let rows = try Note.including(required: Note.Associations.notebook).asRequest(of: GRDB.Row.self).fetchAll(db)
            #expect(rows.map { $0["title"] as String } == ["Filed"])
            #expect(rows.first?.scopes["notebook"]?["name"] == "Work")
            // hasMany: notebooks with at least one note.
            let nonEmpty = try Notebook.joining(required: Notebook.Associations.notes).fetchAll(db)
            #expect(nonEmpty.map(\.name) == ["Work"])
            // hasMany through the join table, both ways.
            let tagged = try Note.joining(required: Note.Associations.tags.filter(GRDB.Column("name") == "urgent")).fetchAll(db)
            #expect(tagged.map(\.title) == ["Filed"])
            let tags = try Tag.including(all: Tag.Associations.notes).asRequest(of: GRDB.Row.self).fetchAll(db)
            #expect(tags.first?.prefetchedRows["notes"]?.map { $0["title"] as String } == ["Filed"])
        }
    }

    @Test func edgeModelSelfAndOneToOneAssociations() throws {
        let store = try Strata.Store.inMemory(schema: EdgeModel.schema)
        try store.write { db in
            let root = try db.insert(Node())
            _ = try db.insert(Node(parentID: root.id))
            let first = try db.insert(Date(value: "first"))
            let second = try db.insert(Date(value: "second"))
            _ = try db.insert(Date(value: "alone"))
            try db.link(first.id, Date.after, second.id)
            _ = try db.insert(Passport(number: "P1", holderID: second.id))
        }
        try store.read { db in
            #expect(try Node.joining(required: Node.Associations.parent).fetchCount(db) == 1)
            let later = try Date.including(all: Date.Associations.after).asRequest(of: GRDB.Row.self)
                .filter(GRDB.Column("value") == "first").fetchOne(db)
            #expect(later?.prefetchedRows["after"]?.map { $0["value"] as String } == ["second"])
            let earlier = try Date.joining(required: Date.Associations.before).fetchAll(db)
            #expect(earlier.map(\.value) == ["second"])
            let holders = try Date.joining(required: Date.Associations.passport).fetchAll(db)
            #expect(holders.map(\.value) == ["second"])
        }
    }
}
