import Foundation

/// The demo program: parses the arguments, opens the store, runs the scripted scenario or
/// the interactive mode. `StrataDemo`'s `main` only calls ``run(arguments:environment:input:output:style:)``.
public enum StrataDemoApp {
    /// Runs the demo; returns the exit status (0 when every batch checked out).
    public static func run(
        arguments: [String], environment: [String: String], input: LineSource, output: DemoOutput,
        style: TextStyle? = nil, errorOutput: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) async -> Int32 {
        let options: DemoOptions
        do {
            options = try DemoOptions(parsing: arguments)
        } catch {
            errorOutput(error.description)
            return 2
        }
        if options.help {
            output.line(DemoOptions.usage)
            output.line()
            output.line(InteractiveShell.help)
            return 0
        }
        var style = style ?? .forStandardOutput(environment: environment)
        if options.noColor { style = .plain }
        do {
            let session = try DemoSession(location: options.store, style: style, output: output)
            output.line()
            if options.interactive {
                InteractiveShell.run(on: session, input: input, output: output)
            } else {
                try ScriptedScenario.run(on: session)
                guard await session.checkAsyncStream() else { return 1 }
                output.line("Done: every batch applied cleanly and matched the controller's snapshot.")
            }
            return session.records.allSatisfy(\.consistent) ? 0 : 1
        } catch {
            errorOutput("error: \(error)")
            return 1
        }
    }
}
