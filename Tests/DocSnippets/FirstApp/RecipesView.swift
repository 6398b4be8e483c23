#if canImport(SwiftUI)
import Strata
import SwiftUI

/// The recipes by course; a swipe deletes one, the button adds one, a tap tags it.
struct RecipesView: View {
    let store: Store
    @State private var recipes: LiveResults<Recipe, Course>

    init(store: Store) throws {
        self.store = store
        _recipes = State(initialValue: try LiveResults(store: store, request: Recipe.Fetches.byCourse))
    }

    var body: some View {
        List {
            ForEach(recipes.sections) { section in
                CourseSection(section: section, store: store)
            }
        }
        .toolbar {
            Button("Add") {
                try? store.insert(Recipe(name: "New recipe", course: .main))
            }
        }
    }
}

/// One course. The list follows each commit by itself: the actions only write.
struct CourseSection: View {
    let section: LiveSection<Recipe, Course>
    let store: Store

    var body: some View {
        Section("\(section.value)") {
            ForEach(section.items) { recipe in
                Button(recipe.name) {
                    try? store.write { db in
                        let quick = try db.fetchAll(Tag.self, where: Tag.name == "quick").first
                            ?? db.insert(Tag(name: "quick"))
                        try db.link(recipe.id, Recipe.tags, quick.id)
                    }
                }
            }
            .onDelete { offsets in
                let doomed = offsets.map { section.items[$0] }
                try? store.write { db in
                    for recipe in doomed { try db.delete(recipe) }
                }
            }
        }
    }
}
#endif
