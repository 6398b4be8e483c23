// The sync article's other snippets, each in a function that gives it its context.
import PostgresNIO
import Foundation
import Strata
import StrataSync

func aServerElsewhere(secret: String) throws -> PostgresSyncServer {
    let server = try PostgresSyncServer(
        configuration: .init(host: "db.example.com", username: "notes_sync", password: secret,
                             database: "notes", tls: .require(try .init(configuration: .makeClientConfiguration()))),
        schema: StrataModel.schema)
    return server
}

func aServerOverTLS(secret: String, caFile: String) throws -> PostgresSyncServer {
    var tls = TLSConfiguration.makeClientConfiguration()   // certificateVerification: .fullVerification
    tls.trustRoots = .file(caFile)                         // your CA's certificate (PEM)
    var configuration = PostgresConnection.Configuration(
        host: "10.0.0.5", port: 5432, username: "notes_sync", password: secret, database: "notes",
        tls: .require(try NIOSSLContext(configuration: tls)))
    configuration.options.tlsServerName = "db.example.com"  // the name in the certificate
    let server = try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema)
    return server
}

func printTheServersScript() throws {
    print(try PostgresSchema(schema: StrataModel.schema).sql)
}
