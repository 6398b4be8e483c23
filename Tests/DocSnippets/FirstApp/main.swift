import Strata

// Open a store: in memory, so that every run starts empty.
// (`Store(schema: StrataModel.schema, path: "recipes.sqlite")` keeps a file.)
let store = try Store.inMemory(schema: StrataModel.schema)

// Insert: each insert returns the object as stored, with its id.
let family = try store.insert(Cookbook(title: "Family"))
let quick = try store.insert(Tag(name: "quick"))
var soup = try store.insert(Recipe(name: "Leek soup", course: .starter, cookbookID: family.id))
let cake = try store.insert(Recipe(name: "Lemon cake", course: .dessert, cookbookID: family.id))
let stew = try store.insert(Recipe(name: "Bean stew", cookbookID: family.id))
let salad = try store.insert(Recipe(name: "Green salad", course: .starter))   // in no cookbook

// Update: change the value, then write it (only the columns that changed are written).
soup.minutes = 20
try store.update(soup)

// Delete.
try store.delete(stew)

// Link and unlink a many-to-many: by ids, in one write transaction.
try store.write { db in
    try db.link(soup.id, Recipe.tags, quick.id)
    try db.link(salad.id, Recipe.tags, quick.id)
    try db.link(cake.id, Recipe.tags, quick.id)
    try db.unlink(cake.id, Recipe.tags, quick.id)
}
let quickOnes = try store.fetchAll(Recipe.Fetches.tagged(tag: "quick"))
print("quick:", quickOnes.map(\.name))
let soupTags = try store.read { db in try db.fetchAll(Recipe.tags, of: soup.id) }
print("soup's tags:", soupTags.map(\.name))

// Keyed sections: one per course that has recipes; `section.value.key` is the course.
let byCourse = try ResultsController(store: store, request: Recipe.Fetches.byCourse)
for section in byCourse.snapshot.sections {
    if let course = section.value.key { print(course, section.items.map(\.name)) }
}

// Entity sections: one per cookbook, then the recipes in none;
// `section.value.object` is the cookbook.
let byCookbook = try ResultsController(store: store, request: Recipe.Fetches.byCookbook)
for section in byCookbook.snapshot.sections {
    print(section.value.object?.title ?? "no cookbook", section.items.map(\.name))
}

// A change and the one batch it delivers. Take the sequence first: it starts with a reload
// of the current snapshot, then brings one batch per commit.
let updates = byCourse.updates
try store.insert(Recipe(name: "Apple pie", course: .dessert, cookbookID: family.id))
for try await update in updates {
    guard case .batch(let batch, let snapshot) = update else { continue }   // the reload
    print("inserted at:", batch.itemInserts)
    for section in snapshot.sections {
        print(section.value, section.items.map(\.name))
    }
    break
}
