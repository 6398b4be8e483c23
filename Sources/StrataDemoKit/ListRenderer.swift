import Strata

/// Which sections and rows of a list changed, in the new index space, as markers.
struct ListMarks {
    var sections: [Int: String] = [:]
    var rows: [ItemPath: String] = [:]

    init() {}

    /// The markers of `batch`, which turned `old` into `new`.
    init(_ batch: ChangeBatch, old: ResultsSnapshot<Note, Notebook>, new: ResultsSnapshot<Note, Notebook>) {
        for index in batch.sectionInserts { sections[index] = "+" }
        for move in batch.sectionMoves { sections[move.to] = ">" }
        for index in batch.movedAndUpdatedSections { sections[index] = ">~" }
        for index in batch.sectionUpdates {
            if let n = new.index(ofSection: old.sections[index].id) { sections[n] = "~" }
        }
        for path in batch.itemInserts { rows[path] = "+" }
        for move in batch.itemMoves { rows[move.to] = ">" }
        for path in batch.movedAndUpdatedItems { rows[path] = ">~" }
        for path in batch.itemUpdates {
            switch old[path] {
            case .item(let item):
                if let n = new.path(of: item.id) { rows[n] = "~" }
            case .group:
                if let s = new.index(ofSection: old.sections[path.section].id) {
                    rows[ItemPath(section: s, item: new.numberOfRows(inSection: s) - 1)] = "~"
                }
            }
        }
    }
}

/// Renders snapshots, rows and batches as lines of at most 80 columns.
struct ListRenderer {
    var style: TextStyle

    static let titleWidth = 34
    /// Section names are cut to this width, so that `section 1 A → B` lines fit.
    static let nameWidth = 28

    /// One line per section header and per row; markers in the first three columns.
    func lines(of snapshot: ResultsSnapshot<Note, Notebook>, marks: ListMarks = ListMarks()) -> [String] {
        var lines: [String] = []
        if snapshot.sections.isEmpty { lines.append("   (no sections)") }
        for (s, section) in snapshot.sections.enumerated() {
            let count = section.items.count, hidden = section.groupedItems.count
            var detail = count == 0 && hidden == 0 ? "empty" : count == 1 ? "1 note" : "\(count) notes"
            if hidden > 0 { detail += ", \(hidden) hidden" }
            let name = Self.name(of: section)
            let padding = String(repeating: " ", count: max(1, 39 - name.count))
            lines.append(mark(marks.sections[s]) + style.bold(name) + padding + style.dim(detail))
            for (r, row) in section.rows.enumerated() {
                lines.append(mark(marks.rows[ItemPath(section: s, item: r)]) + "   " + describe(row))
            }
        }
        return lines
    }

    /// `#3 Buy milk   pinned high` or `(2 hidden: #2 #6)`.
    func describe(_ row: ResultsRow<Note>) -> String {
        switch row {
        case .item(let note):
            let label = Self.label(of: note)
            let flags = Self.flags(of: note)
            if flags.isEmpty { return label }
            let padding = String(repeating: " ", count: max(1, Self.titleWidth + 6 - label.count))
            return label + padding + style.dim(flags)
        case .group(let notes):
            return style.dim("(\(notes.count) hidden: " + notes.map { "#\($0.id)" }.joined(separator: " ") + ")")
        }
    }

    /// A row without flags, for callback lines: `#3 Buy milk` or `group row (2 hidden)`.
    static func shortDescription(of row: ResultsRow<Note>) -> String {
        switch row {
        case .item(let note): label(of: note)
        case .group(let notes): "group row (\(notes.count) hidden)"
        }
    }

    static func label(of note: Note) -> String {
        "#\(note.id) \(clipped(note.title, width: titleWidth))"
    }

    static func flags(of note: Note) -> String {
        var flags: [String] = []
        if note.pinned { flags.append("pinned") }
        if note.priority != .normal { flags.append(note.priority.rawValue) }
        return flags.joined(separator: " ")
    }

    /// The notebook's name, at most ``nameWidth`` columns, or `(no notebook)`.
    static func name(of section: ResultsSection<Note, Notebook>) -> String {
        switch section.value {
        case .value(let notebook): clipped(notebook.name, width: nameWidth)
        case .orphans: "(no notebook)"
        }
    }

    private func mark(_ mark: String?) -> String {
        guard let mark else { return "    " }
        return " " + style.marker(mark) + String(repeating: " ", count: 3 - mark.count)
    }
}

/// `text` cut to `width` columns, its last one an ellipsis when it was longer.
func clipped(_ text: String, width: Int) -> String {
    text.count > width ? String(text.prefix(max(0, width - 1))) + "…" : text
}

/// `text` broken at spaces into lines of at most `width` columns, continuation lines
/// indented; a word too long for a line is clipped.
func wrapped(_ text: String, width: Int = 80, indent: String = "  ") -> [String] {
    let lead = String(text.prefix { $0 == " " })
    var lines: [String] = []
    var current = lead
    for word in text.dropFirst(lead.count).split(separator: " ", omittingEmptySubsequences: false) {
        let candidate = current == lead ? current + word : current + " " + word
        if candidate.count > width, current != lead {
            lines.append(current)
            current = indent + word
        } else {
            current = candidate
        }
    }
    lines.append(current)
    return lines.map { clipped($0, width: width) }
}
