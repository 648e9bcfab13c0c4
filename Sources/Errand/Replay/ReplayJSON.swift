import Foundation

/// A parsed JSON value that can be kept: a recording's JSON bodies are parsed once, when it is
/// read, not once per request and candidate entry.
indirect enum ReplayJSON: Sendable {
    case string(String)
    /// A number or a boolean, told apart by ``Foundation/NSNumber/isBoolean``, as JSON reads them.
    case number(NSNumber)
    case null
    case array([ReplayJSON])
    case object([String: ReplayJSON])

    /// Whether this is an array or an object.
    var isContainer: Bool {
        switch self {
        case .array, .object: true
        case .string, .number, .null: false
        }
    }

    /// The JSON in `data`; `nil` when it is not JSON.
    init?(parsing data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return nil
        }
        self.init(object)
    }

    /// A value `JSONSerialization` made.
    private init(_ value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case let object as [String: Any]: self = .object(object.mapValues(ReplayJSON.init))
        case let array as [Any]: self = .array(array.map(ReplayJSON.init))
        case let number as NSNumber: self = .number(number)
        default: self = .null
        }
    }
}
