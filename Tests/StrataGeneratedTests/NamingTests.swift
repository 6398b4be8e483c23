import Foundation
import GRDB
import Strata
import Testing

// The Naming model (Resources/Naming.yaml) compiled and used on real store files: a to-one
// whose key is named with `foreignKey` beside an attribute `authorID`, named and descending
// indexes, transient attributes, fixed dates as defaults. Each feature through the typed API,
// raw SQL through the writer, and a migration from a file the older model wrote.

private func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("strata-naming-\(UUID().uuidString).sqlite").path
}

/// The Naming model as it was before it used the new options: `Post.author` stored in
/// `authorID` (so the model had no attribute `authorID`), `Author.profile` in `profileID`,
/// one plain index, and no named or descending index. (`Profile.bio` had no default, so
/// that no entity of it equals one of the current model: the store finds a generated
/// entity's model by its descriptor.)
private let olderNamingSchema: SchemaDescriptor = {
    var schema = NamingModel.schema
    for (e, entity) in schema.entities.enumerated() {
        if entity.name == "Profile" { schema.entities[e].attributes[0].defaultValue = nil }
        for (r, relationship) in entity.relationships.enumerated() {
            if case .foreignKey = relationship.storage {
                schema.entities[e].relationships[r].storage = .foreignKey(column: relationship.name + "ID")
            }
        }
        if entity.name == "Post" {
            schema.entities[e].attributes.removeAll { $0.name == "authorID" }
            schema.entities[e].indexes = [["authorID", "publishedAt"]]
        }
    }
    return schema
}()

/// The `sql` of each index of `table` that its name passes `filter`, by name.
private func indexSQL(_ db: Database, table: String) throws -> [String: String] {
    let rows = try Row.fetchAll(
        db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
        arguments: [table])
    return Dictionary(uniqueKeysWithValues: rows.map { ($0["name"], $0["sql"]) })
}

private func columns(_ db: Database, table: String) throws -> [String] {
    try db.columns(in: table).map(\.name)
}

@Suite struct ForeignKeyNameTests {
    @Test func theKeyHasTheChosenNameBesideTheAttributeOfTheDefaultName() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        try store.write { db in
            #expect(try columns(db, table: "Post") == ["id", "title", "authorID", "rank", "publishedAt", "editedAt", "day", "authorRef", "authorPosition"])
            #expect(try columns(db, table: "Author") == ["id", "name", "profileRef"])
            let ada = try db.insert(Author(name: "Ada"))
            let post = try db.insert(Post(title: "Notes", authorID: "srv-42", authorRef: ada.id))
            let read = try #require(try db.fetchOne(Post.self, id: post.id))
            #expect(read.authorID == "srv-42")
            #expect(read.authorRef == ada.id)
            // Predicates and relationships go through the chosen column.
            #expect(try db.fetchAll(Post.Fetches.recent(name: "Ada")).map(\.id) == [post.id])
            #expect(try db.fetchAll(Post.self, where: Post.authorRef == ada.id).map(\.id) == [post.id])
            #expect(try db.fetchAll(Post.self, where: Post.authorID == "srv-42").map(\.id) == [post.id])
            #expect(try db.fetchOne(Post.author, of: post.id)?.name == "Ada")
            #expect(try db.fetchAll(Author.posts, of: ada.id).map(\.id) == [post.id])
            // GRDB's associations use it too.
            let joined = try Post.including(required: Post.Associations.author).fetchCount(db)
            #expect(joined == 1)
        }
    }

    @Test func rawSQLWritesTheChosenColumnAndDeleteRulesFollowIt() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO Author (id, name) VALUES (1, 'Ada')")
            try db.execute(sql: "INSERT INTO Post (id, title, authorID, authorRef) VALUES (10, 'a', 'srv', 1)")
            // The foreign key is enforced on the chosen column.
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO Post (id, title, authorRef) VALUES (11, 'b', 99)")
            }
            // `posts` cascades: deleting the author deletes the post through `authorRef`.
            try db.execute(sql: "DELETE FROM Author WHERE id = 1")
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Post") == 0)
        }
    }

    @Test func anOrderedRelationshipKeepsItsOrderThroughTheChosenKey() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        let ada = try store.write { db in try db.insert(Author(name: "Ada")) }
        try store.writer.write { db in
            // Raw SQL that sets only the chosen key: the triggers give each post the last place.
            try db.execute(sql: "INSERT INTO Post (id, title, authorRef) VALUES (1, 'a', ?), (2, 'b', ?), (3, 'c', ?)",
                           arguments: [ada.id, ada.id, ada.id])
        }
        #expect(try store.fetchAll(Post.Fetches.inAuthorOrder).map(\.title) == ["a", "b", "c"])
        try store.write { db in
            try db.move(Post.ID(rawValue: 3), in: Author.posts, of: ada.id, to: 0)
            // Moving a post to another author through the key alone puts it last there.
            let bob = try db.insert(Author(name: "Bob"))
            try db.execute(sql: "INSERT INTO Post (id, title, authorRef) VALUES (4, 'd', ?)", arguments: [bob.id])
            try db.execute(sql: "UPDATE Post SET authorRef = ? WHERE id = 1", arguments: [bob.id])
        }
        #expect(try store.fetchAll(Post.Fetches.inAuthorOrder).map(\.title) == ["c", "b", "d", "a"])
    }

    @Test func oneToOneKeyNamedOnTheSideThatStoresIt() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        try store.write { db in
            let profile = try db.insert(Profile(bio: "hi"))
            let ada = try db.insert(Author(name: "Ada", profileRef: profile.id))
            #expect(try db.fetchOne(Profile.author, of: profile.id)?.id == ada.id)
            #expect(try db.fetchAll(Author.self, where: Author.profile.bio == "hi").map(\.id) == [ada.id])
        }
    }

    @Test func aFileWhoseKeyHadTheDefaultNameKeepsItsLinksUnderTheNewName() throws {
        let path = temporaryStorePath()
        do {
            let old = try Strata.Store(schema: olderNamingSchema, path: path)
            try old.writer.write { db in
                try db.execute(sql: "INSERT INTO Profile (id, bio) VALUES (5, 'p')")
                try db.execute(sql: "INSERT INTO Author (id, name, profileID) VALUES (1, 'Ada', 5)")
                try db.execute(sql: "INSERT INTO Post (id, title, authorID) VALUES (10, 'a', 1), (11, 'b', NULL), (12, 'c', 1)")
                try db.execute(sql: "UPDATE Post SET authorPosition = -1 WHERE id = 12")
            }
            try old.close()
        }
        let store = try Strata.Store(schema: NamingModel.schema, path: path)
        try store.write { db in
            #expect(try columns(db, table: "Post") == ["id", "title", "authorID", "rank", "publishedAt", "editedAt", "day", "authorRef", "authorPosition"])
            let posts = try db.fetchAll(Post.self)
            #expect(posts.map(\.authorRef) == [Author.ID(rawValue: 1), nil, Author.ID(rawValue: 1)])
            // The new attribute of the old key's name starts empty: it is not the old key.
            #expect(posts.map(\.authorID) == [nil, nil, nil])
            // The order of the ordered relationship is kept with its key.
            #expect(try db.fetchAll(Author.posts, of: Author.ID(rawValue: 1), sortedBy: [Post.authorPosition.ascending]).map(\.title) == ["c", "a"])
            #expect(try db.fetchAll(Author.self).map(\.profileRef) == [Profile.ID(rawValue: 5)])
            #expect(try db.fetchAll(Post.Fetches.recent(name: "Ada")).map(\.title) == ["a", "c"])
        }
        try store.close()
    }
}

@Suite struct IndexDetailTests {
    @Test func namedAndDescendingIndexesAreCreatedAsDeclared() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        let indexes = try store.read { db in try indexSQL(db, table: "Post") }
        #expect(indexes["strata_index_Post_authorRef_publishedAt_desc"]
            == "CREATE INDEX \"strata_index_Post_authorRef_publishedAt_desc\" ON \"Post\"(\"authorRef\", \"publishedAt\" DESC)")
        #expect(indexes["post_by_rank"] == "CREATE INDEX \"post_by_rank\" ON \"Post\"(\"rank\" DESC, \"title\")")
        // SQLite uses the descending index for the order it was made for.
        let plan = try store.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT * FROM Post ORDER BY rank DESC, title")
                .map { $0["detail"] as String }.joined(separator: "; ")
        }
        #expect(plan.contains("post_by_rank"), "\(plan)")
    }

    @Test func migrationReplacesAnIndexWhoseDirectionOrNameChanged() throws {
        let path = temporaryStorePath()
        do {
            let old = try Strata.Store(schema: olderNamingSchema, path: path)
            try old.writer.write { db in try db.execute(sql: "INSERT INTO Post (title) VALUES ('a')") }
            #expect(try old.read { db in try indexSQL(db, table: "Post") }.keys.sorted()
                == ["strata_index_Post_authorID", "strata_index_Post_authorID_authorPosition", "strata_index_Post_authorID_publishedAt"])
            try old.close()
        }
        do {
            // Added: the named index and the descending one; the old plain one is gone.
            let store = try Strata.Store(schema: NamingModel.schema, path: path)
            #expect(try store.read { db in try indexSQL(db, table: "Post") }.keys.sorted()
                == ["post_by_rank", "strata_index_Post_authorRef", "strata_index_Post_authorRef_authorPosition", "strata_index_Post_authorRef_publishedAt_desc"])
            // An index the app makes itself by raw SQL is not the store's: index changes
            // leave it alone (a migration that rebuilds the table drops it with the table).
            try store.writer.write { db in try db.execute(sql: "CREATE INDEX my_own ON Post(title)") }
            try store.close()
        }
        // Renamed, and one column's direction changed.
        var renamed = NamingModel.schema
        let post = renamed.entities.firstIndex { $0.name == "Post" }!
        renamed.entities[post].indexes = [
            .init(["authorRef", "publishedAt"]), .init(["rank", "title"], name: "posts_ranked"),
        ]
        do {
            let store = try Strata.Store(schema: renamed, path: path)
            let indexes = try store.read { db in try indexSQL(db, table: "Post") }
            #expect(indexes.keys.sorted()
                == ["my_own", "posts_ranked", "strata_index_Post_authorRef", "strata_index_Post_authorRef_authorPosition", "strata_index_Post_authorRef_publishedAt"])
            #expect(indexes["posts_ranked"] == "CREATE INDEX \"posts_ranked\" ON \"Post\"(\"rank\", \"title\")")
            try store.close()
        }
        // The same name, another direction: the index is replaced.
        renamed.entities[post].indexes = [.init([.descending("rank")], name: "posts_ranked")]
        do {
            let store = try Strata.Store(schema: renamed, path: path)
            let indexes = try store.read { db in try indexSQL(db, table: "Post") }
            #expect(indexes["posts_ranked"] == "CREATE INDEX \"posts_ranked\" ON \"Post\"(\"rank\" DESC)")
            try store.close()
        }
        // Removed.
        renamed.entities[post].indexes = []
        let store = try Strata.Store(schema: renamed, path: path)
        #expect(try store.read { db in try indexSQL(db, table: "Post") }.keys.sorted()
            == ["my_own", "strata_index_Post_authorRef", "strata_index_Post_authorRef_authorPosition"])
        #expect(try store.fetchAll(Post.self).map(\.title) == ["a"])
        try store.close()
    }
}

@Suite struct TransientAttributeTests {
    @Test func transientAttributesAreNotStoredAndReadAsTheirDefault() throws {
        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        try store.write { db in
            var post = try db.insert(Post(title: "a", draft: "unsaved text", isSelected: true))
            // `insert` returns the object as a later fetch reads it: transient attributes
            // start from their defaults, like every read.
            #expect(post.draft == "")
            #expect(post.isSelected == nil)
            let read = try #require(try db.fetchOne(Post.self, id: post.id))
            #expect(read == post)
            // Changing only a transient attribute writes nothing.
            post.draft = "more"
            #expect(try db.update(post) == false)
        }
        let stored = try store.read { db in try columns(db, table: "Post") }
        #expect(!stored.contains("draft"))
        #expect(!stored.contains("isSelected"))
        // Raw SQL cannot name it.
        #expect(throws: DatabaseError.self) {
            try store.writer.write { db in try db.execute(sql: "UPDATE Post SET draft = 'x'") }
        }
    }
}

extension TransientAttributeTests {
    /// ModelLanguage.md: a transient attribute is part of the value — `==` and `Codable`
    /// (JSON, with its default when missing) include it — though not of the row.
    @Test func transientAttributesAreInTheValueAndItsJSON() throws {
        let post = Post(title: "a", draft: "unsaved text", isSelected: true)
        #expect(post != Post(title: "a"))
        let json = try JSONEncoder().encode(post)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["draft"] as? String == "unsaved text")
        #expect(object["isSelected"] as? Bool == true)
        #expect(try JSONDecoder().decode(Post.self, from: json) == post)
        // Missing from the JSON: the default ("" and nil), as the initializer gives them.
        let bare = try JSONDecoder().decode(Post.self, from: Data(#"{"title": "a"}"#.utf8))
        #expect(bare.draft == "" && bare.isSelected == nil && bare == Post(title: "a"))
    }

    /// `Post` of the Naming model with `draft` stored: a column `draft TEXT NOT NULL DEFAULT ''`.
    static var schemaWithStoredDraft: SchemaDescriptor {
        var schema = NamingModel.schema
        let post = schema.entities.firstIndex { $0.name == "Post" }!
        schema.entities[post].attributes.append(.init(name: "draft", type: .string, defaultValue: .value("".databaseValue)))
        return schema
    }

    @Test func makingAStoredAttributeTransientRemovesItsColumnOnlyWithDataLossAllowed() throws {
        let path = temporaryStorePath()
        do {
            let old = try Strata.Store(schema: Self.schemaWithStoredDraft, path: path)
            try old.writer.write { db in try db.execute(sql: "INSERT INTO Post (title, draft) VALUES ('a', 'kept?')") }
            try old.close()
        }
        #expect(throws: MigrationError.destructiveChanges([.removedAttribute(entity: "Post", attribute: "draft")])) {
            _ = try Strata.Store(schema: NamingModel.schema, path: path)
        }
        let store = try Strata.Store(schema: NamingModel.schema, path: path, options: .init(allowDataLoss: true))
        #expect(try store.read { db in try columns(db, table: "Post") }.contains("draft") == false)
        #expect(try store.fetchAll(Post.self).map(\.draft) == [""])
        try store.close()
    }

    @Test func makingATransientAttributeStoredAddsItsColumn() throws {
        let path = temporaryStorePath()
        do {
            let old = try Strata.Store(schema: NamingModel.schema, path: path)
            _ = try old.write { db in try db.insert(Post(title: "a", draft: "lost")) }
            try old.close()
        }
        let store = try Strata.Store(schema: Self.schemaWithStoredDraft, path: path)
        #expect(try store.read { db in try String.fetchAll(db, sql: "SELECT draft FROM Post") } == [""])
        try store.close()
    }
}

@Suite struct FixedDateDefaultTests {
    /// 2024-01-01T00:00:00Z.
    static let newYear = Foundation.Date(timeIntervalSince1970: 1_704_067_200)
    /// 2024-02-29T23:59:59.999+02:00, the last millisecond of a leap day in UTC+2.
    static let leapDayEnd = Foundation.Date(timeIntervalSince1970: 1_709_243_999.999)

    @Test func theInitializerAndTheColumnDefaultAreTheSameInstant() throws {
        let post = Post(title: "a")
        #expect(post.publishedAt == Self.newYear)
        #expect(abs(post.editedAt.timeIntervalSince(Self.leapDayEnd)) < 0.000_5)
        #expect(post.day == Foundation.Date(timeIntervalSince1970: 1_709_251_200))

        let store = try Strata.Store.inMemory(schema: NamingModel.schema)
        let typed = try store.write { db in try db.insert(post) }
        try store.writer.write { db in
            // Raw SQL that leaves the columns out gets the same values from their DEFAULT.
            try db.execute(sql: "INSERT INTO Post (title) VALUES ('raw')")
            let stored = try Row.fetchAll(db, sql: "SELECT publishedAt, editedAt, day FROM Post ORDER BY id")
            for row in stored {
                #expect(row["publishedAt"] as String == "2024-01-01 00:00:00.000")
                #expect(row["editedAt"] as String == "2024-02-29 21:59:59.999")
                #expect(row["day"] as String == "2024-03-01 00:00:00.000")
            }
        }
        let read = try store.fetchAll(Post.self)
        #expect(read.count == 2)
        #expect(read[0].publishedAt == read[1].publishedAt)
        #expect(read[0].editedAt == read[1].editedAt)
        #expect(read[0].day == read[1].day)
        #expect(read[0].id == typed.id)
        // The same value, not just the same instant to the millisecond: the initializer's
        // default, the value insert returns and the value the column's default reads back.
        #expect(read[1].editedAt == post.editedAt && typed.editedAt == post.editedAt)
        #expect(read[1].publishedAt == post.publishedAt && read[1].day == post.day)
        #expect(Post(title: "b") == Post(title: "b"))
    }

    @Test func aFileWithoutTheDefaultsGetsThemForNewRowsOnly() throws {
        // The older file's columns had no fixed defaults: a new required attribute with one
        // is a lightweight change, and existing rows take the default.
        var older = olderNamingSchema
        let post = older.entities.firstIndex { $0.name == "Post" }!
        older.entities[post].attributes.removeAll { $0.name == "publishedAt" }
        older.entities[post].indexes = []
        let path = temporaryStorePath()
        do {
            let old = try Strata.Store(schema: older, path: path)
            try old.writer.write { db in try db.execute(sql: "INSERT INTO Post (title) VALUES ('old')") }
            try old.close()
        }
        let store = try Strata.Store(schema: NamingModel.schema, path: path)
        #expect(try store.fetchAll(Post.self).map(\.publishedAt) == [Self.newYear])
        try store.close()
    }
}
