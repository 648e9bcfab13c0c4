import Errand
import Foundation

/// What a server says about caching: `Cache-Control`, `Age` and HTTP-dates, alone or together
/// as a response's freshness, and the `Range` a cached answer is cut to. A date that reads must
/// write as IMF-fixdate and read back as the same instant; directives must be well-formed and
/// read back the same when written again; lifetimes and ages are never negative, and age only
/// grows; a range is never empty and never outside the body.
enum HTTPCachingTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        switch input.int(below: 4) {
        case 0: date(String(decoding: input.rest(), as: UTF8.self))
        case 1: cacheControl(String(decoding: input.rest(), as: UTF8.self))
        case 2: freshness(&input)
        default: byteRange(&input)
        }
    }

    private static func byteRange(_ input: inout FuzzInput) {
        let length = input.int(below: 1 << 20)
        let field = String(decoding: input.rest(), as: UTF8.self)
        guard let range = ByteRangeAnswer.range(field, length: length) else { return }
        require(
            !range.isEmpty && range.lowerBound >= 0 && range.upperBound <= length,
            "\(field.debugDescription) of \(length) bytes: \(range)")
    }

    private static func date(_ text: String) {
        guard let date = HTTPDate.parse(text) else { return }
        let written = HTTPDate.format(date)
        require(HTTPDate.parse(written) == date, "\(text) reads as \(date), written \(written), which reads otherwise")
    }

    private static func cacheControl(_ field: String) {
        let control = CacheControl(field)
        for directive in control.directives {
            require(
                !directive.name.isEmpty && directive.name == directive.name.lowercased()
                    && !directive.name.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: ",") }),
                "directive name \(directive.name.debugDescription) from \(field.debugDescription)")
            let seconds = control.seconds(directive.name) ?? -1
            require((0...CacheControl.maximumDeltaSeconds).contains(seconds), "\(directive.name): \(seconds)")
        }
        let written = control.directives.map { directive in
            guard let argument = directive.argument else { return directive.name }
            // By scalar: a quote followed by a combining mark is one Character, which a
            // Character-wise replacement would leave unescaped.
            var escaped = String.UnicodeScalarView()
            for scalar in argument.unicodeScalars {
                if scalar == "\\" || scalar == "\"" { escaped.append("\\") }
                escaped.append(scalar)
            }
            return "\(directive.name)=\"\(String(escaped))\""
        }
        let again = CacheControl(written.joined(separator: ", "))
        require(again == control, "\(field.debugDescription) reads back as \(again.directives) from \(written)")
    }

    private static func freshness(_ input: inout FuzzInput) {
        let names = ["Cache-Control", "Expires", "Date", "Age", "Last-Modified"]
        var headers: [String: String] = [:]
        while !input.isAtEnd {
            headers[names[input.int(below: names.count)]] = input.string(upTo: 40)
        }
        let requestTime = Date(timeIntervalSince1970: 1_800_000_000)
        let freshness = ResponseFreshness(
            statusCode: 200, headers: headers, requestTime: requestTime, responseTime: requestTime + 1)
        require(
            freshness.lifetime >= 0 && freshness.lifetime.isFinite && freshness.initialAge >= 0
                && freshness.initialAge.isFinite, "\(headers): \(freshness)")
        let later = freshness.age(at: requestTime + 100)
        require(later >= freshness.age(at: requestTime + 1), "\(headers): age went down")
    }
}
