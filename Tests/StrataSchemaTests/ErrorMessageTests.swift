import Testing

@testable import StrataSchema

/// One bad model and the exact diagnostics it produces, in the manner of
/// swift-argument-parser's ErrorMessageTests.
struct BadModel: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    var expected: [String]

    init(_ name: String, _ yaml: String, _ expected: String...) {
        self.name = name
        self.yaml = yaml
        self.expected = expected
    }

    var testDescription: String { name }
}

/// A two-entity model with a relationship pair, for rules about relationships.
func pair(_ aRelationship: String, _ bRelationship: String, aExtra: String = "", bExtra: String = "") -> String {
    """
    entities:
      A:
        attributes: { name: String }
        relationships:
          \(aRelationship)
    \(aExtra)
      B:
        attributes: { title: String }
        relationships:
          \(bRelationship)
    \(bExtra)
    """
}

@Suite("Error messages")
struct ErrorMessageTests {
    // MARK: YAML

    static let yamlErrors: [BadModel] = [
        BadModel(
            "unclosed flow sequence", "entities:\n  A: [a, b\n",
            "m.yaml:3:1: error: YAML syntax: while parsing a flow sequence: did not find expected ',' or ']'",
            "m.yaml:2:6: note: the flow sequence starts here"),
        BadModel(
            "tab indentation", "entities:\n\tA: {}\n",
            "m.yaml:2:1: error: YAML syntax: while scanning for the next token: found character that cannot start any token"),
        BadModel(
            "duplicate key", "entities:\n  A: {}\n  A: {}\n",
            "m.yaml:3:3: error: duplicate key 'A'",
            "m.yaml:2:3: note: 'A' is first defined here"),
        BadModel(
            "unknown alias", "entities:\n  A: *nothing\n",
            "m.yaml:2:6: error: unknown alias '*nothing'"),
        BadModel(
            "unknown escape in a double-quoted scalar", "entities:\n  A: { doc: \"a\\qb\" }\n",
            "m.yaml:2:15: error: YAML syntax: while parsing a quoted scalar: found unknown escape character",
            "m.yaml:2:13: note: the quoted scalar starts here"),
        BadModel(
            "block sequence where a value is expected", "a: b\n c\nd: - x\n",
            "m.yaml:3:4: error: YAML syntax: block sequence entries are not allowed in this context"),
        BadModel("empty file", "", "m.yaml:1:1: error: the model file is empty; expected a mapping with 'entities'"),
        BadModel(
            "only comments", "# nothing here\n",
            "m.yaml:1:1: error: the model file is empty; expected a mapping with 'entities'"),
        BadModel(
            "two documents", "entities: {}\n---\nentities: {}\n",
            "m.yaml:2:1: error: a model file holds one YAML document; move the second document into its own file"),
        BadModel(
            "root is a sequence", "- a\n",
            "m.yaml:1:1: error: a model file must be a mapping with 'version', 'enums' and 'entities', not a sequence"),
        BadModel(
            "unterminated quote", "entities:\n  A:\n    doc: \"unterminated\n    attributes: { a: Int }\n",
            "m.yaml:5:1: error: YAML syntax: while scanning a quoted scalar: found unexpected end of stream",
            "m.yaml:3:10: note: the quoted scalar starts here"),
        BadModel(
            "unclosed flow mapping", "entities:\n  A: { attributes: { a: Int }\n  B: {}\n",
            "m.yaml:3:3: error: YAML syntax: while parsing a flow mapping: did not find expected ',' or '}'",
            "m.yaml:2:6: note: the flow mapping starts here"),
        BadModel(
            "bad indentation", "entities:\n  A:\n    attributes:\n      a: Int\n     b: Int\n",
            "m.yaml:5:6: error: YAML syntax: while parsing a block mapping: did not find expected key (check the indentation: keys of one mapping line up)",
            "m.yaml:3:5: note: the block mapping starts here"),
        BadModel(
            "mapping values are not allowed here", "entities:\n  A: doc: x\n",
            "m.yaml:2:9: error: YAML syntax: mapping values are not allowed in this context (a value that contains ': ' must be quoted)"),
        BadModel(
            "invalid anchor", "entities:\n  A: &\n",
            "m.yaml:2:7: error: YAML syntax: while scanning an anchor: did not find expected alphabetic or numeric character",
            "m.yaml:2:6: note: the anchor starts here"),
        BadModel(
            "unknown tag on a scalar", "entities:\n  A: { doc: !custom x }\n",
            "m.yaml:2:13: error: unknown tag '!custom'; model files use no custom tags, remove it"),
        BadModel(
            "unknown tag on a mapping", "entities: !thing\n  A: {}\n",
            "m.yaml:1:11: error: unknown tag '!thing'; model files use no custom tags, remove it"),
        BadModel(
            "merge key", "base: &b { a: Int }\nentities:\n  A:\n    attributes:\n      <<: *b\n      c: Int\n",
            "m.yaml:5:7: error: merge keys ('<<') are not supported; repeat the keys, or share a whole node with an anchor and alias"),
    ]

    @Test(arguments: yamlErrors)
    func yaml(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    @Test func invalidUTF8() {
        let bytes = Array("entities:\n  Ab".utf8) + [0xFF, 0xFE] + Array(": {}\n".utf8)
        let result = SchemaPipeline.load(files: [ModelFile(path: "m.yaml", contents: bytes)])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "m.yaml:2:5: error: the model file is not valid UTF-8 (byte 0xFF); save it as UTF-8"
        ])
    }

    // MARK: Structure

    static let structureErrors: [BadModel] = [
        BadModel(
            "unsupported version", "version: 2\nentities: {}\n",
            "m.yaml:1:10: error: unsupported schema version '2'; this version of Strata reads version 1"),
        BadModel(
            "unknown top-level key", "entitys: {}\n",
            "m.yaml:1:1: error: unknown key 'entitys' in the model file; did you mean 'entities'?"),
        BadModel(
            "unknown entity key", "entities:\n  A:\n    atributes: { name: String }\n",
            "m.yaml:3:5: error: unknown key 'atributes' in entity 'A'; did you mean 'attributes'?"),
        BadModel(
            "unknown key without suggestion", "entities:\n  A:\n    colour: red\n",
            "m.yaml:3:5: error: unknown key 'colour' in entity 'A'; expected one of: doc, abstract, extends, primaryKey, attributes, relationships, unique, indexes, fetches, renamedFrom, access"),
        BadModel(
            "unknown attribute key", "entities:\n  A:\n    attributes:\n      a: { type: Int, optinal: true }\n",
            "m.yaml:4:23: error: unknown key 'optinal' in attribute 'A.a'; did you mean 'optional'?"),
        BadModel(
            "optional written as String?", "entities:\n  A:\n    attributes: { a: String? }\n",
            "m.yaml:3:22: error: 'String?' is not a type; write { type: String, optional: true } for an optional attribute"),
        BadModel(
            "attribute without type", "entities:\n  A:\n    attributes: { a: { optional: true } }\n",
            "m.yaml:3:22: error: attribute 'A.a' needs a 'type'"),
        BadModel(
            "option not a bool", "entities:\n  A:\n    attributes: { a: { type: Int, optional: yes } }\n",
            "m.yaml:3:45: error: 'optional' must be true or false, not 'yes'"),
        BadModel(
            "relationship without inverse", pair("b: { to: B }", "a: { to: A, inverse: b }"),
            "m.yaml:5:7: error: relationship 'A.b' needs an 'inverse': the relationship of 'B' that points back"),
        BadModel(
            "unknown relationship key", pair("b: { to: B, invers: a }", "a: { to: A, inverse: b }"),
            "m.yaml:5:19: error: unknown key 'invers' in relationship 'A.b'; did you mean 'inverse'?"),
        BadModel(
            "relationship without destination", pair("b: { inverse: a }", "a: { to: A, inverse: b }"),
            "m.yaml:5:10: error: relationship 'A.b' needs 'to', its destination entity"),
        BadModel(
            "unknown delete rule", pair("b: { to: B, inverse: a, deleteRule: cascde }", "a: { to: A, inverse: b }"),
            "m.yaml:5:43: error: unknown delete rule 'cascde'; expected nullify, cascade, deny or noAction; did you mean 'cascade'?"),
        BadModel(
            "enum not a list", "enums:\n  P: low\n",
            "m.yaml:2:6: error: enum 'P' must be a list of case names, e.g. [low, normal, high]"),
        BadModel(
            "unique element not a list", "entities:\n  A:\n    attributes: { a: Int }\n    unique: [a]\n",
            "m.yaml:4:14: error: each element of 'unique' is a list of names, e.g. [[a]]"),
        BadModel(
            "index element that is not a name", "entities:\n  A:\n    attributes: { a: Int }\n    indexes: [3]\n",
            "m.yaml:4:15: error: each element of 'indexes' is a list of names, e.g. [[name]], or a mapping { name: …, columns: […] }"),
        BadModel(
            "sections with key and entity",
            "entities:\n  A:\n    attributes: { a: Int }\n    fetches:\n      f: { sections: { key: a, entity: a } }\n",
            "m.yaml:5:22: error: 'sections' of 'A.f' has both 'key' and 'entity'; use one"),
        BadModel(
            "unknown sections key",
            "entities:\n  A:\n    attributes: { a: Int }\n    fetches:\n      f: { sections: { key: a, by: firstLeter } }\n",
            "m.yaml:5:36: error: unknown value 'firstLeter' for 'by'; the only grouping is 'firstLetter'"),
        BadModel(
            "version as a string", "version: \"1\"\nentities: {}\n",
            "m.yaml:1:10: error: 'version' must be the integer 1, not the string \"1\"; remove the quotes"),
    ]

    @Test(arguments: structureErrors)
    func structure(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    // MARK: Names

    static let nameErrors: [BadModel] = [
        BadModel(
            "attribute name not an identifier", "entities:\n  A:\n    attributes: { first-name: String }\n",
            "m.yaml:3:19: error: attribute name 'first-name' is not a valid identifier; use letters, digits and '_', not starting with a digit"),
        BadModel(
            "entity name starting with a digit", "entities:\n  1A: {}\n",
            "m.yaml:2:3: error: entity name '1A' is not a valid identifier; use letters, digits and '_', not starting with a digit"),
        BadModel(
            "enum case not an identifier", "enums:\n  P: [low, \"very high\"]\n",
            "m.yaml:2:12: error: enum case name 'very high' is not a valid identifier; use letters, digits and '_', not starting with a digit"),
        BadModel(
            "entity named Strata", "entities:\n  Strata: {}\n",
            "m.yaml:2:3: error: entity name 'Strata' clashes with the Strata runtime module; rename it"),
        BadModel(
            "entity named like a generated type", "entities:\n  Root: {}\n",
            "m.yaml:2:3: error: entity name 'Root' clashes with a name the generated code uses; rename it"),
        BadModel(
            "enum named like a module", "enums:\n  Foundation: [a]\n",
            "m.yaml:2:3: error: enum name 'Foundation' clashes with a name the generated code uses; rename it"),
        BadModel(
            "entity named like the model", "entities:\n  StrataModel: {}\n",
            "m.yaml:2:3: error: entity name 'StrataModel' clashes with the model's namespace; rename it"),
        BadModel(
            "enum named like a built-in type", "enums:\n  Date: [a]\n",
            "m.yaml:2:3: error: enum name 'Date' is a built-in attribute type; rename the enum"),
        BadModel(
            "enum and entity with one name", "enums:\n  P: [a]\nentities:\n  P: {}\n",
            "m.yaml:4:3: error: 'P' is declared both as an enum and as an entity",
            "m.yaml:2:3: note: 'P' is first declared here"),
        BadModel(
            "duplicate enum case", "enums:\n  P: [a, b, a]\n",
            "m.yaml:2:13: error: duplicate case 'a' in enum 'P'",
            "m.yaml:2:7: note: 'a' is first listed here"),
        BadModel(
            "attribute named id", "entities:\n  A:\n    attributes: { id: Int }\n",
            "m.yaml:3:19: error: attribute name 'id' clashes with the primary key 'A.id'; keep the name by choosing the key's name with 'primaryKey:' on 'A' or at the top of its file (e.g. primaryKey: objectID)"),
        BadModel(
            "attribute named like a renamed primary key",
            "entities:\n  A:\n    primaryKey: key\n    attributes: { id: Int, key: Int }\n",
            "m.yaml:4:28: error: attribute name 'key' clashes with the primary key 'A.key' ('primaryKey: key'); choose another key name or rename the attribute"),
        BadModel(
            "attribute named objectID", "entities:\n  A:\n    attributes: { objectID: Int }\n",
            "m.yaml:3:19: error: attribute name 'objectID' clashes with the generated member 'A.objectID'; rename it"),
        BadModel(
            "attribute named schemaDescriptor", "entities:\n  A:\n    attributes: { schemaDescriptor: Int }\n",
            "m.yaml:3:19: error: attribute name 'schemaDescriptor' clashes with the generated member 'A.schemaDescriptor'; rename it"),
        BadModel(
            "primary key not an identifier", "primaryKey: 2id\nentities:\n  A: { attributes: { id: Int } }\n",
            "m.yaml:1:13: error: primary key name '2id' is not a valid identifier; use letters, digits and '_', not starting with a digit"),
        BadModel(
            "primary key named like a generated member", "entities:\n  A:\n    primaryKey: entityDescriptor\n",
            "m.yaml:3:17: error: primary key name 'entityDescriptor' clashes with the generated member 'A.entityDescriptor'; choose another"),
        BadModel(
            "primary key named like the rowid", "entities:\n  A:\n    primaryKey: ROWID\n",
            "m.yaml:3:17: error: the primary key of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); choose another name"),
        BadModel(
            "primary key differs from a column by case",
            "entities:\n  A:\n    primaryKey: key\n    attributes: { Key: Int }\n",
            "m.yaml:4:19: error: the attribute 'Key' of 'A' differs from the primary key column 'key' only by case, but SQLite column names ignore case; rename one"),
        BadModel(
            "primary key on an abstract entity",
            "entities:\n  A:\n    abstract: true\n    primaryKey: key\n    attributes: { n: Int }\n",
            "m.yaml:4:5: error: abstract entity 'A' has no table and so no primary key; set 'primaryKey:' on the entities that extend it, or at the top of the file"),
        BadModel(
            "attribute named like a ToOne member", "entities:\n  A:\n    attributes: { path: String }\n",
            "m.yaml:3:19: error: attribute name 'path' clashes with the generated member 'A.path'; rename it"),
        BadModel(
            "attribute and relationship with one name",
            pair("name: { to: B, inverse: a }", "a: { to: A, inverse: name }"),
            "m.yaml:5:7: error: relationship 'name' of 'A' has the same name as an attribute",
            "m.yaml:3:19: note: 'name' is first declared here"),
        BadModel(
            "to-one storage clashes with an attribute",
            "entities:\n  A:\n    attributes: { bID: Int }\n    relationships:\n      b: { to: B, inverse: a }\n  B:\n    relationships: { a: { to: A, inverse: b, many: true } }\n",
            "m.yaml:5:7: error: the to-one relationship 'b' stores its id in 'bID', which clashes with the attribute 'bID' of 'A'; keep both names by choosing the key's name with 'foreignKey:' on 'b' (e.g. foreignKey: bKey)"),
        BadModel(
            "attributes named like synthesized members",
            "entities:\n  A:\n    attributes: { CodingKeys: Int, Columns: Int, hashValue: Int, DatabaseComponents: Int }\n",
            "m.yaml:3:19: error: attribute name 'CodingKeys' clashes with the generated member 'A.CodingKeys'; rename it",
            "m.yaml:3:36: error: attribute name 'Columns' clashes with the generated member 'A.Columns'; rename it",
            "m.yaml:3:50: error: attribute name 'hashValue' clashes with the generated member 'A.hashValue'; rename it",
            "m.yaml:3:66: error: attribute name 'DatabaseComponents' clashes with the generated member 'A.DatabaseComponents'; rename it"),
        BadModel(
            "enum cases named like members of every enum", "enums:\n  P: [low, Type, self, init, Protocol, RawValue, allCases]\n",
            "m.yaml:2:12: error: enum case name 'Type' clashes with the member 'P.Type' that Swift or the enum's conformances define; rename it",
            "m.yaml:2:18: error: enum case name 'self' clashes with the member 'P.self' that Swift or the enum's conformances define; rename it",
            "m.yaml:2:24: error: enum case name 'init' clashes with the member 'P.init' that Swift or the enum's conformances define; rename it",
            "m.yaml:2:30: error: enum case name 'Protocol' clashes with the member 'P.Protocol' that Swift or the enum's conformances define; rename it",
            "m.yaml:2:40: error: enum case name 'RawValue' clashes with the member 'P.RawValue' that Swift or the enum's conformances define; rename it",
            "m.yaml:2:50: error: enum case name 'allCases' clashes with the member 'P.allCases' that Swift or the enum's conformances define; rename it"),
        BadModel(
            "fetches named like members of every type",
            "entities:\n  A:\n    attributes: { a: Int }\n    fetches: { Type: { sort: [a] }, self: {} }\n",
            "m.yaml:4:16: error: fetch name 'Type' clashes with the member 'A.Fetches.Type' that Swift defines for every type; rename it",
            "m.yaml:4:37: error: fetch name 'self' clashes with the member 'A.Fetches.self' that Swift defines for every type; rename it"),
        BadModel(
            "attributes that differ only by case", "entities:\n  A:\n    attributes: { name: String, Name: String }\n",
            "m.yaml:3:33: error: the attribute 'Name' of 'A' differs from the attribute 'name' only by case, but SQLite column names ignore case; rename one"),
        BadModel(
            "attribute and foreign key column that differ only by case",
            "entities:\n  A:\n    attributes: { bid: Int }\n    relationships: { b: { to: B, inverse: as } }\n  B:\n    relationships: { as: { to: A, many: true, inverse: b } }\n",
            "m.yaml:4:22: error: the foreign key column 'bID' of relationship 'b' of 'A' differs from the attribute 'bid' only by case, but SQLite column names ignore case; rename one"),
        BadModel(
            "attribute named like the primary key in another case", "entities:\n  A:\n    attributes: { Id: Int }\n",
            "m.yaml:3:19: error: the attribute 'Id' of 'A' differs from the primary key column 'id' only by case, but SQLite column names ignore case; rename one"),
        BadModel(
            "entities that differ only by case", "entities:\n  Note: {}\n  note: {}\n",
            "m.yaml:3:3: error: entity 'note' and entity 'Note' differ only by case, but SQLite table names ignore case; rename one",
            "m.yaml:2:3: note: 'Note' is declared here"),
        BadModel(
            "entity names with reserved prefixes", "entities:\n  sqlite_stat: {}\n  Strata_Log: {}\n",
            "m.yaml:2:3: error: entity name 'sqlite_stat' starts with 'sqlite_', which SQLite reserves for its own tables; rename it",
            "m.yaml:3:3: error: entity name 'Strata_Log' starts with 'strata_', which the Strata store reserves for its own tables (strata_metadata, strata_join_log, ...); rename it"),
        BadModel(
            "attributes named like the rowid", "entities:\n  A:\n    attributes: { rowid: Int, OID: Int, _rowid_: Int }\n",
            "m.yaml:3:19: error: the attribute 'rowid' of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it",
            "m.yaml:3:31: error: the attribute 'OID' of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it",
            "m.yaml:3:41: error: the attribute '_rowid_' of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it"),
        BadModel(
            "foreign key column named like the rowid",
            "entities:\n  A:\n    relationships: { row: { to: B, inverse: as } }\n  B:\n    relationships: { as: { to: A, many: true, inverse: row } }\n",
            "m.yaml:3:22: error: the foreign key column 'rowID' of relationship 'row' of 'A' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it"),
        BadModel(
            "join table named like an entity",
            "entities:\n  A:\n    relationships: { b: { to: B, many: true, inverse: as } }\n  B:\n    relationships: { as: { to: A, many: true, inverse: b } }\n  A_b: {}\n",
            "m.yaml:3:22: error: the join table 'A_b' of relationship 'b' clashes with entity 'A_b'; rename the relationship"),
        BadModel(
            "join table named like an entity but for case",
            "entities:\n  A:\n    relationships: { b: { to: B, many: true, inverse: as } }\n  B:\n    relationships: { as: { to: A, many: true, inverse: b } }\n  a_B: {}\n",
            "m.yaml:3:22: error: the join table 'A_b' of relationship 'b' clashes with entity 'a_B' (SQLite table names ignore case); rename the relationship"),
        BadModel(
            "join table with a reserved prefix",
            "entities:\n  sqlite:\n    relationships: { master: { to: x, many: true, inverse: as } }\n  x:\n    relationships: { as: { to: sqlite, many: true, inverse: master } }\n",
            "m.yaml:3:22: error: the join table 'sqlite_master' of relationship 'master' starts with 'sqlite_', which SQLite reserves for its own tables; rename the relationship"),
    ]

    @Test(arguments: nameErrors)
    func names(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    // MARK: Types and relationships

    static let typeErrors: [BadModel] = [
        BadModel(
            "unknown type", "entities:\n  A:\n    attributes: { a: Strng }\n",
            "m.yaml:3:22: error: unknown type 'Strng' for attribute 'A.a'; did you mean 'String'?"),
        BadModel(
            "unknown enum type", "enums:\n  Priority: [low]\nentities:\n  A:\n    attributes: { a: Priorty }\n",
            "m.yaml:5:22: error: unknown type 'Priorty' for attribute 'A.a'; did you mean 'Priority'?"),
        BadModel(
            "entity as attribute type", "entities:\n  A:\n    attributes: { b: B }\n  B: {}\n",
            "m.yaml:3:22: error: 'B' is an entity; declare 'b' under 'relationships' with 'to: B'"),
        BadModel(
            "unknown destination", pair("b: { to: Bb, inverse: a }", "a: { to: A, inverse: b }"),
            "m.yaml:5:16: error: unknown entity 'Bb' in relationship 'A.b'; did you mean 'B'?"),
        BadModel(
            "enum as destination", "enums: { P: [a] }\n" + pair("b: { to: P, inverse: a }", "a: { to: A, inverse: b }"),
            "m.yaml:6:16: error: 'P' is an enum; declare 'b' under 'attributes'"),
        BadModel(
            "inverse missing on destination", pair("b: { to: B, inverse: x }", "a: { to: A, inverse: b }"),
            "m.yaml:5:28: error: 'B' has no relationship 'x', the inverse of 'A.b'",
            "m.yaml:10:28: error: 'A.b' is the inverse of 'B.a', but names 'x' as its own inverse; inverses must name each other"),
        BadModel(
            "inverse with a typo", pair("b: { to: B, inverse: aa }", "a: { to: A, inverse: b }"),
            "m.yaml:5:28: error: 'B' has no relationship 'aa', the inverse of 'A.b'; did you mean 'a'?",
            "m.yaml:10:28: error: 'A.b' is the inverse of 'B.a', but names 'aa' as its own inverse; inverses must name each other"),
        BadModel(
            "inverse is an attribute", pair("b: { to: B, inverse: title }", "a: { to: A, inverse: b }"),
            "m.yaml:5:28: error: the inverse of 'A.b' must be a relationship, but 'B.title' is an attribute",
            "m.yaml:10:28: error: 'A.b' is the inverse of 'B.a', but names 'title' as its own inverse; inverses must name each other"),
        BadModel(
            "inverse points elsewhere",
            "entities:\n  A:\n    relationships: { b: { to: B, inverse: c } }\n  B:\n    relationships: { c: { to: C, inverse: b } }\n  C:\n    relationships: { b: { to: B, inverse: c } }\n",
            "m.yaml:3:43: error: the inverse 'B.c' of 'A.b' points to 'C', not 'A'"),
        BadModel(
            "required to-many", pair("b: { to: B, inverse: a, many: true, required: true }", "a: { to: A, inverse: b }"),
            "m.yaml:5:43: error: 'required' applies only to to-one relationships, and 'A.b' is to-many"),
        BadModel(
            "ordered to-one", pair("b: { to: B, inverse: a, many: true }", "a: { to: A, inverse: b, ordered: true }"),
            "m.yaml:10:31: error: 'ordered' applies only to to-many relationships, and 'B.a' is to-one; declare 'ordered: true' on its inverse"),
        BadModel(
            "ordered many-to-many", pair("b: { to: B, inverse: a, many: true, ordered: true }", "a: { to: A, inverse: b, many: true }"),
            "m.yaml:5:43: error: 'A.b' is many-to-many, and ordered many-to-many relationships are not supported; order a to-many whose inverse is to-one (through an entity for the link, if need be)"),
        BadModel(
            "initialOrder without ordered", pair("b: { to: B, inverse: a, many: true, initialOrder: [title] }", "a: { to: A, inverse: b }"),
            "m.yaml:5:43: error: 'initialOrder' applies only to ordered relationships; add 'ordered: true' to 'A.b'"),
        BadModel(
            "initialOrder with an unknown key",
            pair("b: { to: B, inverse: a, many: true, ordered: true, initialOrder: [titel] }", "a: { to: A, inverse: b }"),
            "m.yaml:5:73: error: initial order key: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "@position without an ordered inverse",
            pair("b: { to: B, inverse: a, many: true }", "a: { to: A, inverse: b }", bExtra: "    fetches: { f: { sort: [a.@position] } }"),
            "m.yaml:11:30: error: sort key: 'a.@position' needs an ordered inverse, but 'A.b' is not 'ordered: true'"),
        BadModel(
            "@position not last",
            pair("b: { to: B, inverse: a, many: true, ordered: true }", "a: { to: A, inverse: b }", bExtra: "    fetches: { f: { sort: [a.@position.name] } }"),
            "m.yaml:11:30: error: sort key: '@position' must end the key path 'a.@position.name'"),
        BadModel(
            "@position first",
            pair("b: { to: B, inverse: a, many: true, ordered: true }", "a: { to: A, inverse: b }", bExtra: "    fetches: { f: { sort: ['@position'] } }"),
            "m.yaml:11:29: error: sort key: '@position' follows the to-one relationship whose inverse is ordered, e.g. 'list.@position'"),
        BadModel(
            "position column clash",
            pair("b: { to: B, inverse: a, many: true, ordered: true }", "a: { to: A, inverse: b }")
                .replacingOccurrences(of: "attributes: { title: String }", with: "attributes: { title: String, aPosition: Int }"),
            "m.yaml:8:34: error: the to-one relationship 'a' stores its position in 'aPosition', which clashes with the attribute 'aPosition' of 'B'"),
    ]

    @Test(arguments: typeErrors)
    func types(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    // MARK: Defaults

    static func defaultModel(_ type: String, _ value: String) -> String {
        "enums:\n  P: [low, high]\nentities:\n  A:\n    attributes:\n      a: { type: \(type), default: \(value) }\n"
    }

    static let defaultErrors: [BadModel] = [
        BadModel(
            "Int16 out of range", defaultModel("Int16", "40000"),
            "m.yaml:6:34: error: default 40000 of 'A.a' is out of range for Int16 (-32768...32767)"),
        BadModel(
            "Int from a decimal", defaultModel("Int", "1.5"),
            "m.yaml:6:32: error: default '1.5' of 'A.a' is not a valid Int"),
        BadModel(
            "Int from a quoted number", defaultModel("Int", "\"1\""),
            "m.yaml:6:32: error: default '1' of 'A.a' is not a valid Int; write the number without quotes"),
        BadModel(
            "Bool from yes", defaultModel("Bool", "yes"),
            "m.yaml:6:33: error: default 'yes' of 'A.a' is not a valid Bool; use true or false"),
        BadModel(
            "Date other than now or a date", defaultModel("Date", "tomorrow"),
            "m.yaml:6:33: error: default 'tomorrow' of 'A.a' is not a valid date: expected ISO 8601; write 'now', a date-time such as 2024-01-01T09:30:00Z or 2024-01-01T09:30:00.250+02:00, or a date such as 2024-01-01"),
        BadModel(
            "enum case not found", defaultModel("P", "hihg"),
            "m.yaml:6:30: error: default 'hihg' of 'A.a' is not a case of enum 'P'; did you mean 'high'?"),
        BadModel(
            "UUID literal malformed", defaultModel("UUID", "1234"),
            "m.yaml:6:33: error: default '1234' of 'A.a' is not a UUID; use 'uuid' for a new one or a literal such as 01234567-89AB-CDEF-0123-456789ABCDEF"),
        BadModel(
            "URL without scheme", defaultModel("URL", "example"),
            "m.yaml:6:32: error: default 'example' of 'A.a' is not an absolute URL"),
        BadModel(
            "Double from text", defaultModel("Double", "abc"),
            "m.yaml:6:35: error: default 'abc' of 'A.a' is not a valid Double"),
        BadModel(
            "null default", defaultModel("String", "null"),
            "m.yaml:6:35: error: the default of 'A.a' is null; remove 'default' (an optional attribute is nil unless set)"),
        BadModel(
            "Float out of range", defaultModel("Float", "1e39"),
            "m.yaml:6:34: error: default 1e39 of 'A.a' is out of range for Float"),
    ]

    @Test(arguments: defaultErrors)
    func defaults(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    // MARK: Constraints, sorts, sections

    static func fetchModel(_ entityA: String) -> String {
        """
        entities:
          A:
            attributes: { name: String, rank: Int }
            relationships:
              b: { to: B, inverse: as }
              cs: { to: C, many: true, inverse: a }
        \(entityA)
          B:
            attributes: { title: String }
            relationships: { as: { to: A, many: true, inverse: b } }
          C:
            relationships: { a: { to: A, inverse: cs } }
        """
    }

    static let fetchErrors: [BadModel] = [
        BadModel(
            "unique over an unknown name", fetchModel("    unique: [[nmae]]"),
            "m.yaml:7:15: error: unknown attribute or relationship 'nmae' in 'unique' of 'A'; did you mean 'name'?"),
        BadModel(
            "name listed twice in one unique constraint", fetchModel("    unique: [[name, rank, name]]"),
            "m.yaml:7:27: error: 'name' is listed twice in the same 'unique' element"),
        BadModel(
            "entity sections over an unknown relationship", fetchModel("    fetches: { f: { sections: { entity: bb } } }"),
            "m.yaml:7:41: error: unknown relationship 'bb' in 'A' for entity sections; did you mean 'b'?"),
        BadModel(
            "index over a to-many", fetchModel("    indexes: [[cs]]"),
            "m.yaml:7:16: error: 'cs' in 'indexes' of 'A' is a to-many relationship; only attributes and to-one relationships have columns"),
        BadModel(
            "index duplicating a unique constraint", fetchModel("    unique: [[name, rank]]\n    indexes: [[name, rank]]"),
            "m.yaml:8:15: warning: index [name, rank] of 'A' duplicates the unique constraint [name, rank], which is already indexed"),
        BadModel(
            "unknown sort key", fetchModel("    fetches: { f: { sort: [nam] } }"),
            "m.yaml:7:28: error: sort key: unknown attribute or relationship 'nam' in 'A'; did you mean 'name'?"),
        BadModel(
            "sort through a to-many", fetchModel("    fetches: { f: { sort: [-cs.a] } }"),
            "m.yaml:7:29: error: sort key: 'cs' in 'cs.a' is a to-many relationship; key paths may only go through to-one relationships"),
        BadModel(
            "sort ending at a relationship", fetchModel("    fetches: { f: { sort: [b] } }"),
            "m.yaml:7:28: error: sort key: 'b' ends at the relationship 'b'; add one of its attributes, e.g. 'b.title'"),
        BadModel(
            "empty sort key", fetchModel("    fetches: { f: { sort: [\"-\"] } }"),
            "m.yaml:7:28: error: sort key: '' is not a key path; write names separated by '.'"),
        BadModel(
            "sort through a to-one with a typo", fetchModel("    fetches: { f: { sort: [b.titel] } }"),
            "m.yaml:7:30: error: sort key: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "firstLetter on an Int", fetchModel("    fetches: { f: { sections: { key: rank, by: firstLetter } } }"),
            "m.yaml:7:38: error: 'by: firstLetter' needs a String key, but 'rank' is Int"),
        BadModel(
            "section key through a to-many", fetchModel("    fetches: { f: { sections: { key: cs.a } } }"),
            "m.yaml:7:38: error: section key: 'cs' in 'cs.a' is a to-many relationship; key paths may only go through to-one relationships"),
        BadModel(
            "entity sections over a to-many", fetchModel("    fetches: { f: { sections: { entity: cs } } }"),
            "m.yaml:7:41: error: entity sections need a to-one relationship, but 'A.cs' is to-many"),
        BadModel(
            "entity sections over an attribute", fetchModel("    fetches: { f: { sections: { entity: name } } }"),
            "m.yaml:7:41: error: 'name' is an attribute; entity sections need a to-one relationship (for sections by value, use 'key: name')"),
        BadModel(
            "entity sections sorted by a source attribute", fetchModel("    fetches: { f: { sections: { entity: b, sort: [rank] } } }"),
            "m.yaml:7:51: error: sort key: unknown attribute or relationship 'rank' in 'B'"),
        BadModel(
            "section and sort directions disagree", fetchModel("    fetches: { f: { sections: { key: rank }, sort: [-rank] } }"),
            "m.yaml:7:53: warning: sections follow 'rank' ascending, so sorting by it descending has no effect; set 'descending' on the sections instead"),
        BadModel(
            "orphans on a required relationship",
            "entities:\n  A:\n    relationships: { b: { to: B, inverse: as, required: true } }\n    fetches: { f: { sections: { entity: b, orphans: true } } }\n  B:\n    relationships: { as: { to: A, many: true, inverse: b, deleteRule: cascade } }\n",
            "m.yaml:4:41: warning: 'orphans: true' has no effect: 'A.b' is required, so no item is without a section"),
        BadModel(
            "one parameter, two types in a fetch",
            fetchModel("    fetches: { f: { where: \"rank > $x\", sections: { entity: b, where: \"title == $x\" } } }"),
            "m.yaml:7:81: error: parameter '$x' is String in the sections' 'where' but Int in the fetch's 'where'"),
        BadModel(
            "predicate error column", fetchModel("    fetches: { f: { where: \"rank == 'x'\" } }"),
            "m.yaml:7:37: error: cannot compare 'rank' (Int) with \"x\""),
        BadModel(
            "predicate error in a single-quoted scalar", fetchModel("    fetches: { f: { where: 'b.titel == \"x\"' } }"),
            "m.yaml:7:31: error: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "predicate on a to-one's key", fetchModel("    fetches: { f: { where: 'b.id == $b' } }"),
            "m.yaml:7:31: error: unknown attribute or relationship 'id' in 'B'; 'id' is its primary key: compare the relationship itself with an id ('b == $b')"),
        BadModel(
            "predicate on the entity's own key", fetchModel("    fetches: { f: { where: 'objectID == $x' } }"),
            "m.yaml:7:29: error: unknown attribute or relationship 'objectID' in 'A'; 'objectID' is its primary key, which predicates do not compare"),
        BadModel(
            "predicate error in a plain scalar", fetchModel("    fetches: { f: { where: rank > true } }"),
            "m.yaml:7:35: error: cannot compare 'rank' (Int) with true"),
        BadModel(
            "predicate error in a folded block scalar",
            fetchModel("    fetches:\n      f:\n        where: >\n          rank == \"x\""),
            "m.yaml:10:19: error: cannot compare 'rank' (Int) with \"x\""),
        BadModel(
            "predicate error on the second line of a literal block scalar",
            fetchModel("    fetches:\n      f:\n        where: |\n          rank > 1\n            AND rank == \"x\""),
            "m.yaml:11:25: error: cannot compare 'rank' (Int) with \"x\""),
        BadModel(
            "predicate error after escapes in a double-quoted scalar",
            fetchModel("    fetches: { f: { where: \"name == '\\u0041' AND rank == \\\"x\\\"\" } }"),
            "m.yaml:7:58: error: cannot compare 'rank' (Int) with \"x\""),
        BadModel(
            "predicate error on the second line of a double-quoted scalar",
            fetchModel("    fetches:\n      f:\n        where: \"rank > 1 AND\n          rank == true\""),
            "m.yaml:10:19: error: cannot compare 'rank' (Int) with true"),
        BadModel(
            "predicate error after '' in a single-quoted scalar",
            fetchModel("    fetches: { f: { where: 'name == \"it''s\" AND rank == true' } }"),
            "m.yaml:7:57: error: cannot compare 'rank' (Int) with true"),
        BadModel(
            "predicate key path error at its segment", fetchModel("    fetches: { f: { where: \"rank > 1 AND b.titel == 'x'\" } }"),
            "m.yaml:7:44: error: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "section key error at its segment", fetchModel("    fetches: { f: { sections: { key: b.titel } } }"),
            "m.yaml:7:40: error: section key: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "quoted sort key error at its segment", fetchModel("    fetches: { f: { sort: [name, \"-b.titel\"] } }"),
            "m.yaml:7:38: error: sort key: unknown attribute or relationship 'titel' in 'B'; did you mean 'title'?"),
        BadModel(
            "section predicate over the destination", fetchModel("    fetches: { f: { sections: { entity: b, where: \"rank > 1\" } } }"),
            "m.yaml:7:52: error: unknown attribute or relationship 'rank' in 'B'"),
        BadModel(
            "sort not a list", fetchModel("    fetches: { f: { sort: { name: 1 } } }"),
            "m.yaml:7:27: error: 'sort' must be a list of key paths, e.g. [-updatedAt, title]"),
        BadModel(
            "duplicate index", fetchModel("    indexes: [[name, rank], [name, rank]]"),
            "m.yaml:7:29: warning: index [name, rank] of 'A' duplicates the index [name, rank], which is already indexed"),
    ]

    @Test(arguments: fetchErrors)
    func fetches(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    // MARK: Several files

    @Test func duplicateEntityAcrossFiles() {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: "entities:\n  Note: { attributes: { title: String } }\n"),
            ModelFile(path: "b.yaml", text: "entities:\n  Tag: {}\n  Note: {}\n"),
        ])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "b.yaml:3:3: error: duplicate entity 'Note'",
            "a.yaml:2:3: note: 'Note' is first defined here",
        ])
    }

    @Test func brokenFileDoesNotMakeReferencesIntoItLookUnknown() {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: "entities:\n  Tag: { relationships: { notes: { to: Note, many: true, inverse: tags } } }\n"),
            ModelFile(path: "b.yaml", text: "entities:\n  Note: [\n"),
        ])
        #expect(result.diagnostics.map(\.description) == [
            "b.yaml:3:1: error: YAML syntax: while parsing a flow node: did not find expected node content"
        ])
    }

    @Test func brokenFileStillLetsTheOthersReportTheirOwnMistakes() {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: "enums: { P: [a, a] }\nentities:\n  Tag:\n    attributes: { id: Int, name: String }\n    relationships: { notes: { to: Note, many: true, inverse: tags } }\n    unique: [[nmae]]\n"),
            ModelFile(path: "b.yaml", text: "entities:\n  Note: [\n"),
        ])
        #expect(result.schema == nil)
        #expect(result.diagnostics.map(\.description) == [
            "a.yaml:1:17: error: duplicate case 'a' in enum 'P'",
            "a.yaml:1:14: note: 'a' is first listed here",
            "a.yaml:4:19: error: attribute name 'id' clashes with the primary key 'Tag.id'; keep the name by choosing the key's name with 'primaryKey:' on 'Tag' or at the top of its file (e.g. primaryKey: objectID)",
            "a.yaml:6:15: error: unknown attribute or relationship 'nmae' in 'unique' of 'Tag'; did you mean 'name'?",
            "b.yaml:3:1: error: YAML syntax: while parsing a flow node: did not find expected node content",
        ])
    }

    @Test func duplicateEnumAcrossFiles() {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: "enums: { P: [a] }\n"),
            ModelFile(path: "b.yaml", text: "enums:\n  P: [b]\n"),
        ])
        #expect(result.diagnostics.map(\.description) == [
            "b.yaml:2:3: error: duplicate enum 'P'",
            "a.yaml:1:10: note: 'P' is first defined here",
        ])
    }

    @Test func referencesAcrossFiles() throws {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: "enums: { P: [low, high] }\nentities:\n  Note:\n    attributes: { p: { type: P, default: low } }\n    relationships: { tags: { to: Tag, many: true, inverse: notes } }\n"),
            ModelFile(path: "b.yaml", text: "entities:\n  Tag:\n    relationships: { notes: { to: Note, many: true, inverse: tags } }\n"),
        ])
        #expect(result.diagnostics.isEmpty)
        let schema = try #require(result.schema)
        #expect(schema.entities.map(\.name) == ["Note", "Tag"])
        #expect(schema.entity(named: "Note")?.attributes.first?.defaultValue == .enumCase("low"))
    }

    @Test func severalErrorsInOneRun() {
        let yaml = "entities:\n  A:\n    attributes: { a: Strng, b: Itn }\n"
        #expect(diagnostics(yaml) == [
            "m.yaml:3:22: error: unknown type 'Strng' for attribute 'A.a'; did you mean 'String'?",
            "m.yaml:3:32: error: unknown type 'Itn' for attribute 'A.b'; did you mean 'Int'?",
        ])
    }
}
