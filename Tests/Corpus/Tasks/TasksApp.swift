// The Tasks app of the model corpus: its model is Models/Tasks.yaml, generated into this
// module by the build plugin (`StrataModel`), as in a user's own target.
import Strata

/// How a task repeats, stored as JSON in `Job.recurrence`.
public enum Recurrence: Codable, Hashable, Sendable {
    case daily
    case weekly(weekdays: [Int])
    case monthly(day: Int)
}
