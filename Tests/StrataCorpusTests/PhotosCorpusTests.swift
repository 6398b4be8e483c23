import CorpusPhotos
import Foundation
import Strata
import Testing

/// The photo library's model: binary data, URLs, UUIDs, people linked many-to-many, and an
/// orphans section for photos in no album.
@Suite struct PhotosCorpusTests {
    @Test func albumsPeopleAndOrphansStayLive() throws {
        let file = try CorpusFile()
        let store = try Store(schema: StrataModel.schema, path: file.path)
        let trip = try store.insert(Album(title: "Trip", createdAt: day(0)))
        let pets = try store.insert(Album(title: "Pets", createdAt: day(1)))
        // Bytes a thumbnail may hold, NUL and 0xFF included, and an empty one.
        let thumbnails: [Data?] = [Data([0, 255, 0, 1]), Data(), nil, Data(repeating: 0xAB, count: 70_000)]
        var photos: [Photo] = []
        for (n, thumbnail) in thumbnails.enumerated() {
            photos.append(try store.insert(Photo(
                file: URL(string: "file:///photos/IMG_\(n).HEIC")!, takenAt: day(n), width: Int32.max, height: 1,
                favorite: n.isMultiple(of: 2), latitude: n == 0 ? -90 : nil, longitude: n == 0 ? 180 : nil,
                thumbnail: thumbnail, albumID: n < 2 ? trip.id : (n == 2 ? pets.id : nil))))
        }
        let ada = try store.insert(Person(name: "Ada"))
        let bob = try store.insert(Person(name: "Bob"))
        try store.write { db in
            try db.link(photos[0].id, Photo.people, ada.id)
            try db.link(photos[1].id, Photo.people, ada.id)
            try db.link(photos[1].id, Photo.people, bob.id)
        }

        let (controller, list) = try ResultsController.replaying(store: store, request: Photo.Fetches.byAlbum)
        #expect(controller.snapshot.sections.map(\.value) == [.value(pets), .value(trip), .orphans])

        // Deleting an album nullifies its photos: they join the orphans section.
        #expect(try store.delete(trip))
        try list.check(controller, store: store)
        #expect(controller.snapshot.sections.map(\.value) == [.value(pets), .orphans])
        #expect(controller.snapshot.sections[1].items.map(\.id) == [photos[3].id, photos[1].id, photos[0].id])

        #expect(try store.fetchAll(Photo.Fetches.withPerson(name: "Ada")).map(\.id) == [photos[1].id, photos[0].id])
        #expect(try store.fetchAll(Photo.Fetches.favorites).map(\.id) == [photos[2].id, photos[0].id])
        #expect(try store.fetchAll(Person.Fetches.byLetter).map(\.name) == ["Ada", "Bob"])
        // Every value read back as written: bytes, URL, extremes, UUIDs unique per photo.
        let read = try store.fetchAll(Photo.self).sorted { $0.takenAt < $1.takenAt }
        #expect(read.map(\.thumbnail) == thumbnails)
        #expect(read[0].latitude == -90 && read[0].width == Int32.max)
        #expect(Set(read.map(\.assetID)).count == read.count)
        // A duplicate asset id is refused.
        var copy = read[0]
        copy.id = .unsaved
        #expect(throws: (any Error).self) { _ = try store.insert(copy) }
    }
}
