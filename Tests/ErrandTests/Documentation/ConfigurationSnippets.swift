// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// The code the articles "Configuration and test servers" and "Connections" show, compiled
/// (DocumentedCodeTests checks each snippet is its article's).
enum ConfigurationSnippets {
    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
    }
    struct AvatarApi: BaseRequest {
        let photo: URL
        var url: String { "/me/avatar" }
    }

    static func testServer() throws {
        // snippet: Configuration.md
        #if DEBUG
        NetworkConfig.shared.baseUrl = "http://127.0.0.1:8080"
        #else
        NetworkConfig.shared.baseUrl = "https://api.example.com/v1"
        #endif
        // end snippet
        // snippet: Configuration.md
        let url = try NetworkAgent.shared.buildRequestUrl(GetUserInfoApi(userId: "42"))
        // With the base https://api.example.com/v1, "/users/info" gives https://api.example.com/users/info:
        // a leading "/" starts at the host root. The arguments are added when the request is sent.
        // end snippet
        _ = url
    }

    // snippet: Configuration.md
    struct ChannelFilter: URLFilter {
        let channel: String
        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String {
            originUrl + (originUrl.contains("?") ? "&" : "?") + "channel=\(channel)"
        }
    }
    // end snippet

    static func filters() {
        // snippet: Configuration.md
        NetworkConfig.shared.addUrlFilter(ChannelFilter(channel: "appstore"))
        // and, to start over without filters:
        NetworkConfig.shared.clearUrlFilters()
        // end snippet
    }

    static func configurations(file: URL) async throws {
        // snippet: Configuration.md
        let config = NetworkConfig()
        config.baseUrl = "https://upload.example.com"
        config.callbackQueue = DispatchQueue(label: "uploads")
        let uploads = NetworkAgent(config: config)

        let response = try await uploads.response(AvatarApi(photo: file))
        // end snippet
        // snippet: Configuration.md
        uploads.maxConcurrentRequests = 2
        uploads.cancelAllRequests()
        // end snippet
        _ = response
    }

    static func connections(config: NetworkConfig, keyPassword: String) {
        // snippet: Connections.md
        var connection = ConnectionOptions()
        connection.trustedRoots = .adding([URL(fileURLWithPath: "/etc/company/root-ca.pem")])
        connection.proxy = .http(URL(string: "http://proxy.internal:3128")!)

        NetworkConfig.shared.connection = connection   // before the first request
        // or, for an agent of your own:
        let agent = NetworkAgent(config: config, transport: CurlTransport(connection: connection))
        // end snippet
        // snippet: Connections.md
        agent.maxConcurrentRequests = 64   // 64 streams, one connection
        // end snippet
        // snippet: Connections.md
        connection.trustedRoots = .adding([URL(fileURLWithPath: "/etc/company/root-ca.pem")])
        // or no CA but the company's:
        connection.trustedRoots = .only([URL(fileURLWithPath: "/etc/company/root-ca.pem")])
        // end snippet
        // snippet: Connections.md
        connection.clientIdentity = ClientIdentity(
            certificate: URL(fileURLWithPath: "/etc/app/client.pem"),
            privateKey: URL(fileURLWithPath: "/etc/app/client.key"),
            password: keyPassword)
        // end snippet
        // snippet: Connections.md
        connection.proxy = .http(URL(string: "http://user:secret@proxy.internal:3128")!)
        connection.proxy = .socks5(URL(string: "socks5://127.0.0.1:1080")!)
        // end snippet
        // snippet: Connections.md
        let socket = "/var/run/docker.sock".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        config.baseUrl = "http+unix://\(socket)/v1.43"

        struct ListContainers: BaseRequest {
            var url: String { "containers/json" }
        }
        // end snippet
        // snippet: Connections.md
        connection.hostOverrides = ["api.example.com:443": "127.0.0.1"]
        // end snippet
        _ = ListContainers()
    }
}
