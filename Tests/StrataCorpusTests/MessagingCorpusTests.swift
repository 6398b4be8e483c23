import CorpusMessaging
import Foundation
import Strata
import Testing

/// The messenger's model: conversations ordered by their last activity, so that a new
/// message moves its conversation's section; cascades to messages and attachments.
@Suite struct MessagingCorpusTests {
    @Test func conversationsMoveAsMessagesArrive() throws {
        let file = try CorpusFile()
        let store = try Store(schema: StrataModel.schema, path: file.path)
        let ada = try store.insert(Contact(displayName: "Ada", handle: "@ada"))
        let bob = try store.insert(Contact(displayName: "Bob", handle: "@bob"))
        let first = try store.insert(Conversation(title: "Ada", lastActivity: day(1)))
        let second = try store.insert(Conversation(title: nil, lastActivity: day(2)))
        try store.write { db in
            try db.link(first.id, Conversation.participants, ada.id)
            try db.link(second.id, Conversation.participants, ada.id)
            try db.link(second.id, Conversation.participants, bob.id)
        }
        let hello = try store.insert(Message(text: "hello", sentAt: day(1), conversationID: first.id, senderID: ada.id))
        _ = try store.insert(Attachment(fileName: "a.png", byteCount: Int.max, data: Data([1, 2]), messageID: hello.id))
        _ = try store.insert(Message(text: "", sentAt: day(2), state: .failed, conversationID: second.id, senderID: bob.id))

        let (controller, list) = try ResultsController.replaying(store: store, request: Message.Fetches.byConversation)
        #expect(controller.snapshot.sections.map { $0.value.object?.id } == [second.id, first.id])

        // A reply in the older conversation: its message comes in and its section moves up.
        try store.write { db in
            _ = try db.insert(Message(text: "hi!", sentAt: day(3), state: .sent, conversationID: first.id, senderID: bob.id))
            var bumped = first
            bumped.lastActivity = day(3)
            _ = try db.update(bumped)
        }
        try list.check(controller, store: store)
        #expect(controller.snapshot.sections.map { $0.value.object?.id } == [first.id, second.id])
        #expect(try store.fetchAll(Message.Fetches.failed).count == 1)
        // Reactions and a link preview, stored as JSON; a changed reaction is an update the
        // list is told about.
        var reacted = try #require(try store.fetchOne(Message.self, id: hello.id))
        reacted.reactions = ["👍": 2, "❤️": 1]
        reacted.preview = LinkPreview(url: URL(string: "https://example.org/a?b=c")!, title: nil, imageData: Data([0, 1]))
        #expect(try store.update(reacted))
        try list.check(controller, store: store)
        #expect(try store.fetchOne(Message.self, id: hello.id) == reacted)
        #expect(try store.fetchAll(Message.Fetches.inConversation(conversation: first.id)).map(\.text) == ["hello", "hi!"])

        // A contact that goes leaves its messages without a sender (nullify).
        #expect(try store.delete(bob))
        #expect(try store.fetchAll(Message.self).filter { $0.senderID == bob.id }.isEmpty)
        // A conversation that goes takes its messages and their attachments (cascade).
        #expect(try store.delete(first))
        #expect(try store.fetchAll(Attachment.self).isEmpty)
        #expect(try store.fetchAll(Message.self).allSatisfy { $0.conversationID == second.id })
        try list.check(controller, store: store)
        #expect(controller.snapshot.sections.count == 1)
    }
}
