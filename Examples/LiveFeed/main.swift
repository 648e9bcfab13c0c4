// LiveFeed: a live quote feed over a WebSocket that stays up. When the connection drops it
// reconnects, subscribes again and resumes after the last quote it saw.
//
//     swift run LiveFeed                                  # against the embedded loopback server
//     swift run LiveFeed --url wss://quotes.example.com/ws --symbols AAPL,MSFT
//
// One request type, `QuotesApi`, is the socket's handshake. `ReconnectingWebSocket` opens it,
// hands each new socket over in `.connected` — where the example sends its subscription, with
// the sequence number of the last quote it saw — and reports each drop in `.disconnected`
// before it waits and reconnects. The embedded server drops the first connection after quote 5,
// without a close frame, and closes normally with 1000 after quote 12, which ends the feed. A
// server at `--url` must speak the same JSON: `{"subscribe":[…],"after":n}` in,
// `{"seq":n,"symbol":…,"price":…}` out.

import Errand
import ErrandTestServer
import Foundation

/// The feed's handshake.
struct QuotesApi: BaseRequest {
    let url: String
}

/// One quote.
struct Quote: Decodable {
    let seq: Int
    let symbol: String
    let price: Double
}

/// What a connection sends first: the symbols, and the last quote already seen.
struct Subscription: Encodable {
    let subscribe: [String]
    let after: Int
}

@main
enum LiveFeed {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("LiveFeed failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let embedded = option("--url", in: arguments) == nil ? try TestServer() : nil
        defer { embedded?.stop() }
        let url =
            option("--url", in: arguments)
            ?? embedded.map { $0.baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/ws/quotes?drop_at=5" }
            ?? ""
        let symbols = (option("--symbols", in: arguments) ?? "AAPL,MSFT,GOOG").split(separator: ",").map(String.init)
        print("Subscribing to \(symbols.joined(separator: ", ")) at \(url)")

        var lastSeen = 0
        var connections = 0
        let feed = ReconnectingWebSocket(QuotesApi(url: url), backoff: ReconnectBackoff(initialDelay: 0.2))
        for try await event in feed {
            switch event {
            case .connected(let socket):
                connections += 1
                let subscription = try JSONEncoder().encode(Subscription(subscribe: symbols, after: lastSeen))
                try await socket.send(String(decoding: subscription, as: UTF8.self))
                print("Connected (connection \(connections)), resuming after quote \(lastSeen)")
            case .message(let message):
                let quote = try message.decode(Quote.self)
                guard quote.seq > lastSeen else { continue }
                lastSeen = quote.seq
                print("  #\(quote.seq) \(quote.symbol) \(String(format: "%.2f", quote.price))")
            case .disconnected(let error):
                print("Disconnected (\(error)); reconnecting")
            }
        }
        print("The feed ended after quote \(lastSeen), over \(connections) connection(s).")
        // Against the embedded server the run is known: CI checks it.
        if embedded != nil, lastSeen != 12 || connections != 2 {
            print("LiveFeed expected 12 quotes over 2 connections")
            exit(1)
        }
    }

    static func option(_ name: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }
}
