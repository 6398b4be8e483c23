import Foundation
import Testing

@testable import StrataCodegen

/// The plugins cannot import StrataCodegen, so they compile its naming rule from
/// `Plugins/PluginsShared/`, which each plugin folder links to. These tests keep it one rule:
/// the file the plugins compile is the generator's own, not a copy that could drift.
@Suite struct PluginSharingTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func resolved(_ path: String) -> String {
        packageRoot.appendingPathComponent(path).resolvingSymlinksInPath().path
    }

    static func isSymbolicLink(_ path: String) -> Bool {
        let attributes = try? FileManager.default.attributesOfItem(atPath: packageRoot.appendingPathComponent(path).path)
        return attributes?[.type] as? FileAttributeType == .typeSymbolicLink
    }

    @Test(arguments: ["StrataPlugin", "StrataGenerate"])
    func eachPluginLinksTheSharedFolder(plugin: String) {
        #expect(Self.isSymbolicLink("Plugins/\(plugin)/PluginsShared"))
        #expect(Self.resolved("Plugins/\(plugin)/PluginsShared") == Self.resolved("Plugins/PluginsShared"))
    }

    @Test(arguments: ["StrataPlugin", "StrataGenerate"])
    func pluginsCompileTheGeneratorsNamingRule(plugin: String) {
        #expect(Self.isSymbolicLink("Plugins/PluginsShared/OutputNaming.swift"))
        #expect(
            Self.resolved("Plugins/\(plugin)/PluginsShared/OutputNaming.swift")
                == Self.resolved("Sources/StrataCodegen/OutputNaming.swift"))
    }

    /// The build plugin reports the first clash of `clashes(in:)`; the generator, all of them.
    @Test func clashesNameTheEarliestInputFirst() {
        let files = ["M/A.yaml", "M/B.yml", "N/a.yml", "M/X+Schema.yaml"]
        let names = OutputNaming.fileNames(modelFiles: files, modelName: "X")
        #expect(names == ["A.strata.swift", "B.strata.swift", "a.strata.swift", "X+Schema.strata.swift", "X+Schema.strata.swift"])
        let clashes = OutputNaming.clashes(in: names)
        #expect(clashes.map(\.first) == [0, 3])
        #expect(clashes.map(\.second) == [2, 4])
        #expect(clashes.map(\.name) == ["a.strata.swift", "X+Schema.strata.swift"])
        let result = OutputNaming.outputFileNames(modelFiles: files, modelName: "X")
        #expect(throws: OutputNaming.NamingError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.messages == [
                "M/A.yaml and N/a.yml would both generate 'a.strata.swift'; rename one of them",
                "M/X+Schema.yaml and the schema file of model 'X' would both generate 'X+Schema.strata.swift'; rename one of them",
            ])
        }
    }
}
