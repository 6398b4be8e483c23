// The Photos app of the model corpus: its model is Models/Photos.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target. The Codable types
// its attributes store are the app's own.
import Foundation
import Strata

/// Camera metadata of a photo, stored as JSON in `Photo.exif`.
public struct Exif: Codable, Hashable, Sendable {
    public var camera: String
    public var iso: Int
    public var exposure: Double
    public var lens: String?
    public var tags: [String: String]

    public init(camera: String, iso: Int, exposure: Double, lens: String? = nil, tags: [String: String] = [:]) {
        self.camera = camera
        self.iso = iso
        self.exposure = exposure
        self.lens = lens
        self.tags = tags
    }
}

/// A chapter mark of a video.
public struct Chapter: Codable, Hashable, Sendable {
    public var title: String
    public var start: Double

    public init(title: String, start: Double) {
        self.title = title
        self.start = start
    }
}
