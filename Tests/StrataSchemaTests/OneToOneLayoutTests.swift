import Testing

@testable import StrataSchema

/// One-to-ones: where the key is stored, and `required` on both sides, which the validator
/// accepts because the runtime checks the side without the key at commit (Docs/Decisions.md,
/// "`required` on the side of a one-to-one without the key is checked at commit").
@Suite("One-to-one layout")
struct OneToOneLayoutTests {
    static func model(card: String, owner: String) -> String {
        """
        entities:
          Person:
            relationships:
              card: { to: Card, inverse: owner\(card) }
          Card:
            relationships:
              owner: { to: Person, inverse: card\(owner) }
        """
    }

    /// Where each side of `Person.card` ↔ `Card.owner` is stored.
    func storage(card: String, owner: String) throws -> (card: StorageLayout.Storage, owner: StorageLayout.Storage) {
        let result = load(Self.model(card: card, owner: owner))
        #expect(result.diagnostics.map(\.description) == [])
        let schema = try #require(result.schema)
        let layout = StorageLayout(schema: schema)
        let person = try #require(schema.entity(named: "Person")), card = try #require(schema.entity(named: "Card"))
        return (
            layout.storage(of: try #require(person.relationship(named: "card")), in: person),
            layout.storage(of: try #require(card.relationship(named: "owner")), in: card))
    }

    @Test func theKeyIsOnTheSideThatSortsFirstUnlessExactlyOneIsRequired() throws {
        #expect(try storage(card: "", owner: "") == (.inverseForeignKey, .foreignKey(column: "ownerID")))
        #expect(try storage(card: ", required: true", owner: "") == (.foreignKey(column: "cardID"), .inverseForeignKey))
        #expect(try storage(card: "", owner: ", required: true") == (.inverseForeignKey, .foreignKey(column: "ownerID")))
    }

    @Test func bothSidesRequiredIsAcceptedAndKeepsRequiredOnTheSideWithoutTheKey() throws {
        #expect(try storage(card: ", required: true", owner: ", required: true") == (.inverseForeignKey, .foreignKey(column: "ownerID")))
        let schema = try #require(load(Self.model(card: ", required: true", owner: ", required: true")).schema)
        // Not dropped: the generated descriptor carries it, and the store checks it at commit.
        #expect(schema.entity(named: "Person")?.relationship(named: "card")?.isRequired == true)
    }
}
