import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

extension RelayTests {
    /// The relay's own TLS: a certificate the test makes (its own CA, the server's
    /// certificate for 127.0.0.1), checked by curl as a client that verifies the chain.
    @Suite("The relay's TLS", .serialized)
    struct RelayTLSTests {
        /// Runs `program` with `arguments` in `folder`; its exit status and output.
        static func run(_ program: String, _ arguments: [String], in folder: String) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: folder)
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            let status = process.reap(within: .seconds(60)) ?? -1
            return (status, String(decoding: data, as: UTF8.self))
        }

        static func tool(_ name: String) throws -> String {
            try #require(
                ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) },
                "\(name) is not installed: the relay's TLS test needs it")
        }

        /// A CA (`ca.crt`) and a server certificate for 127.0.0.1 it signed (`server.crt`,
        /// `server.key`), in `folder`.
        static func makeCertificates(in folder: String) throws {
            let openssl = try tool("openssl")
            try "subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n"
                .write(toFile: folder + "/server.ext", atomically: true, encoding: .utf8)
            for arguments in [
                ["req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout", "ca.key",
                 "-out", "ca.crt", "-days", "2", "-subj", "/CN=Relay Test CA"],
                ["req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-keyout", "server.key",
                 "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                 "-extfile", "server.ext", "-out", "server.crt"],
            ] {
                let (status, output) = try run(openssl, arguments, in: folder)
                try #require(status == 0, "openssl \(arguments.joined(separator: " ")): \(output)")
            }
        }

        @Test("With a certificate and key, the relay serves HTTPS: a client that trusts its CA gets its answers; one that does not, and plain HTTP, get none")
        func https() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let folder = try TemporaryDirectory()
            try await offThePool { try Self.makeCertificates(in: folder.url.path) }
            let relay = try await RelayProcess(test, keys: keys, environment: [
                "STRATA_RELAY_TLS_CERTIFICATE_FILE": folder.path("server.crt"), "STRATA_RELAY_TLS_KEY_FILE": folder.path("server.key"),
            ])
            defer { relay.stop() }
            #expect(relay.url.scheme == "https")
            let curl = try Self.tool("curl")
            let base = relay.url.absoluteString
            let path = folder.url.path
            // A client that checks the chain against the test's CA: the metrics, and a pull
            // without a token, which the relay refuses in its own words.
            let metrics = try await offThePool {
                try Self.run(curl, ["--silent", "--show-error", "--cacert", "ca.crt", "--write-out", "\n%{http_code}", base + "/metrics"], in: path)
            }
            #expect(metrics.status == 0 && metrics.output.hasSuffix("\n200"), "\(metrics.output)")
            let pull = try await offThePool {
                try Self.run(curl, [
                    "--silent", "--show-error", "--cacert", "ca.crt", "--write-out", "\n%{http_code}",
                    "-H", "Content-Type: application/json", "--data", "{}", base + "/v1/pull",
                ], in: path)
            }
            #expect(pull.status == 0 && pull.output.hasSuffix("\n401"), "\(pull.output)")
            #expect(pull.output.contains("missing_token"), "\(pull.output)")
            // A client that does not trust the CA refuses the relay (curl: 60, the peer's certificate).
            let untrusted = try await offThePool {
                try Self.run(curl, ["--silent", "--show-error", base + "/metrics"], in: path)
            }
            #expect(untrusted.status == 60, "\(untrusted.output)")
            // Plain HTTP to the TLS port gets no HTTP answer.
            let plain = try await offThePool { () -> HTTPAnswer? in
                let connection = try RawConnection(relay.url)
                connection.send(RawConnection.head("GET", "/metrics", token: nil, headers: []))
                return connection.readAnswer(timeout: .seconds(10))
            }
            #expect(plain == nil, "an HTTP answer on the TLS port: \(plain.map { "\($0.status)" } ?? "")")
        }

        @Test("A certificate without its key (or a file that is not PEM) stops the relay at its start, saying why")
        func halfATLSConfiguration() async throws {
            let test = try await TestServer()
            let keys = TestKeys()
            let folder = try TemporaryDirectory()
            try "not a certificate".write(toFile: folder.path("bad.crt"), atomically: true, encoding: .utf8)
            let cases: [([String: String], String)] = [
                (["STRATA_RELAY_TLS_CERTIFICATE_FILE": folder.path("bad.crt")], "TLS needs both"),
                (["STRATA_RELAY_TLS_CERTIFICATE_FILE": folder.path("bad.crt"), "STRATA_RELAY_TLS_KEY_FILE": folder.path("bad.crt")],
                 "cannot read the TLS certificate chain"),
            ]
            for (environment, message) in cases {
                do {
                    let relay = try await RelayProcess(test, keys: keys, environment: environment)
                    relay.stop()
                    Issue.record("the relay started with \(environment)")
                } catch let error as RelayProcess.RelayError {
                    #expect(error.description.contains(message), "\(error)")
                }
            }
        }
    }
}
