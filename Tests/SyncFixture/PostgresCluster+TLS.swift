import Foundation

/// A cluster that devices reach over TCP with TLS, without listening on the machine's
/// network: the server runs in a network namespace of its own (`ip netns`), where it listens
/// on 127.0.0.1 with `ssl=on`; only processes started in that namespace (``namespaceCommand``)
/// can reach it. `pg_hba.conf` accepts TCP connections only with TLS (`hostssl`) and rejects
/// the others (`hostnossl … reject`); the Unix socket in the cluster's folder stays, for the
/// test's own setup (``psql(_:user:database:)``, ``configuration(user:database:)``).
///
/// The certificates are made with `openssl` in the cluster's folder: a CA of the cluster's
/// own (``certificateAuthority``) and a server certificate it signed, for the DNS name
/// `localhost` only: it lists no IP address, so a client that connects to 127.0.0.1 is
/// accepted only if it asks for `localhost` (`tlsServerName`), and the name is what is
/// verified (SwiftNIO SSL would otherwise accept a certificate that lists the address
/// connected to, whatever name the client asks for). Making a namespace needs root; as
/// another user ``startTLS()`` throws, saying so.
extension PostgresCluster {
    /// The address the server listens on, inside its namespace.
    public static let tlsHost = "127.0.0.1"
    /// The name the server's certificate is made for, its only subject alternative name
    /// (not ``tlsHost``): the server name a client must ask for.
    public static let tlsServerName = "localhost"

    /// The CA that signed the server's certificate (PEM): the trust root of a client that
    /// verifies the server.
    public var certificateAuthority: URL { folder.appendingPathComponent("tls/ca.crt") }

    /// The words to start a program with so that it runs in the server's network namespace
    /// (the only place 127.0.0.1:``port`` reaches the server): `ip netns exec <name>`.
    public var namespaceCommand: [String] {
        guard let namespace else { return [] }
        return [Self.ip, "netns", "exec", namespace]
    }

    /// Where `ip` is.
    static var ip: String {
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/ip"
    }

    /// Makes a cluster that listens on 127.0.0.1 with TLS in a new network namespace, and
    /// starts it. The namespace is deleted by ``destroy()``, or when this process ends however
    /// it ends.
    public static func startTLSBlocking() throws -> PostgresCluster {
        guard isRoot else {
            throw ClusterError(
                "a TLS test cluster listens on 127.0.0.1 in a network namespace of its own (ip netns), so as not to listen on "
                    + "the machine's network; making one needs root, and this process runs as uid \(getuid()). Run the tests as root.")
        }
        guard let binaries = binaries() else { throw ClusterError("PostgreSQL is not installed (no initdb); run scripts/bootstrap") }
        let id = UUID().uuidString.prefix(8).lowercased()
        let namespace = "strata-tls-\(id)"
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-pg-tls-\(id)")
        do {
            try run([ip, "netns", "add", namespace], in: URL(fileURLWithPath: "/"))
        } catch {
            throw ClusterError("cannot make a network namespace for a TLS test cluster (ip netns add): \(error)")
        }
        do {
            try run([ip, "netns", "exec", namespace, ip, "link", "set", "lo", "up"], in: URL(fileURLWithPath: "/"))
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("tls"), withIntermediateDirectories: true)
            // The namespace is new and empty: nothing else listens there, any port is free.
            // One other than the default, so that a client relying on the default fails.
            let port = Int.random(in: 20_000..<60_000)
            let certificates = folder.appendingPathComponent("tls")
            let cluster = PostgresCluster(
                folder: folder, binaries: binaries, port: port, namespace: namespace,
                listenOptions: "-c listen_addresses='\(tlsHost)' -c port=\(port) -c ssl=on"
                    + " -c ssl_cert_file='\(certificates.appendingPathComponent("server.crt").path)'"
                    + " -c ssl_key_file='\(certificates.appendingPathComponent("server.key").path)'"
                    + " -c log_connections=on")
            do {
                try cluster.run("/bin/chown", ["postgres:postgres", folder.path], asServer: false)
                try makeCertificateAuthority(in: certificates, name: "Strata test CA \(id)")
                try issueServerCertificate(in: certificates)
                // The server reads its key only if it owns it and no one else can read it.
                try cluster.run("/bin/chown", ["-R", "postgres:postgres", certificates.path], asServer: false)
                for key in ["ca.key", "server.key"] {
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: certificates.appendingPathComponent(key).path)
                }
                try cluster.run(binaries.appendingPathComponent("initdb").path, [
                    "-D", cluster.dataFolder.path, "-U", cluster.user, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync",
                ])
                try writeHostRules(cluster.dataFolder.appendingPathComponent("pg_hba.conf"))
                try cluster.run("/bin/chown", ["postgres:postgres", cluster.dataFolder.appendingPathComponent("pg_hba.conf").path], asServer: false)
                try cluster.startServerBlocking()
                try cluster.watchOwner()
                try cluster.run(binaries.appendingPathComponent("createdb").path, ["-h", folder.path, "-p", "\(port)", "-U", cluster.user, cluster.database])
            } catch {
                cluster.destroy()
                throw error
            }
            return cluster
        } catch {
            deleteNamespace(namespace)
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// The Unix socket for anyone on this machine (the test's own setup); over TCP, TLS only,
    /// from 127.0.0.1 (the namespace's own loopback).
    static func writeHostRules(_ file: URL) throws {
        try Data("""
            # TYPE    DATABASE  USER  ADDRESS        METHOD
            local     all       all                  trust
            hostssl   all       all   127.0.0.1/32   trust
            hostnossl all       all   127.0.0.1/32   reject

            """.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    static func deleteNamespace(_ namespace: String) {
        _ = try? run([ip, "netns", "delete", namespace], in: URL(fileURLWithPath: "/"))
    }

    /// Makes a certificate authority in `folder`: `ca.key` and `ca.crt` (PEM, self-signed,
    /// valid for a week); returns the certificate's file. Tests use a second one to play a CA
    /// that did not sign the server's certificate.
    @discardableResult
    public static func makeCertificateAuthority(in folder: URL, name: String) throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("""
            [req]
            distinguished_name = dn
            prompt = no
            x509_extensions = ca
            [dn]
            CN = \(name)
            [ca]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash

            """.utf8).write(to: folder.appendingPathComponent("ca.cnf"))
        try openssl([
            "req", "-x509", "-new", "-nodes", "-config", "ca.cnf", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", "ca.key", "-out", "ca.crt", "-days", "7",
        ], in: folder)
        return folder.appendingPathComponent("ca.crt")
    }

    /// Makes `server.key` and `server.crt` in `folder`, signed by the CA made there, for
    /// ``tlsServerName`` only (no IP address, not even ``tlsHost``).
    static func issueServerCertificate(in folder: URL) throws {
        try Data("""
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature,keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:\(tlsServerName)
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid,issuer

            """.utf8).write(to: folder.appendingPathComponent("server.ext"))
        try openssl([
            "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=\(tlsServerName)",
        ], in: folder)
        try openssl([
            "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "7", "-extfile", "server.ext", "-out", "server.crt",
        ], in: folder)
    }

    static func openssl(_ arguments: [String], in folder: URL) throws {
        let openssl = ["/usr/bin/openssl", "/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let openssl else { throw ClusterError("openssl is not installed: the TLS test cluster makes its certificates with it") }
        try run([openssl] + arguments, in: folder)
    }
}
