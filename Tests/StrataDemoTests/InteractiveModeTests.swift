import Foundation
import StrataDemoKit
import Testing

@Suite("Demo: interactive mode and command line")
struct InteractiveModeTests {
    static let script = [
        "add Ideas Paint the fence",
        "add Garden Plant tulips",
        "add \"Reading list\" Dune",
        "move #2 Home",
        "move \"Paint the fence\" \"Reading list\"",
        "rename Home House",
        "delete urgent",
        "filter on",
        "filter off",
        "pause",
        "add House Water the plants",
        "resume",
        "delete Work",
        "bogus",
        "move nobody House",
        "add \"Reading list Dune",
        "rename Garden A notebook name long enough to go well past the eightieth column of a terminal",
        "list",
    ]

    @Test("A piped script: every command echoed, with its batch and list; ends at the end of input")
    func script() async throws {
        let (transcript, status, errors) = await runDemo(["--in-memory", "--interactive"], input: Self.script)
        #expect(status == 0, "\(errors)")
        if let difference = try compareWithReference(transcript, named: "interactive.txt") {
            Issue.record(Comment(rawValue: difference))
        }
        for command in Self.script where command.count <= 72 { #expect(transcript.contains("strata> " + command + "\n")) }
        #expect(transcript.contains("batch  i+[[2, 0]]\n       +  row [2, 0] #6 Paint the fence"))
        #expect(transcript.contains("batch  s+[3]\n       +  section 3 Garden"))
        #expect(transcript.contains("batch  s~[1]\n       ~  section 1 Home → House"))
        #expect(transcript.contains("""
            refused: Cannot delete tag 'urgent': 1 note still uses it (delete rule deny on
              Tag.notes). Untag it first: "Call the plumber".
              (DeleteDeniedError Tag.notes: the transaction was rolled back)

            """))
        // Quoted names with spaces.
        #expect(transcript.contains("batch  s+[4]\n       +  section 4 Reading list\n"))
        #expect(transcript.contains("       >~ row [2, 0]→[4, 1] #6 Paint the fence\n"))
        #expect(transcript.contains("error: a \" is not closed\n"))
        // A long command: the echo wraps, the step's title and the section name are cut.
        #expect(transcript.contains("""
            strata> rename Garden A notebook name long enough to go well past the eightieth
                    column of a terminal
            == 16. rename Garden A notebook name long enough to go well past the eighti… ===

            """))
        #expect(transcript.contains("       ~  section 2 Garden → A notebook name long enough…\n"))
        #expect(transcript.contains("batch  none: paused: changes are not tracked until resume"))
        #expect(transcript.contains("reload a fresh snapshot replaces the list"))
        #expect(transcript.contains("       -  section 0 Work, with its note\n"))
        #expect(transcript.contains("unknown command 'bogus'"))
        #expect(transcript.contains("error: there is no note \"nobody\""))
        #expect(!transcript.contains("MISMATCH") && !transcript.contains("INVALID"))
        for line in transcript.split(separator: "\n") { #expect(line.count <= 80, "too wide: \(line)") }
    }

    @Test("quit stops before the end of input")
    func quit() async {
        let (transcript, status, _) = await runDemo(["--in-memory", "-i"], input: ["quit", "add Work Never"])
        #expect(status == 0)
        #expect(!transcript.contains("Never"))
    }

    @Test("Arguments", arguments: [
        (["--in-memory"], DemoOptions(store: .inMemory)),
        (["--store", "x.sqlite", "--interactive"], DemoOptions(store: .path("x.sqlite"), interactive: true)),
        (["--store=y.sqlite"], DemoOptions(store: .path("y.sqlite"))),
        ([], DemoOptions()),
    ])
    func arguments(_ arguments: [String], _ expected: DemoOptions) throws {
        #expect(try DemoOptions(parsing: arguments) == expected)
    }

    @Test("Bad arguments: a message and status 2")
    func badArguments() async {
        for arguments in [["--bogus"], ["--store"], ["--store", "--in-memory"]] {
            let (_, status, errors) = await runDemo(arguments)
            #expect(status == 2)
            #expect(errors.hasPrefix("error: "), "\(arguments)")
        }
    }

    @Test("--help lists the options and the commands")
    func help() async {
        let (transcript, status, _) = await runDemo(["--help"])
        #expect(status == 0)
        for word in ["--store", "--in-memory", "--interactive", "NO_COLOR", "rename <notebook>", "filter on|off"] {
            #expect(transcript.contains(word), "\(word)")
        }
    }

    @Test("Colour only when asked: NO_COLOR and pipes give plain text")
    func colour() async {
        #expect(!TextStyle.forStandardOutput(environment: ["NO_COLOR": "1"]).isEnabled)
        var lines: [String] = []
        _ = await StrataDemoApp.run(
            arguments: ["--in-memory"], environment: [:], input: .lines([]), output: DemoOutput { lines.append($0) },
            style: TextStyle(isEnabled: true))
        #expect(lines.joined().contains("\u{1B}[32m+"))
        lines = []
        _ = await StrataDemoApp.run(
            arguments: ["--in-memory", "--no-color"], environment: [:], input: .lines([]),
            output: DemoOutput { lines.append($0) }, style: TextStyle(isEnabled: true))
        #expect(!lines.joined().contains("\u{1B}["))
    }
}
