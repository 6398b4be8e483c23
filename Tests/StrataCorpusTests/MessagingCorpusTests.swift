import CorpusMessaging
import Foundation
import Strata
import StrataTestSupport
import Testing

/// The messenger's model: conversations ordered by their last activity, so that a new
/// message moves its conversation's section; cascades to messages and attachments.
@Suite struct MessagingCorpusTests {
    @Test func conversationsMoveAsMessagesArrive() throws {
        let file = try CorpusFile()
        let store = try Store(schema: StrataModel.schema, path: file.path)
        let ada = try store.insert(Contact(displayName: "Ada", handle: "@ada"))
        let bob = try store.insert(Contact(displayName: "Bob", handle: "@bob"))
        // A conversation needs a participant when its transaction commits (minCount 1), so it
        // is made and linked in one transaction; alone, the commit is refused.
        #expect(throws: RuleViolationError.self) { _ = try store.insert(Conversation(title: "empty", lastActivity: day(0))) }
        let (first, second) = try store.write { db in
            let first = try db.insert(Conversation(title: "Ada", lastActivity: day(1)))
            let second = try db.insert(Conversation(title: nil, lastActivity: day(2)))
            try db.link(first.objectID, Conversation.participants, ada.objectID)
            try db.link(second.objectID, Conversation.participants, ada.objectID)
            try db.link(second.objectID, Conversation.participants, bob.objectID)
            return (first, second)
        }
        #expect(try store.fetchAll(Conversation.self).count == 2)
        // Handles follow the pattern; display names their lengths.
        #expect(throws: RuleViolationError.self) { _ = try store.insert(Contact(displayName: "Eve", handle: "eve")) }
        #expect(throws: RuleViolationError.self) { _ = try store.insert(Contact(displayName: "", handle: "@eve")) }
        _ = try store.insert(Contact(displayName: String(repeating: "é", count: 64), handle: "@" + String(repeating: "e", count: 30)))
        let hello = try store.insert(Message(text: "hello", sentAt: day(1), conversationID: first.objectID, senderID: ada.objectID))
        _ = try store.insert(Attachment(fileName: "a.png", byteCount: Int.max, data: Data([1, 2]), messageID: hello.objectID))
        _ = try store.insert(Message(text: "", sentAt: day(2), state: .failed, conversationID: second.objectID, senderID: bob.objectID))

        let (controller, list) = try ResultsController.replaying(store: store, request: Message.Fetches.byConversation)
        #expect(controller.snapshot.sections.map { $0.value.object?.objectID } == [second.objectID, first.objectID])

        // A reply in the older conversation: its message comes in and its section moves up.
        try store.write { db in
            _ = try db.insert(Message(text: "hi!", sentAt: day(3), state: .sent, conversationID: first.objectID, senderID: bob.objectID))
            var bumped = first
            bumped.lastActivity = day(3)
            _ = try db.update(bumped)
        }
        #expect(try list.problems(controller, store: store) == [])
        #expect(controller.snapshot.sections.map { $0.value.object?.objectID } == [first.objectID, second.objectID])
        #expect(try store.fetchAll(Message.Fetches.failed).count == 1)
        // Reactions and a link preview, stored as JSON; a changed reaction is an update the
        // list is told about.
        var reacted = try #require(try store.fetchOne(Message.self, id: hello.objectID))
        reacted.reactions = ["👍": 2, "❤️": 1]
        reacted.preview = LinkPreview(url: URL(string: "https://example.org/a?b=c")!, title: nil, imageData: Data([0, 1]))
        #expect(try store.update(reacted))
        #expect(try list.problems(controller, store: store) == [])
        #expect(try store.fetchOne(Message.self, id: hello.objectID) == reacted)
        #expect(try store.fetchAll(Message.Fetches.inConversation(conversation: first.objectID)).map(\.text) == ["hello", "hi!"])
        // The server's id of a sent message is an attribute called `id`, unique; the object's id
        // is the key `objectID`.
        var sent = reacted
        sent.id = "msg-1"
        #expect(try store.update(sent))
        #expect(try store.fetchAll(Message.self, where: Message.id == "msg-1").map(\.objectID) == [hello.objectID])
        #expect(throws: UniqueConstraintError.self) {
            _ = try store.insert(Message(id: "msg-1", sentAt: day(4), conversationID: first.objectID))
        }
        #expect(try list.problems(controller, store: store) == [])

        // A contact that goes leaves its messages without a sender (nullify). Ada is the last
        // participant of the first conversation: deleting her would leave it with none.
        #expect(throws: RuleViolationError.self) { try store.delete(ada) }
        #expect(try store.delete(bob))
        #expect(try store.fetchAll(Message.self).filter { $0.senderID == bob.objectID }.isEmpty)
        // A conversation that goes takes its messages and their attachments (cascade).
        #expect(try store.delete(first))
        #expect(try store.fetchAll(Attachment.self).isEmpty)
        #expect(try store.fetchAll(Message.self).allSatisfy { $0.conversationID == second.objectID })
        #expect(try list.problems(controller, store: store) == [])
        #expect(controller.snapshot.sections.count == 1)
        #expect(try store.fetchOne(Contact.self, id: ada.objectID) != nil)
    }
}
