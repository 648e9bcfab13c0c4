// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation
import Testing

private func show<T>(_ value: T) {}
private func showNotFound() {}
private func showOffline() {}
private func showMessage(_ text: String) {}

/// The code the article "Validation and errors" shows, compiled and, where it is a test, run
/// (DocumentedCodeTests checks each snippet is the article's).
@Suite("Documentation: validation and errors")
struct ValidationSnippets {
    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
    }
    struct User: Decodable { let nick: String }

    static func validators() {
        // snippet: ValidationAndErrors.md
        // YTKNetwork: @{ @"nick": [NSString class], @"level": [NSNumber class] }
        let user: JSONValidator = ["nick": .string, "level": .number]

        // YTKNetwork: @[ [NSString class] ] — an array of strings
        let names: JSONValidator = [.string]            // .array(.string)

        // YTKNetwork's "complex" sample: an array of objects, each holding an object
        let questions: JSONValidator = [
            [
                "id": .number,
                "imageId": .string,
                "time": .number,
                "status": .number,
                "question": ["id": .number, "content": .string, "contentType": .number],
            ]
        ]
        // end snippet
        _ = (user, names, questions)
    }

    @Test func anErrorComparesInATest() async {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 404) })
        // snippet: ValidationAndErrors.md
        let task = agent.start(GetUserInfoApi(userId: "0"))
        _ = try? await task.value
        #expect(task.error == .statusCode(404))
        // end snippet
    }

    static func switching() async {
        // snippet: ValidationAndErrors.md
        do {
            let user = try await GetUserInfoApi(userId: "42").decoded(User.self)
            show(user)
        } catch .statusCode(404) {
            showNotFound()
        } catch {
            switch error {
            case .transport, .timedOut: showOffline()
            case .cancelled: break
            case .api(let apiError): showMessage(apiError.message)
            default: showMessage(error.description)
            }
        }
        // end snippet
    }
}
