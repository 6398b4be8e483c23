// The other process of the change-history benchmarks (`CrossProcess.*` in StrataBenchmarks):
//
//     StrataHistoryWriter PATH RUN COUNT NOTES
//
// retitles COUNT distinct notes of the store at PATH, one per commit, 5 to 25 ms apart, each
// titled "Bench RUN I …", and prints `I <monotonic ns>` once each commit returned.
import Dispatch
import Foundation
import Strata

/// The same generator as the benchmarks' (SplitMix64).
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let run = Int(arguments[1]), let count = Int(arguments[2]), let noteCount = UInt64(arguments[3])
else {
    FileHandle.standardError.write(Data("usage: StrataHistoryWriter PATH RUN COUNT NOTES\n".utf8))
    exit(2)
}
do {
    let store = try Store(schema: NotesModel.schema, path: arguments[0], options: Store.Options(externalCommitInterval: nil))
    var random = SplitMix64(seed: UInt64(100 + run))
    // Let the parent's controller settle.
    usleep(50_000)
    // Distinct notes, so that no commit's title is overwritten before its batch.
    let start = random.next(upperBound: noteCount)
    for index in 0..<count {
        let id = Int64((start + UInt64(index) * 7_919) % noteCount) + 1
        let title = "Bench \(run) \(index) " + String(format: "Note %08llx", random.next() & 0xFFFF_FFFF)
        try store.write { db in try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: [title, id]) }
        let time = DispatchTime.now().uptimeNanoseconds
        FileHandle.standardOutput.write(Data("\(index) \(time)\n".utf8))
        usleep(UInt32(5_000 + random.next(upperBound: UInt64(20_000))))
    }
    try store.close()
} catch {
    FileHandle.standardError.write(Data("history writer: \(error)\n".utf8))
    exit(1)
}
