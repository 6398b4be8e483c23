/// Which signed-in users may read and write an entity's objects: the model's `access:`, as a
/// relay enforces it (a store on a device holds whatever its user was served, and does not
/// read this).
///
/// ```swift
/// EntityDescriptor(name: "Card", attributes: [...], relationships: [...], access: .through("board"))
/// ```
public enum AccessDescriptor: Hashable, Sendable {
    /// Every signed-in user (`access: everyone`).
    case everyone
    /// The user whose id the attribute `owner` holds, and the users whose ids the members
    /// hold (`access: { owner: ownerID, members: members.userID }`, either or both).
    case users(owner: String?, members: Members?)
    /// Whoever may read and write the object the to-one relationship leads to
    /// (`access: { through: board }`).
    case through(String)

    /// A one-to-many relationship whose destination objects each hold a user id in
    /// `attribute`.
    public struct Members: Hashable, Sendable {
        public var relationship: String
        public var attribute: String

        public init(relationship: String, attribute: String) {
            self.relationship = relationship
            self.attribute = attribute
        }
    }
}
