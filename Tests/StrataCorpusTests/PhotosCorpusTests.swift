import CorpusPhotos
import Foundation
import Strata
import StrataTestSupport
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
                file: URL(string: "file:///photos/IMG_\(n).HEIC")!, takenAt: day(n), favorite: n.isMultiple(of: 2),
                albumID: "cloud-\(n)", width: Int32.max, height: 1, latitude: n == 0 ? -90 : nil, longitude: n == 0 ? 180 : nil,
                thumbnail: thumbnail,
                exif: n == 1 ? Exif(camera: "X100 \u{1F4F7}", iso: Int.max, exposure: 1.0 / 4000, tags: ["z": "last", "a": ""]) : nil,
                albumRef: n < 2 ? trip.id : (n == 2 ? pets.id : nil))))
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
        #expect(try list.problems(controller, store: store) == [])
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
        #expect(read[1].exif == Exif(camera: "X100 \u{1F4F7}", iso: Int.max, exposure: 1.0 / 4000, tags: ["z": "last", "a": ""]))
        #expect(read[0].exif == nil)

        // Videos share Media's attributes in their own table; generic code reads both kinds.
        let chapters = [Chapter(title: "Intro", start: 0), Chapter(title: "Ende — fin", start: 61.5)]
        _ = try store.insert(Video(file: URL(string: "file:///v/1.mov")!, takenAt: day(7), favorite: true, duration: 62, chapters: chapters))
        _ = try store.insert(Video(file: URL(string: "file:///v/2.mov")!, takenAt: day(8), duration: 1, chapters: []))
        func favorites<M: Media>(_ type: M.Type) throws -> [URL] {
            try store.fetchAll(M.self, where: M.favorite == true, sortedBy: [M.takenAt.descending]).map(\.file)
        }
        #expect(try favorites(Video.self) == [URL(string: "file:///v/1.mov")!])
        #expect(try favorites(Photo.self).count == 2)
        #expect(try store.fetchAll(Video.self).map(\.chapters) == [chapters, []])
        // Stored JSON another program broke is a typed error naming the row, never a default.
        try store.write { db in try db.execute(sql: "UPDATE Video SET chapters = '[{\"title\": 1}]'") }
        #expect(throws: ValueDecodingError.self) { _ = try store.fetchAll(Video.self) }

        // The server's album id and Strata's key live side by side under their own names.
        #expect(read.map(\.albumID) == ["cloud-0", "cloud-1", "cloud-2", "cloud-3"])
        // Coordinates at their bounds pass; the first value past one is refused, naming the
        // photo and the rule, and nothing is written. A transient selection is never stored.
        var edge = read[2]
        edge.latitude = 90
        edge.longitude = -180
        edge.selected = true
        #expect(try store.update(edge))
        #expect(try store.fetchOne(Photo.self, id: edge.id)?.latitude == 90)
        #expect(try store.fetchOne(Photo.self, id: edge.id)?.selected == false)
        edge.latitude = 90.000_000_1
        #expect(throws: RuleViolationError(entity: "Photo", id: edge.id.rawValue, member: "latitude", rule: .max("90"))) {
            try store.update(edge)
        }
        #expect(throws: RuleViolationError.self) {
            try store.write { db in try db.execute(sql: "UPDATE Photo SET width = 0 WHERE id = ?", arguments: [edge.id]) }
        }
        #expect(try store.fetchOne(Photo.self, id: edge.id)?.width == Int32.max)
        // The named, descending index is in the file under its name.
        let indexes = try store.read { db in try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'photos_newest_first'") }
        #expect(indexes == ["CREATE INDEX \"photos_newest_first\" ON \"Photo\"(\"takenAt\" DESC)"])

        // A duplicate asset id is refused.
        var copy = read[0]
        copy.id = .unsaved
        #expect(throws: (any Error).self) { _ = try store.insert(copy) }
    }
}
