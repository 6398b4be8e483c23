import GRDB

/// The state of a ``SectionedIndex`` build from a fetch in the results' order: the items of
/// each section, in order, and where the raw keys met so far placed their items.
///
/// ``SectionedIndex`` reads and writes it while it builds (`beginBuild`, `appendFetched`,
/// `finishBuild`).
struct IndexBuild {
    /// The bucket of each section met, numbered in the order met.
    var buckets: [SectionID: Int] = [:]
    /// The items of each bucket, in the order met.
    var items: [[Int64]] = []
    /// The keys of each bucket's first item.
    var firstKeys: [IndexKeys] = []
    /// The section of the last item placed, and its bucket.
    var last: (id: SectionID, bucket: Int)?
    /// What an integer (or NULL) raw key resolved to: most keys are (entity sections'
    /// object ids, or the one NULL of a request without sections), and a row is then
    /// placed without hashing a section id. Keys from 0 to ``smallKeyLimit`` (most section
    /// objects' ids) are found by offset, others by hash. A small key's (and NULL's) bucket
    /// and slot are plain values, read per row without copying a section id (and its
    /// retains); its section, needed by the first row only, is kept beside them.
    private var smallKeys: [Quick] = []
    private var smallKeySections: [SectionID?] = []
    private var nullKey = Quick()
    private var nullKeySection: SectionID?
    private var integerKeys: [Int64: Resolved] = [:]
    private static var smallKeyLimit: Int64 { 4_096 }

    private struct Quick {
        /// The bucket; -1: hidden; -2: not resolved.
        var bucket: Int32 = -2
        var slot: UInt32 = .max

        init() {}
        init(_ resolved: Resolved) {
            bucket = resolved.bucket.map { Int32($0) } ?? -1
            slot = resolved.slot
        }

        func resolved(in section: SectionID?) -> Resolved? {
            bucket == -2 ? nil : Resolved(section: section, bucket: bucket < 0 ? nil : Int(bucket), slot: slot)
        }
    }

    /// What a raw key resolved to: its section and bucket (nil: hidden).
    struct Resolved {
        var section: SectionID?
        var bucket: Int?
        /// The section's slot in a compact index.
        var slot: UInt32 = .max
    }

    /// What the integer or NULL `rawKey` resolved to before, if it did.
    func resolved(_ rawKey: DatabaseValue) -> Resolved? {
        switch rawKey.storage {
        case .int64(let raw) where raw >= 0 && raw < Int64(smallKeys.count): smallKeys[Int(raw)].resolved(in: smallKeySections[Int(raw)])
        case .int64(let raw) where raw < 0 || raw >= Self.smallKeyLimit: integerKeys[raw]
        case .null: nullKey.resolved(in: nullKeySection)
        default: nil
        }
    }

    /// Remembers what the integer raw key `raw` resolved to.
    mutating func setResolved(_ resolved: Resolved, for raw: Int64) {
        guard raw >= 0 && raw < Self.smallKeyLimit else {
            integerKeys[raw] = resolved
            return
        }
        if raw >= Int64(smallKeys.count) {
            smallKeys.append(contentsOf: repeatElement(Quick(), count: Int(raw) + 1 - smallKeys.count))
            smallKeySections.append(contentsOf: repeatElement(nil, count: Int(raw) + 1 - smallKeySections.count))
        }
        smallKeys[Int(raw)] = Quick(resolved)
        smallKeySections[Int(raw)] = resolved.section
    }

    /// Remembers what the NULL raw key resolved to.
    mutating func setResolvedNull(_ resolved: Resolved) {
        nullKey = Quick(resolved)
        nullKeySection = resolved.section
    }

    /// Appends the item `id`, new to `keys`, when `rawKey` resolved before to a shown
    /// section (a compact build's common case); false otherwise.
    mutating func appendResolved(_ id: Int64, rawKey: DatabaseValue, to keys: inout CompactIndexKeys) -> Bool {
        let bucket: Int, slot: UInt32
        switch rawKey.storage {
        case .int64(let raw) where raw >= 0 && raw < Int64(smallKeys.count):
            let quick = smallKeys[Int(raw)]
            guard quick.bucket >= 0 else { return false }
            (bucket, slot) = (Int(quick.bucket), quick.slot)
        case .null:
            guard nullKey.bucket >= 0 else { return false }
            (bucket, slot) = (Int(nullKey.bucket), nullKey.slot)
        default:
            guard let resolved = resolved(rawKey), let resolvedBucket = resolved.bucket else { return false }
            (bucket, slot) = (resolvedBucket, resolved.slot)
        }
        keys.append(id, slot: slot, rawKey: rawKey)
        items[bucket].append(id)
        return true
    }
}
