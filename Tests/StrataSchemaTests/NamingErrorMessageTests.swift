import Testing

@testable import StrataSchema

/// The diagnostics of the options that let a model keep its names (`foreignKey`, named
/// indexes), of index directions, transient attributes and fixed date defaults.
@Suite("Naming error messages")
struct NamingErrorMessageTests {
    static let rows: [BadModel] = [
        BadModel(
            "a to-one key clashing with an attribute suggests foreignKey",
            """
            entities:
              A:
                attributes: { bID: Int }
                relationships:
                  b: { to: B, inverse: as }
              B:
                relationships: { as: { to: A, inverse: b, many: true } }
            """,
            "m.yaml:5:7: error: the to-one relationship 'b' stores its id in 'bID', which clashes with the attribute 'bID' of 'A'; keep both names by choosing the key's name with 'foreignKey:' on 'b' (e.g. foreignKey: bKey)"),
        BadModel(
            "foreignKey clashes and misuse",
            """
            entities:
              A:
                attributes: { name: String }
                relationships:
                  b: { to: B, inverse: as, foreignKey: name }
                  c: { to: B, inverse: cs, foreignKey: bRef }
                  d: { to: B, inverse: ds, foreignKey: bref }
                  e: { to: B, inverse: es, foreignKey: 1x }
                  f: { to: B, inverse: fs, foreignKey: id }
                  g: { to: B, inverse: gs, foreignKey: rowid }
              B:
                relationships:
                  as: { to: A, inverse: b, many: true, foreignKey: x }
                  cs: { to: A, inverse: c, many: true }
                  ds: { to: A, inverse: d, many: true }
                  es: { to: A, inverse: e, many: true }
                  fs: { to: A, inverse: f, many: true }
                  gs: { to: A, inverse: g, many: true }
            """,
            "m.yaml:5:7: error: the to-one relationship 'b' stores its id in 'name', which clashes with the attribute 'name' of 'A'; choose another 'foreignKey'",
            "m.yaml:7:7: error: the foreign key column 'bref' of relationship 'd' of 'A' differs from the foreign key column 'bRef' of relationship 'c' only by case, but SQLite column names ignore case; rename one",
            "m.yaml:8:44: error: foreignKey '1x' of 'A.e' is not a valid identifier; use letters, digits and '_', not starting with a digit",
            "m.yaml:9:7: error: the to-one relationship 'f' stores its id in 'id', which clashes with a generated member; choose another 'foreignKey'",
            "m.yaml:10:7: error: the foreign key column 'rowid' of relationship 'g' of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it",
            "m.yaml:13:56: error: 'foreignKey' applies only to to-one relationships, and 'B.as' is to-many; a to-many has no key column of its own"),
        BadModel(
            "foreignKey on the side of a one-to-one that does not store the key",
            """
            entities:
              A:
                relationships:
                  b: { to: B, inverse: a, required: true }
              B:
                relationships:
                  a: { to: A, inverse: b, foreignKey: aRef }
            """,
            "m.yaml:7:43: error: 'foreignKey' on 'B.a' names nothing: this one-to-one stores its key on the other side, 'A.b'; set 'foreignKey' there"),
        BadModel(
            "index names, columns and directions",
            """
            entities:
              A:
                attributes: { name: String, rank: Int, note: { type: String, transient: true, default: "" } }
                indexes:
                  - { name: byName, columns: [name] }
                  - { name: ByName, columns: [-rank] }
                  - { name: strata_x, columns: [name] }
                  - { name: sqlite_x, columns: [name] }
                  - { name: b, columns: [name] }
                  - { name: "my index", columns: [name] }
                  - { name: x }
                  - { nam: y, columns: [rank] }
                  - [-rank, -rank]
                  - [note]
                  - [-nme]
                unique: [[-name]]
              B:
                attributes: { name: String }
                indexes: [{ name: byName, columns: [name] }]
            """,
            "m.yaml:6:17: error: index name 'ByName' of 'A' is already the name of an index of 'A' ('byName'; SQLite index names ignore case); index names are unique in the whole model",
            "m.yaml:5:17: note: 'byName' is first declared here",
            "m.yaml:7:17: error: index name 'strata_x' of 'A' starts with 'strata_', which the Strata store reserves for its own indexes; rename it",
            "m.yaml:7:36: warning: index [name] of 'A' duplicates the index [name], which is already indexed",
            "m.yaml:8:17: error: index name 'sqlite_x' of 'A' starts with 'sqlite_', which SQLite reserves; rename it",
            "m.yaml:8:36: warning: index [name] of 'A' duplicates the index [name], which is already indexed",
            "m.yaml:9:17: error: index name 'b' of 'A' clashes with the table of entity 'B'; SQLite keeps tables and indexes under one namespace, ignoring case",
            "m.yaml:9:29: warning: index [name] of 'A' duplicates the index [name], which is already indexed",
            "m.yaml:10:17: error: index name 'my index' of 'A' is not a valid name; use ASCII letters, digits and '_', not starting with a digit",
            "m.yaml:10:38: warning: index [name] of 'A' duplicates the index [name], which is already indexed",
            "m.yaml:11:9: error: an index of 'A' needs 'columns', e.g. { name: x, columns: [date] }",
            "m.yaml:12:11: error: unknown key 'nam' in an index of 'A'; did you mean 'name'?",
            "m.yaml:13:17: error: 'rank' is listed twice in the same 'indexes' element",
            "m.yaml:14:10: error: 'note' in 'indexes' of 'A' is a transient attribute, which has no column",
            "m.yaml:15:10: error: unknown attribute or relationship 'nme' in 'indexes' of 'A'; did you mean 'name'?",
            "m.yaml:16:15: error: a unique constraint has no direction; write 'name' without '-' (only 'indexes' columns can be descending)",
            "m.yaml:19:23: error: index name 'byName' of 'B' is already the name of an index of 'A'; index names are unique in the whole model",
            "m.yaml:5:17: note: 'byName' is first declared here"),
        BadModel(
            "transient attributes",
            """
            entities:
              A:
                relationships: { cs: { to: C, many: true, inverse: a } }
                attributes:
                  name: String
                  draft: { type: String, transient: true }
                  tag: { type: String, transient: true, optional: true, indexed: true, renamedFrom: old }
                  code: { type: Int, transient: true, default: 0, unique: true }
                  flag: { type: Bool, transient: yes }
                unique: [[code]]
                fetches:
                  f1: { where: "tag == 'x'", sort: [tag] }
                  f2: { sections: { key: draft } }
              C:
                relationships: { a: { to: A, inverse: cs } }
                attributes: { n: String }
                fetches:
                  f3: { where: "a.tag != nil" }
                  f4: { sort: [a.draft] }
            """,
            "m.yaml:6:7: error: transient attribute 'A.draft' needs a 'default' or 'optional: true': an object read from the store starts with that value",
            "m.yaml:7:7: error: transient attribute 'A.tag' has no column, so it cannot be indexed",
            "m.yaml:7:7: error: transient attribute 'A.tag' has no column to rename; remove 'renamedFrom'",
            "m.yaml:8:7: error: transient attribute 'A.code' has no column, so it cannot be unique",
            "m.yaml:9:38: error: 'transient' must be true or false, not 'yes'",
            "m.yaml:10:15: error: 'code' in 'unique' of 'A' is a transient attribute, which has no column",
            "m.yaml:12:21: error: 'tag' is transient: it is not stored, so a predicate cannot test it",
            "m.yaml:12:41: error: sort key: 'tag' is transient: it is not stored, so it cannot order or group objects",
            "m.yaml:13:30: error: section key: 'draft' is transient: it is not stored, so it cannot order or group objects",
            "m.yaml:18:23: error: 'a.tag' is transient: it is not stored, so a predicate cannot test it",
            "m.yaml:19:22: error: sort key: 'a.draft' is transient: it is not stored, so it cannot order or group objects"),
    ]

    @Test func aNamedIndexOfAnAbstractEntityIsRefused() {
        #expect(diagnostics("""
            entities:
              Base:
                abstract: true
                attributes: { at: Date }
                indexes: [{ name: by_at, columns: [-at] }, [at]]
              A: { extends: Base }
              B: { extends: Base }
            """) == [
            "m.yaml:5:23: error: index name 'by_at' of abstract entity 'Base' would name one index in each entity that extends it; name the index in each of them, or leave it unnamed",
        ])
    }

    @Test func anUnnamedDescendingIndexIsInherited() throws {
        let schema = try #require(load("""
            entities:
              Base:
                abstract: true
                attributes: { at: Date }
                indexes: [[-at]]
              A: { extends: Base }
            """).schema)
        #expect(schema.entity(named: "A")?.indexes == [Index(columns: ["at"], descending: [true])])
    }

    @Test(arguments: rows)
    func messages(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    static func dateModel(_ value: String) -> String {
        "entities:\n  A:\n    attributes:\n      a: { type: Date, default: \(value) }\n"
    }

    /// Fixed date literals at their boundaries: the last value that passes (with its instant
    /// in milliseconds since 1970) and the first that fails (with its message after
    /// "default '<x>' of 'A.a' is not a valid date: ").
    static let validDates: [(text: String, milliseconds: Int64)] = [
        ("2024-01-01", 1_704_067_200_000),
        ("2024-01-01T00:00:00Z", 1_704_067_200_000),
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59.999Z", -1),
        ("2024-02-29", 1_709_164_800_000),
        ("2000-02-29", 951_782_400_000),
        ("2024-04-30", 1_714_435_200_000),
        ("2024-12-31T23:59:59.999Z", 1_735_689_599_999),
        ("2024-12-01", 1_733_011_200_000),
        ("2024-01-01T23:59:59Z", 1_704_153_599_000),
        ("2024-01-01T00:00:00.5Z", 1_704_067_200_500),
        ("2024-01-01T00:00:00.25Z", 1_704_067_200_250),
        ("2024-01-01T02:00:00+02:00", 1_704_067_200_000),
        ("2023-12-31T22:00:00-02:00", 1_704_067_200_000),
        ("2024-01-01T00:00:00+23:59", 1_703_980_860_000),
        ("0001-01-01", -62_135_596_800_000),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    ]

    static let invalidDates: [(text: String, message: String)] = [
        ("2023-02-29", "day 29 is not in 1...28 for 2023-02"),
        ("1900-02-29", "day 29 is not in 1...28 for 1900-02"),
        ("2024-04-31", "day 31 is not in 1...30 for 2024-04"),
        ("2024-13-01", "month 13 is not in 1...12"),
        ("2024-00-01", "month 0 is not in 1...12"),
        ("2024-01-00", "day 0 is not in 1...31 for 2024-01"),
        ("2024-01-01T24:00:00Z", "hour 24 is not in 0...23"),
        ("2024-01-01T00:60:00Z", "minute 60 is not in 0...59"),
        ("2024-01-01T00:00:60Z", "second 60 is not in 0...59 (leap seconds are not supported)"),
        ("2024-01-01T00:00:00.1234Z", "4 fraction digits; Strata stores dates to the millisecond, so write at most 3"),
        ("2024-01-01T00:00:00.Z", "expected digits after '.'; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("2024-01-01T00:00:00+24:00", "expected a UTC offset such as +02:00 (hours 00...23, minutes 00...59)"),
        ("2024-01-01T00:00:00+0200", "expected a UTC offset such as +02:00 (hours 00...23, minutes 00...59)"),
        ("2024-01-01T00:00:00", "the time needs a zone: 'Z' for UTC or an offset such as +02:00"),
        ("2024-01-01 00:00:00Z", "expected 'T' and a time after the date; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("2024-01-01T00:00Z", "expected a time HH:MM:SS after 'T'; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("2024-1-01", "expected ISO 8601; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("2024-01-01Tx", "expected a time HH:MM:SS after 'T'; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("2024-01-01T00:00:00Zx", "expected ISO 8601; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        ("0000-12-31", "year 0000 is not in 0001...9999"),
        ("0001-01-01T00:00:00+00:01", "in UTC it is outside 0001-01-01...9999-12-31"),
        ("9999-12-31T23:59:59.999-00:01", "in UTC it is outside 0001-01-01...9999-12-31"),
    ]

    @Test(arguments: validDates.indices)
    func validDateLiteral(_ index: Int) throws {
        let (text, milliseconds) = Self.validDates[index]
        let result = load(Self.dateModel(text))
        #expect(result.diagnostics.map(\.description) == [], "\(text)")
        let schema = try #require(result.schema)
        #expect(schema.entities[0].attributes[0].defaultValue == .date(milliseconds: milliseconds), "\(text)")
        // The generator's date text round-trips the parser, in ISO and storage form.
        let iso = DefaultValue.dateText(milliseconds: milliseconds, storage: false)
        #expect(try DefaultValueParser.parseDate(iso).get() == milliseconds)
        let stored = DefaultValue.dateText(milliseconds: milliseconds, storage: true)
        #expect(stored.replacingOccurrences(of: " ", with: "T") + "Z" == iso)
    }

    @Test(arguments: invalidDates.indices)
    func invalidDateLiteral(_ index: Int) {
        let (text, message) = Self.invalidDates[index]
        #expect(
            diagnostics(Self.dateModel(text))
                == ["m.yaml:4:33: error: default '\(text)' of 'A.a' is not a valid date: \(message)"], "\(text)")
    }

    @Test func indexesDecodeDirectionsAndNames() throws {
        let schema = try #require(load("""
            entities:
              A:
                attributes: { a: Int, b: Int }
                indexes: [[a, -b], [+a], { name: byB, columns: [-b, a] }]
            """).schema)
        #expect(schema.entities[0].indexes == [
            Index(columns: ["a", "b"], descending: [false, true]),
            Index(columns: ["a"]),
            Index(columns: ["b", "a"], descending: [true, false], name: "byB"),
        ])
    }
}
