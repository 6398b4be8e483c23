import Testing

@testable import StrataSchema

/// `primaryKey:` at the top of a file and on an entity: which name each entity gets, and the
/// rules that keep the key apart from the entity's other members.
@Suite("Primary key names")
struct PrimaryKeyRuleTests {
    @Test func theEntitysOwnNameOverridesTheFilesWhichOverridesID() throws {
        let result = SchemaPipeline.load(files: [
            ModelFile(path: "a.yaml", text: """
                version: 1
                primaryKey: objectID
                entities:
                  A: { attributes: { id: String } }
                  B: { primaryKey: localID, attributes: { id: Int } }
                  C: { primaryKey: id, attributes: { n: Int } }
                """),
            // Another file of the same model: its entities keep `id`.
            ModelFile(path: "b.yaml", text: "version: 1\nentities:\n  D: { attributes: { n: Int } }\n"),
        ])
        #expect(result.diagnostics.map(\.description) == [])
        let schema = try #require(result.schema)
        #expect(schema.entities.map(\.primaryKey) == ["objectID", "localID", "id", "id"])
    }

    @Test func anEntityExtendingAnAbstractOneTakesItsOwnOrItsFilesKey() throws {
        let schema = try #require(load("""
            primaryKey: key
            entities:
              Base: { abstract: true, attributes: { id: String } }
              A: { extends: Base }
              B: { extends: Base, primaryKey: rowKey }
            """).schema)
        #expect(schema.entity(named: "A")?.primaryKey == "key")
        #expect(schema.entity(named: "B")?.primaryKey == "rowKey")
        #expect(schema.entity(named: "A")?.attribute(named: "id")?.inheritedFrom == "Base")
    }

    @Test func anInheritedAttributeNamedLikeTheKeyIsReportedOnTheEntityThatInheritsIt() {
        #expect(diagnostics("""
            entities:
              Base: { abstract: true, attributes: { id: String } }
              A: { extends: Base, primaryKey: objectID }
              B: { extends: Base }
            """) == [
            "m.yaml:4:3: error: the attribute 'id' that 'B' inherits from 'Base' clashes with its primary key 'B.id'; name the key with 'primaryKey:' on 'B' or at the top of its file",
        ])
    }

    @Test func theKeyMayBeCalledObjectIDButNoAttributeMay() {
        #expect(diagnostics("entities:\n  A: { primaryKey: objectID, attributes: { id: Int } }\n") == [])
        #expect(diagnostics("entities:\n  A: { primaryKey: key, relationships: { objectID: { to: A, inverse: objectID } } }\n") == [
            "m.yaml:2:42: error: relationship name 'objectID' clashes with the generated member 'A.objectID'; rename it",
        ])
    }

    @Test func aKeyPathMayEndAtTheRenamedKeyButNotAtID() {
        #expect(diagnostics("""
            entities:
              A:
                primaryKey: key
                attributes: { n: Int }
                fetches:
                  good: { sort: [-key] }
                  bad: { sort: [id] }
            """) == [
            "m.yaml:7:21: error: sort key: unknown attribute or relationship 'id' in 'A'; its primary key is named 'key' ('primaryKey:')",
        ])
    }

    @Test func predicatesNameTheKeyAndTheComparisonThatWorks() {
        #expect(diagnostics("""
            entities:
              A:
                primaryKey: key
                attributes: { n: Int }
                relationships: { b: { to: B, inverse: as } }
                fetches:
                  one: { where: "id == $x" }
                  two: { where: "b.objectID == $x" }
              B:
                primaryKey: objectID
                relationships: { as: { to: A, many: true, inverse: b } }
            """) == [
            "m.yaml:7:22: error: unknown attribute or relationship 'id' in 'A'; its primary key is named 'key' ('primaryKey:'), which predicates do not compare",
            "m.yaml:8:24: error: unknown attribute or relationship 'objectID' in 'B'; 'objectID' is its primary key: compare the relationship itself with an id ('b == $b')",
        ])
    }
}
