import Testing

@testable import StrataSchema

/// `access:` (per-user data): what it decodes to, and each mistake's diagnostic, at the exact
/// place it was written.
@Suite("Access rules")
struct AccessRuleTests {
    /// Boards with an owner and members, their members and cards through the board, labels
    /// shared with everyone; each `access:` replaceable.
    static func model(
        board: String = "{ owner: ownerID, members: members.userID }", member: String = "{ through: board }",
        card: String = "{ through: board }", label: String = "everyone"
    ) -> String {
        """
        entities:
          Board:
            access: \(board)
            attributes: { ownerID: String, ownerKey: UUID, size: Int }
            relationships:
              members: { to: Member, many: true, inverse: board }
              cards: { to: Card, many: true, inverse: board }
              labels: { to: Label, many: true, inverse: boards }
          Member:
            access: \(member)
            attributes: { userID: String }
            relationships:
              board: { to: Board, inverse: members, required: true }
          Card:
            access: \(card)
            attributes: { title: String }
            relationships:
              board: { to: Board, inverse: cards }
              next: { to: Card, inverse: previous }
              previous: { to: Card, inverse: next }
          Label:
            access: \(label)
            attributes: { name: String }
            relationships:
              boards: { to: Board, many: true, inverse: labels }

        """
    }

    @Test func decodesEachKind() throws {
        let result = load(Self.model())
        #expect(result.diagnostics.isEmpty)
        let schema = try #require(result.schema)
        #expect(
            schema.entity(named: "Board")?.access
                == .users(owner: "ownerID", members: AccessMembers(relationship: "members", attribute: "userID")))
        #expect(schema.entity(named: "Card")?.access == .through("board"))
        #expect(schema.entity(named: "Label")?.access == .everyone)
        #expect(load(Self.model(board: "{ owner: ownerKey }")).schema?.entity(named: "Board")?.access == .users(owner: "ownerKey", members: nil))
    }

    @Test func aModelWithoutAccessHasNone() throws {
        let result = load("entities:\n  A:\n    attributes: { a: String }\n")
        #expect(result.diagnostics.isEmpty)
        #expect(result.schema?.entities[0].access == nil)
    }

    static let errors: [BadModel] = [
        BadModel(
            "neither everyone nor a mapping", model(label: "nobody"),
            "m.yaml:22:13: error: 'access' of 'Label' must be 'everyone', or a mapping such as { owner: ownerID }, { members: members.userID } or { through: board }"),
        BadModel(
            "an unknown key", model(label: "{ owners: ownerID }"),
            "m.yaml:22:15: error: unknown key 'owners' in 'access' of 'Label'; did you mean 'owner'?"),
        BadModel(
            "an empty mapping", model(label: "{}"),
            "m.yaml:22:13: error: 'access' of 'Label' is empty; it must be 'everyone', or a mapping such as { owner: ownerID }, { members: members.userID } or { through: board }"),
        BadModel(
            "through beside an owner", model(card: "{ through: board, owner: title }"),
            "m.yaml:15:5: error: 'access' of 'Card' has 'through' beside 'owner' or 'members': an object reached through 'board' is in the data of whoever may read that object; give the owner or members to that entity"),
        BadModel(
            "members without an attribute", model(board: "{ members: members }"),
            "m.yaml:3:24: error: 'members' of 'Board' names a to-many relationship and the attribute of its objects that holds a user id, e.g. members.userID"),
        BadModel(
            "an entity without access", model().replacingOccurrences(of: "    access: everyone\n", with: ""),
            "m.yaml:21:3: error: entity 'Label' has no 'access': the model declares per-user data ('Board'), so every entity says who may read and write its objects; write 'access: everyone' to share them with every user"),
        BadModel(
            "an unknown owner attribute", model(board: "{ owner: ownerId }"),
            "m.yaml:3:22: error: 'Board' has no attribute 'ownerId' (the owner of 'Board'); did you mean 'ownerID'?"),
        BadModel(
            "an owner that is no user id", model(board: "{ owner: size }"),
            "m.yaml:3:22: error: the owner of 'Board', 'Board.size', must hold a user id: a String or UUID attribute that is stored, not Int"),
        BadModel(
            "an owner that is a relationship", model(card: "{ owner: board }"),
            "m.yaml:15:22: error: the owner of 'Card' must be an attribute holding a user id, but 'Card.board' is a relationship; to reach an object with an owner write 'through: board'"),
        BadModel(
            "members through an unknown relationship", model(board: "{ members: member.userID }"),
            "m.yaml:3:24: error: 'Board' has no relationship 'member' (the 'members' of its access); did you mean 'members'?"),
        BadModel(
            "members that are many-to-many", model(board: "{ members: labels.name }"),
            "m.yaml:3:24: error: the members of 'Board' must be a one-to-many relationship (each member belongs to one Board), but 'Board.labels' is many-to-many"),
        BadModel(
            "members of an unknown attribute", model(board: "{ members: members.user }"),
            "m.yaml:3:24: error: 'Member' has no attribute 'user' (the member of 'Board'); did you mean 'userID'?"),
        BadModel(
            "through an unknown relationship", model(card: "{ through: bord }"),
            "m.yaml:15:24: error: 'Card' has no relationship 'bord' (the 'through' of its access); did you mean 'board'?"),
        BadModel(
            "through an attribute", model(card: "{ through: title }"),
            "m.yaml:15:24: error: 'through' names a to-one relationship, but 'Card.title' is an attribute; to name the attribute that holds the owner's user id write 'owner: title'"),
        BadModel(
            "through a to-many", model(board: "{ through: cards }"),
            "m.yaml:3:24: error: 'through' must be a to-one relationship (the one object whose users may read this one), but 'Board.cards' is to-many"),
        BadModel(
            "through the side of a one-to-one that does not hold the key", model(card: "{ through: previous }"),
            "m.yaml:15:24: error: 'through: previous' must be a to-one that holds its key, but 'Card.previous' is the side of a one-to-one whose key 'Card.next' holds; use 'through' on 'Card' instead"),
        BadModel(
            "a cycle", model(board: "{ owner: ownerID }", card: "{ through: next }"),
            "m.yaml:15:24: error: the access of 'Card' goes through 'Card' and never reaches an entity with an owner, members or 'everyone': a cycle"),
        BadModel(
            "access on an abstract entity",
            "entities:\n  A:\n    abstract: true\n    access: everyone\n    attributes: { a: String }\n  B:\n    extends: A\n    access: everyone\n",
            "m.yaml:4:5: error: abstract entity 'A' has no objects of its own; set 'access' on the entities that extend it"),
    ]

    @Test(arguments: errors)
    func diagnostic(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }
}
