import Testing
import Strata
@Test func fixtureColumnsBuildPredicates() {
    let p = Note.title.contains("x", .caseInsensitive) && Note.notebook.name == "Work"
    #expect(p.node == .and([
        .match(.path(["title"]), .contains, .value("x".databaseValue), .caseInsensitive),
        .compare(.path(["notebook", "name"]), .equal, .value("Work".databaseValue)),
    ]))
}
