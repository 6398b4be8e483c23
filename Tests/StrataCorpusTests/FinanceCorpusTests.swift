import CorpusFinance
import Foundation
import Strata
import StrataTestSupport
import Testing

/// The finance app's model on a real store file: typed writes, generated fetches, a live
/// sectioned list replayed batch by batch, delete rules, and values read back after reopening.
@Suite struct FinanceCorpusTests {
    @Test func accountsEntriesAndBudgetsLiveThroughCommitsAndReopen() throws {
        let file = try CorpusFile()
        var store: Store? = try Store(schema: StrataModel.schema, path: file.path)
        let checking = try store!.insert(Account(name: "Checking", openedAt: day(0), position: 1))
        let card = try store!.insert(Account(name: "Card", kind: .credit, currency: .USD, openedAt: day(1), position: 0))
        let food = try store!.insert(Category(name: "Food"))
        let groceries = try store!.insert(Category(name: "Groceries", parentID: food.id))
        _ = try store!.insert(Budget(month: day(0), limit: Decimal(string: "400.00")!, categoryID: groceries.id))
        // Amounts in cents at the edges of what a ledger stores, read back exactly.
        let amounts = [1, -1, Int.max, Int.min, 0]
        var entries: [Entry] = []
        for (n, amount) in amounts.enumerated() {
            entries.append(try store!.insert(Entry(
                amount: amount, bookedAt: day(n), payee: "Payee \(n)", accountID: n.isMultiple(of: 2) ? checking.id : card.id,
                categoryID: n == 0 ? groceries.id : nil)))
        }

        let (controller, list) = try ResultsController.replaying(store: store!, request: Entry.Fetches.byAccount)
        // Sections follow the accounts' position, not their names; entries newest first.
        #expect(controller.snapshot.sections.map { $0.value.object?.name } == ["Card", "Checking"])
        #expect(controller.snapshot.sections[1].items.map(\.bookedAt) == [day(4), day(2), day(0)])

        // Commits: a new entry, an entry moved to the other account, one cleared, one deleted.
        try store!.write { db in
            _ = try db.insert(Entry(amount: 500, bookedAt: day(9), accountID: card.id))
            var moved = entries[1]
            moved.accountID = checking.id
            _ = try db.update(moved)
            var cleared = entries[2]
            cleared.cleared = true
            _ = try db.update(cleared)
            _ = try db.delete(entries[3])
        }
        // The card account moves to the end: a section move in the same kind of batch.
        var reordered = card
        reordered.position = 5
        _ = try store!.update(reordered)
        #expect(try list.problems(controller, store: store!) == [])
        #expect(controller.snapshot.sections.map { $0.value.object?.name } == ["Checking", "Card"])

        // Generated fetches with parameters, against a filter written by hand.
        let large = try store!.fetchAll(Entry.Fetches.largerThan(limit: 1))
        let all = try store!.fetchAll(Entry.self)
        #expect(large.map(\.id) == all.filter { $0.amount > 1 }.sorted { $0.amount > $1.amount }.map(\.id))
        #expect(try store!.fetchAll(Entry.Fetches.uncleared).allSatisfy { !$0.cleared })

        // deny: an account with entries cannot be deleted, and nothing changes.
        #expect(throws: DeleteDeniedError.self) { try store!.delete(checking) }
        #expect(try store!.fetchOne(Account.self, id: checking.id) != nil)
        // cascade through the category tree: the child category and its budget go, the
        // entry that used it keeps no category (nullify).
        #expect(try store!.delete(food))
        #expect(try store!.fetchAll(Category.self).isEmpty)
        #expect(try store!.fetchAll(Budget.self).isEmpty)
        #expect(try store!.fetchOne(Entry.self, id: entries[0].id)?.categoryID == nil)
        #expect(try list.problems(controller, store: store!) == [])

        // A unique account name is refused, the transaction rolled back.
        #expect(throws: (any Error).self) {
            try store!.write { db in
                _ = try db.insert(Account(name: "Savings", openedAt: day(3)))
                _ = try db.insert(Account(name: "Checking", openedAt: day(3)))
            }
        }
        #expect(try store!.fetchAll(Account.self).map(\.name).sorted() == ["Card", "Checking"])
        // The transaction that broke the unique constraint left nothing: "Savings" is free.
        #expect(try store!.fetchCount(Account.self, where: Account.name == "Savings") == 0)

        // Splits stored as JSON, and the attributes every audited record inherits.
        var split = try #require(try store!.fetchOne(Entry.self, id: entries[0].id))
        split.splits = [Split(categoryName: "Food", cents: 1), Split(categoryName: "Ünïcode ✓", cents: Int.min)]
        #expect(try store!.update(split))
        #expect(try store!.update(split) == false)  // an equal value stores equal JSON: no update
        func madeBy<A: Audited>(_ type: A.Type, _ who: String) throws -> Int {
            try store!.fetchCount(A.self, where: A.createdBy == who)
        }
        #expect(try madeBy(Account.self, "me") == 2)
        #expect(try madeBy(Entry.self, "me") == 5)

        // Fixed date defaults (one exactly at its min), and the rules on names and payees.
        let category = try store!.insert(Category(name: "Rent"))
        #expect(try store!.insert(Budget(limit: 900, categoryID: category.id)).month == Date(timeIntervalSince1970: 946_684_800))
        let savings = try store!.insert(Account(name: "Savings"))
        #expect(savings.openedAt == Date(timeIntervalSince1970: 946_684_800))  // 2000-01-01T00:00:00Z
        #expect(throws: RuleViolationError.self) { _ = try store!.insert(Account(name: "")) }
        #expect(throws: RuleViolationError.self) { _ = try store!.insert(Account(name: String(repeating: "n", count: 41))) }
        _ = try store!.insert(Account(name: String(repeating: "n", count: 40)))
        #expect(throws: RuleViolationError.self) {
            _ = try store!.insert(Entry(amount: 1, bookedAt: day(1), payee: String(repeating: "p", count: 121), accountID: card.id))
        }
        #expect(throws: RuleViolationError.self) {
            _ = try store!.insert(Account(name: "Old", openedAt: Date(timeIntervalSince1970: -0.001)))
        }
        _ = try store!.insert(Account(name: "Epoch", openedAt: Date(timeIntervalSince1970: 0)))

        // Reopened, every value reads back as written.
        let before = try store!.fetchAll(Entry.self)
        try store!.close()
        store = nil
        let reopened = try Store(schema: StrataModel.schema, path: file.path)
        #expect(try reopened.fetchAll(Entry.self) == before)
        #expect(Set(try reopened.fetchAll(Entry.self).map(\.amount)).isSuperset(of: [amounts[0], amounts[2], amounts[4]]))
        #expect(try reopened.fetchAll(Budget.self).map(\.categoryID) == [category.id])
    }
}
