/// YAML trees → `Schema`: the structure of the schema language, version 1.
public enum SchemaDecoder {
    public static func decode(_ roots: [YAMLNode], modelName: String, diagnostics: inout DiagnosticBag) -> Schema {
        Schema(name: modelName)
    }
}
