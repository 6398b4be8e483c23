// The Messaging app of the model corpus: its model is Models/Messaging.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target.
import Strata
import Foundation

/// A link's preview, stored as JSON in `Message.preview`.
public struct LinkPreview: Codable, Hashable, Sendable {
    public var url: URL
    public var title: String?
    public var imageData: Data?

    public init(url: URL, title: String? = nil, imageData: Data? = nil) {
        self.url = url
        self.title = title
        self.imageData = imageData
    }
}
