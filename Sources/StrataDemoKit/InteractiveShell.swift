import Strata

/// The `--interactive` mode: one command per line, each printed like a scripted step.
public enum InteractiveShell {
    /// The `help` text.
    public static let help = """
        Commands (names are case-insensitive; a note is #id, id or its title; quote
        names with spaces: add "Reading list" Dune):
          add <notebook> <title>     add a note (and the notebook if it is new)
          rename <notebook> <new>    rename a notebook (a section update)
          position <notebook> <n>    re-order a notebook (a section move)
          move <note> <notebook>     move a note to another notebook
          delete <notebook|note|tag> delete (notebooks cascade, tags on notes deny)
          filter on|off              hide low-priority notes as group rows, or not
          pause | resume             stop tracking; refetch and reload
          list                       print the controller's snapshot
          help | quit                (lines starting with # are comments)
        """

    /// Reads and runs commands until `quit` or the end of input.
    public static func run(on session: DemoSession, input: LineSource, output: DemoOutput) {
        output.line("Interactive mode: type `help` for the commands, `quit` or end of input to stop.")
        output.line()
        session.printList(title: "list")
        while let raw = input.readLine() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if !input.isTerminal {
                for part in wrapped("strata> " + line, indent: "        ") { output.line(part) }
            }
            if !execute(line, on: session, output: output) { break }
        }
    }

    /// The words of a command line: split at spaces, except inside double quotes, which
    /// are removed (`add "Reading list" Dune`); nil when a quote is not closed.
    static func words(of line: String) -> [String]? {
        var words: [String] = []
        var current = "", quoted = false, started = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " " && !quoted {
                if started { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
                started = true
            }
        }
        if quoted { return nil }
        if started { words.append(current) }
        return words
    }

    /// Runs one command; false to stop.
    static func execute(_ line: String, on session: DemoSession, output: DemoOutput) -> Bool {
        guard let words = Self.words(of: line) else {
            output.line("error: a \" is not closed")
            return true
        }
        let command = words[0].lowercased()
        let arguments = Array(words.dropFirst())
        let day = DemoSession.day
        func usage(_ text: String) { output.line("usage: " + text) }
        func missing(_ what: String) -> DemoCommandError { DemoCommandError("there is no \(what)") }
        switch command {
        case "quit", "exit", "q":
            return false
        case "help", "?":
            output.line(help)
        case "list", "ls":
            session.printList(title: "list")
        case "add":
            guard arguments.count >= 2 else { usage("add <notebook> <title>"); break }
            let title = arguments.dropFirst().joined(separator: " ")
            session.step(line) {
                let notebook = try session.notebook(named: arguments[0])
                try session.store.write { db in
                    var id = notebook?.id
                    if id == nil {
                        let last = try db.fetchAll(Notebook.Fetches.ordered).map(\.position).max() ?? -1
                        id = try db.insert(Notebook(name: arguments[0], createdAt: day, position: last + 1)).id
                    }
                    try db.insert(Note(title: title, updatedAt: day, notebookID: id))
                }
            }
        case "rename":
            guard arguments.count >= 2 else { usage("rename <notebook> <new name>"); break }
            session.step(line) {
                guard var notebook = try session.notebook(named: arguments[0]) else { throw missing("notebook named \"\(arguments[0])\"") }
                notebook.name = arguments.dropFirst().joined(separator: " ")
                try session.store.write { db in try db.update(notebook) }
            }
        case "position":
            guard arguments.count == 2, let position = Int(arguments[1]) else { usage("position <notebook> <number>"); break }
            session.step(line) {
                guard var notebook = try session.notebook(named: arguments[0]) else { throw missing("notebook named \"\(arguments[0])\"") }
                notebook.position = position
                try session.store.write { db in try db.update(notebook) }
            }
        case "move":
            guard arguments.count >= 2 else { usage("move <note> <notebook>"); break }
            let noteName = arguments.dropLast().joined(separator: " ")
            session.step(line) {
                guard var note = try session.note(matching: noteName) else { throw missing("note \"\(noteName)\"") }
                guard let notebook = try session.notebook(named: arguments.last!) else { throw missing("notebook named \"\(arguments.last!)\"") }
                note.notebookID = notebook.id
                try session.store.write { db in try db.update(note) }
            }
        case "delete", "rm":
            guard !arguments.isEmpty else { usage("delete <notebook|note|tag>"); break }
            let name = arguments.joined(separator: " ")
            session.step(line) {
                if let notebook = try session.notebook(named: name) {
                    try session.store.write { db in _ = try db.delete(notebook) }
                } else if let note = try session.note(matching: name) {
                    try session.store.write { db in _ = try db.delete(note) }
                } else if let tag = try session.tag(named: name) {
                    try session.delete(tag)
                    session.say("Deleted tag \"\(tag.name)\": no note carried it any more.")
                } else {
                    throw missing("notebook, note or tag \"\(name)\"")
                }
            }
        case "filter":
            guard arguments.count == 1, ["on", "off"].contains(arguments[0].lowercased()) else { usage("filter on|off"); break }
            session.step(line) { session.setFilter(arguments[0].lowercased() == "on") }
        case "pause":
            session.step(line) { session.controller.pause() }
        case "resume":
            session.step(line, nothingDelivered: "was not paused") { try session.controller.resume() }
        default:
            for part in wrapped("unknown command '\(command)'; type `help`") { output.line(part) }
        }
        return true
    }
}

/// A command that names something that does not exist.
struct DemoCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
