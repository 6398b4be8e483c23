// `make demo`: the scripted tour of Strata on the package's own model. Everything lives in
// StrataDemoKit, so that tests can run it in-process; see `StrataDemo --help`.
import Foundation
import StrataDemoKit

let status = await StrataDemoApp.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    input: .standardInput(),
    output: .standardOutput()
)
exit(status)
