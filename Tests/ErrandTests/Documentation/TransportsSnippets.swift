// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// The code the article "Transports" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum TransportsSnippets {
    static func choosing(config: NetworkConfig) {
        // snippet: Transports.md
        let agent = NetworkAgent(config: config, transport: URLSessionTransport(configuration: config.sessionConfiguration))
        // end snippet
        _ = agent
    }

    static func pinning(config: NetworkConfig, currentKeyPin: String, backupKeyPin: String) throws {
        // snippet: Transports.md
        let trust = try ServerTrust(pinnedPublicKeys: ["api.example.com": [currentKeyPin, backupKeyPin]])
        let agent = NetworkAgent(config: config, transport: CurlTransport(serverTrust: trust))
        // end snippet
        _ = agent
    }
}
