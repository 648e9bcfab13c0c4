import Errand
import Foundation
import Testing

/// What an app's view controller looks like: main-actor state, a delegate conformance with no
/// isolation annotations. It must compile warning-free under Swift 6 strict concurrency.
@MainActor
final class UserViewController: RequestDelegate {
    var statusText = "loading"
    var finishedTags: [Int] = []
    private var waiter: CheckedContinuation<Void, Never>?

    func load(with agent: NetworkAgent, _ request: any BaseRequest, tag: Int) {
        agent.start(request, delegate: self).tag = tag
    }

    func requestFinished(_ task: RequestTask) {
        statusText = "loaded \(task.responseStatusCode)"
        finishedTags.append(task.tag)
        waiter?.resume()
        waiter = nil
    }

    func requestFailed(_ task: RequestTask) {
        statusText = "failed: \(task.error.map(String.init(describing:)) ?? "?")"
        waiter?.resume()
        waiter = nil
    }

    func waitForCallback() async {
        await withCheckedContinuation { waiter = $0 }
    }
}

@Suite("RequestDelegate on the main actor")
@MainActor
struct DelegateTests {
    struct Request: BaseRequest {
        var url: String
    }

    @Test func delegateIsToldOfSuccessOnTheMainActor() async {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport, callbackQueue: DispatchQueue(label: "not-main"))
        let controller = UserViewController()
        controller.load(with: agent, Request(url: "/user"), tag: 7)
        transport.sent[0].respond(status: 200, body: "{}")
        await controller.waitForCallback()
        #expect(controller.statusText == "loaded 200")
        #expect(controller.finishedTags == [7])
    }

    @Test func delegateIsToldOfFailure() async {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let controller = UserViewController()
        controller.load(with: agent, Request(url: "/user"), tag: 1)
        transport.sent[0].respond(status: 500, body: "")
        await controller.waitForCallback()
        #expect(controller.statusText == "failed: Unacceptable HTTP status code 500")
    }

    @Test func delegateIsHeldWeakly() async {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        weak var released: UserViewController?
        do {
            let controller = UserViewController()
            released = controller
            controller.load(with: agent, Request(url: "/user"), tag: 1)
        }
        #expect(released == nil)
        transport.sent[0].respond()
    }
}
