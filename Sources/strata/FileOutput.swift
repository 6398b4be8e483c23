import Foundation
import StrataCodegen

/// Writes generated files so that a build sees either the old or the new bytes, never half.
enum FileOutput {
    /// Writes each file whose bytes differ from what is on disk, through a temporary file
    /// in the same directory and a rename. Files whose bytes are equal are left untouched
    /// (their modification dates too).
    static func write(_ files: [GeneratedFile], to directory: URL) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        for file in files {
            let destination = directory.appendingPathComponent(file.name)
            let bytes = Data(file.contents.utf8)
            if let existing = manager.contents(atPath: destination.path), existing == bytes { continue }
            let temporary = directory.appendingPathComponent(".\(file.name).\(ProcessInfo.processInfo.processIdentifier).tmp")
            try bytes.write(to: temporary)
            if rename(temporary.path, destination.path) != 0 {
                let code = errno
                try? manager.removeItem(at: temporary)
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(code))])
            }
        }
    }

    /// Removes the `*.swift` files of `directory` that an earlier run generated for the same
    /// model (they start with `header`) and that are not in `keep`: the output of a model
    /// file that was renamed or removed would otherwise declare its types twice.
    static func removeStale(in directory: URL, keep: Set<String>, header: String) throws {
        let manager = FileManager.default
        for name in try manager.contentsOfDirectory(atPath: directory.path)
        where name.hasSuffix(".swift") && !keep.contains(name) {
            let url = directory.appendingPathComponent(name)
            guard let handle = try? FileHandle(forReadingFrom: url) else { continue }
            let start = (try? handle.read(upToCount: header.utf8.count)) ?? Data()
            try? handle.close()
            if start == Data(header.utf8) { try manager.removeItem(at: url) }
        }
    }
}
