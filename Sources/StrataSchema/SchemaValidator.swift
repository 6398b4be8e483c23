/// Checks a decoded `Schema` against every rule of the language, collecting all diagnostics.
public enum SchemaValidator {
    public static func validate(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {}
}
