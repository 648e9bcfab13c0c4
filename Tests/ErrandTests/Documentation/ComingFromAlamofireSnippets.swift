// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand

/// The Errand code the article "Coming from Alamofire or Moya" shows, compiled (DocumentedCodeTests
/// checks each snippet is the article's; the other libraries' code is not compiled).
enum ComingFromAlamofireSnippets {
    struct User: Decodable { let name: String }

    // snippet: ComingFromAlamofireAndMoya.md
    struct UserApi: BaseRequest {
        let id: String
        let token: String
        var url: String { "users/\(id)" }
        var arguments: [String: any Sendable]? { ["token": token] }
    }
    // end snippet

    static func user(token: String) async throws {
        // snippet: ComingFromAlamofireAndMoya.md
        NetworkConfig.shared.baseUrl = "https://api.example.com/v1"
        let user = try await UserApi(id: "42", token: token).decoded(User.self)
        // end snippet
        _ = user
    }
}
