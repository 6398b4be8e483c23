import Testing

@testable import StrataSchema

/// The diagnostics of value rules (`min`, `max`, `minLength`, `maxLength`, `pattern`) and
/// count rules (`minCount`, `maxCount`), each with its exact message.
@Suite("Rule error messages")
struct RuleErrorMessageTests {
    /// A model whose entity `A` has the attribute `a` written as `{ <attribute> }`.
    static func model(_ attribute: String) -> String {
        "enums:\n  P: [low, high]\nentities:\n  A:\n    attributes:\n      a: { \(attribute) }\n"
    }

    static let errors: [BadModel] = [
        BadModel(
            "min on a String", model("type: String, min: 1"),
            "m.yaml:6:31: error: 'min' applies to Int, Int32, Int16, Double, Float and Date attributes, and 'A.a' is String"),
        BadModel(
            "max on an enum", model("type: P, max: high"),
            "m.yaml:6:26: error: 'max' applies to Int, Int32, Int16, Double, Float and Date attributes, and 'A.a' is P"),
        BadModel(
            "max on a Decimal", model("type: Decimal, max: 1"),
            "m.yaml:6:32: error: 'max' applies to Int, Int32, Int16, Double, Float and Date attributes, and 'A.a' is Decimal"),
        BadModel(
            "min of an Int from a decimal", model("type: Int, min: 0.5"),
            "m.yaml:6:28: error: min '0.5' of 'A.a' is not a valid Int"),
        BadModel(
            "min of an Int quoted", model("type: Int, min: \"1\""),
            "m.yaml:6:28: error: min '1' of 'A.a' is not a valid Int; write the number without quotes"),
        BadModel(
            "max out of range for Int16", model("type: Int16, max: 40000"),
            "m.yaml:6:30: error: max 40000 of 'A.a' is out of range for Int16 (-32768...32767)"),
        BadModel(
            "max of a Double from text", model("type: Double, max: big"),
            "m.yaml:6:31: error: max 'big' of 'A.a' is not a valid Double"),
        BadModel(
            "min of a Date that is no date", model("type: Date, min: 2024-02-30"),
            "m.yaml:6:29: error: min '2024-02-30' of 'A.a' is not a date; write 2024-01-31 or 2024-01-31T08:30:00Z (UTC)"),
        BadModel(
            "min of a Date written as now", model("type: Date, min: now"),
            "m.yaml:6:29: error: min 'now' of 'A.a' is not a date; write 2024-01-31 or 2024-01-31T08:30:00Z (UTC)"),
        BadModel(
            "min greater than max", model("type: Int, min: 5, max: 4"),
            "m.yaml:6:28: error: min 5 of 'A.a' is greater than its max 4"),
        BadModel(
            "min date after max date", model("type: Date, min: 2024-01-02, max: 2024-01-01T23:59:59.999Z"),
            "m.yaml:6:29: error: min 2024-01-02 00:00:00.000 of 'A.a' is greater than its max 2024-01-01 23:59:59.999"),
        BadModel(
            "maxLength on an Int", model("type: Int, maxLength: 3"),
            "m.yaml:6:34: error: 'maxLength' applies only to String attributes, and 'A.a' is Int"),
        BadModel(
            "pattern on a URL", model("type: URL, pattern: 'x'"),
            "m.yaml:6:32: error: 'pattern' applies only to String attributes, and 'A.a' is URL"),
        BadModel(
            "negative minLength", model("type: String, minLength: -1"),
            "m.yaml:6:37: error: 'minLength' must be a whole number of 0 or more, not '-1'"),
        BadModel(
            "minLength greater than maxLength", model("type: String, minLength: 4, maxLength: 3"),
            "m.yaml:6:37: error: minLength 4 of 'A.a' is greater than its maxLength 3"),
        BadModel(
            "bad pattern", model("type: String, pattern: '[a-'"),
            "m.yaml:6:35: error: pattern '[a-' of 'A.a' is not a valid regular expression: expected ']'"),
        BadModel(
            "default below min", model("type: Int, min: 1, default: 0"),
            "m.yaml:6:40: error: the default of 'A.a' is less than its min 1"),
        BadModel(
            "default above max", model("type: Double, max: 1, default: 1.01"),
            "m.yaml:6:43: error: the default of 'A.a' is greater than its max 1"),
        BadModel(
            "fixed date default before min", model("type: Date, min: 2000-01-01, default: '1999-12-31T23:59:59.999Z'"),
            "m.yaml:6:50: error: the default of 'A.a' is less than its min 2000-01-01 00:00:00.000"),
        BadModel(
            "fixed date default after max", model("type: Date, max: 2000-01-01, default: '2000-01-01T00:00:00.001Z'"),
            "m.yaml:6:50: error: the default of 'A.a' is greater than its max 2000-01-01 00:00:00.000"),
        BadModel(
            "default too long", model("type: String, maxLength: 2, default: abc"),
            "m.yaml:6:49: error: the default of 'A.a' is longer than its maxLength 2"),
        BadModel(
            "default too short", model("type: String, minLength: 1, default: ''"),
            "m.yaml:6:49: error: the default of 'A.a' is shorter than its minLength 1"),
        BadModel(
            "default not matching", model("type: String, pattern: '[0-9]+', default: x1"),
            "m.yaml:6:54: error: the default of 'A.a' does not match its pattern '[0-9]+'"),
        BadModel(
            "minCount on a to-one", pair("b: { to: B, inverse: a, many: true }", "a: { to: A, inverse: b, minCount: 1 }"),
            "m.yaml:10:41: error: 'minCount' applies only to to-many relationships, and 'B.a' is to-one; use 'required: true' for a to-one that must be set"),
        BadModel(
            "maxCount of zero", pair("b: { to: B, inverse: a, many: true, maxCount: 0 }", "a: { to: A, inverse: b }"),
            "m.yaml:5:53: error: maxCount of 'A.b' must be at least 1"),
        BadModel(
            "minCount greater than maxCount",
            pair("b: { to: B, inverse: a, many: true, minCount: 3, maxCount: 2 }", "a: { to: A, inverse: b }"),
            "m.yaml:5:53: error: minCount 3 of 'A.b' is greater than its maxCount 2"),
        BadModel(
            "minCount not a number", pair("b: { to: B, inverse: a, many: true, minCount: one }", "a: { to: A, inverse: b }"),
            "m.yaml:5:53: error: 'minCount' must be a whole number of 0 or more, not 'one'"),
    ]

    @Test(arguments: errors)
    func rules(_ row: BadModel) {
        #expect(diagnostics(row.yaml) == row.expected)
    }

    @Test func boundsAtTheEdgesOfTheirTypes() throws {
        let result = load(Self.model("type: Int, min: -9223372036854775808, max: 9223372036854775807"))
        #expect(result.diagnostics.isEmpty)
        #expect(result.schema?.entities[0].attributes[0].rules == ValueRules(min: .int(.min), max: .int(.max)))
        #expect(diagnostics(Self.model("type: Int16, min: -32768, max: 32767")).isEmpty)
        #expect(diagnostics(Self.model("type: Int, min: 3, max: 3, default: 3")).isEmpty, "min = max = default")
        #expect(diagnostics(Self.model("type: String, minLength: 0, maxLength: 0, default: ''")).isEmpty)
        // Length counts Unicode code points: é written as e + ◌́ is two.
        #expect(diagnostics(Self.model("type: String, maxLength: 1, default: \"\\u00E9\"")).isEmpty)
        #expect(diagnostics(Self.model("type: String, maxLength: 1, default: \"e\\u0301\""))
            == ["m.yaml:6:49: error: the default of 'A.a' is longer than its maxLength 1"])
    }

    @Test func dateBounds() {
        #expect(ValueRuleRule.storedDate("2024-01-31") == "2024-01-31 00:00:00.000")
        #expect(ValueRuleRule.storedDate("2024-01-31T08:30Z") == "2024-01-31 08:30:00.000")
        #expect(ValueRuleRule.storedDate("2024-01-31 08:30:05.5") == "2024-01-31 08:30:05.500")
        #expect(ValueRuleRule.storedDate("2024-02-29T23:59:59.999Z") == "2024-02-29 23:59:59.999")
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "24-01-01", "2024-01-01T24:00", "2024-01-01T08:30+02:00", "2024-01-01T08:30:00.1234"] {
            #expect(ValueRuleRule.storedDate(bad) == nil, "\(bad)")
        }
    }

    @Test func requiredToOnesCheckedAtCommitAreAccepted() {
        // A nullify rule that empties a required to-one, and a cycle of required to-ones,
        // are checked when a transaction commits, as Core Data checks them at save.
        #expect(diagnostics(pair("b: { to: B, inverse: a, many: true }", "a: { to: A, inverse: b, required: true }")).isEmpty)
        #expect(diagnostics(pair(
            "b: { to: B, inverse: a, required: true, deleteRule: cascade }",
            "a: { to: A, inverse: b, required: true, deleteRule: cascade }")).isEmpty)
    }
}
