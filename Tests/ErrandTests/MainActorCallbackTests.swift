import Errand
import Foundation
import Testing

/// A view model as a Swift 6 app writes one: main-actor state set straight from the callbacks,
/// with no `MainActor.assumeIsolated` and no `@Sendable` dance. It must compile warning-free.
@MainActor
final class ProfileModel {
    var name = "loading"
    var failure: ErrandError?
    var callbacksOnMainQueue: [Bool] = []
    private var waiter: CheckedContinuation<Void, Never>?
    /// Marks the main queue, to tell in a callback that it runs there. (`Thread.isMainThread` will
    /// not do: after `dispatchMain()`, Linux drains the main queue on another thread.)
    private let mainQueueKey = DispatchSpecificKey<Bool>()

    init() {
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
    }

    func load(_ request: any BaseRequest, with agent: NetworkAgent) {
        agent.startOnMainActor(
            request,
            success: { task in
                self.name = task.responseString ?? ""
                self.finished()
            },
            failure: { task in
                self.failure = task.error
                self.finished()
            })
    }

    /// The same through the shared agent, as an app's code calls it. The closures also change a
    /// captured local `var`, which a `@Sendable` closure may not.
    func loadShared(_ request: any BaseRequest) {
        var outcome = "pending"
        request.startOnMainActor(
            success: { _ in
                outcome = "loaded"
                self.name = outcome
                self.finished()
            },
            failure: { task in
                outcome = "failed"
                self.name = outcome
                self.failure = task.error
                self.finished()
            })
    }

    func waitForCallback() async {
        await withCheckedContinuation { waiter = $0 }
    }

    private func finished() {
        callbacksOnMainQueue.append(DispatchQueue.getSpecific(key: mainQueueKey) == true)
        waiter?.resume()
        waiter = nil
    }
}

@Suite("Main-actor closures")
@MainActor
struct MainActorCallbackTests {
    struct Request: BaseRequest {
        var url: String
    }

    /// A model that loaded through an agent whose callback queue is not main, answered with `status` and `body`.
    func model(answeredWith status: Int, body: String) async -> ProfileModel {
        let transport = ManualTransport()
        let model = ProfileModel()
        model.load(Request(url: "/me"), with: .testing(transport, callbackQueue: DispatchQueue(label: "not-main")))
        transport.sent[0].respond(status: status, body: body)
        await model.waitForCallback()
        return model
    }

    @Test func successUpdatesMainActorStateOnTheMainQueueWhateverTheCallbackQueue() async {
        let model = await model(answeredWith: 200, body: #""Ann""#)
        #expect(model.name == #""Ann""#)
        #expect(model.failure == nil)
        #expect(model.callbacksOnMainQueue == [true])
    }

    @Test func failureUpdatesMainActorState() async {
        let model = await model(answeredWith: 503, body: "")
        #expect(model.failure == .statusCode(503))
        #expect(model.name == "loading")
        #expect(model.callbacksOnMainQueue == [true])
    }

    @Test func theSharedAgentsVariantCallsBackOnMain() async {
        let model = ProfileModel()
        // No base URL is configured for the shared agent, so this fails before the network.
        model.loadShared(Request(url: "relative/path"))
        await model.waitForCallback()
        guard case .invalidURL = model.failure else {
            Issue.record("expected .invalidURL, got \(String(describing: model.failure))")
            return
        }
        #expect(model.name == "failed")
        #expect(model.callbacksOnMainQueue == [true])
    }
}
