import Foundation

/// Where a target's Strata model lives, for both plugins: the target's own `Models/` folder
/// when it has one, else `Models/` at the package root.
struct ModelsFolder {
    /// `Models/` in the target's folder.
    let own: URL
    /// `Models/` at the package root.
    let package: URL

    init(targetDirectory: URL, packageDirectory: URL) {
        own = Self.folder(in: targetDirectory)
        package = Self.folder(in: packageDirectory)
    }

    /// The folder the target's model is read from, or nil when neither exists.
    var existing: URL? { Self.exists(own) ? own : Self.exists(package) ? package : nil }

    /// `Models/` in `directory`, whether it exists or not.
    static func folder(in directory: URL) -> URL {
        directory.appendingPathComponent("Models", isDirectory: true)
    }

    /// Whether `folder` exists and is a folder.
    static func exists(_ folder: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
