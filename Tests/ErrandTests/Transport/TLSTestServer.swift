import ErrandScenarios
import Foundation

/// An HTTPS server on 127.0.0.1 for TLS tests: Python's `http.server` behind `ssl`, with a
/// self-signed certificate made by `openssl` when it starts (the Swift test server speaks only
/// plain HTTP). `GET /to?url=U` redirects (302) to `U`; any other GET answers
/// `{"path": …, "authorization": …}`.
final class TLSTestServer: Sendable {
    /// Whether `openssl` and `python3` are there to run it.
    static var canRun: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":") ?? []
        return ["/usr/bin/openssl", "/usr/bin/env"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && path.contains { FileManager.default.isExecutableFile(atPath: "\($0)/python3") }
    }

    /// `https://127.0.0.1:<port>`.
    let baseURL: String
    /// The certificate, in PEM: trust it to connect.
    let certificateFile: String
    /// The pin of the certificate's public key: base64 SHA-256 of its SubjectPublicKeyInfo, as
    /// `openssl` works it out.
    let publicKeyPin: String
    private let directory: URL
    /// Closing its input ends the server: a signal may be ignored by a process started from the test runner.
    private let process: ChildProcess

    /// Starts a server: `openssl` and `python3` run on a thread of their own, never one of the
    /// concurrency pool's, which a test waiting for them would otherwise hold.
    static func start() async throws -> TLSTestServer {
        try await onOwnThread { try TLSTestServer() }
    }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificateFile = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        try Command.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificateFile,
            ])
        publicKeyPin = try Command.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in '\(certificateFile)' -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | base64",
            ])
        let script = directory.appendingPathComponent("server.py")
        try Data(Self.script.utf8).write(to: script)
        process = try ChildProcess("/usr/bin/env", ["python3", script.path, certificateFile, key])
        let line = String(decoding: process.readAvailable(), as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.closeInput()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no port from the TLS server"])
        }
        baseURL = "https://127.0.0.1:\(port)"
    }

    deinit {
        process.closeInput()
        // The last reference may go on a thread of the concurrency pool: wait for the exit elsewhere.
        Thread { [process, directory] in
            process.waitForExit()
            try? FileManager.default.removeItem(at: directory)
        }.start()
    }

    private static let script = #"""
        import http.server, json, os, ssl, sys, threading, urllib.parse

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                parsed = urllib.parse.urlparse(self.path)
                if parsed.path == "/to":
                    target = urllib.parse.parse_qs(parsed.query)["url"][0]
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"path": self.path, "authorization": self.headers.get("Authorization")}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        # The test closes standard input to stop the server.
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        server.serve_forever()
        """#
}
