/// The faults a resumable upload is created with, from the query of its creation URL, and kept
/// for the upload's whole life: `drop_at=N[,M…]` (the offsets at which the connection appending
/// is reset, each once) and `no_104=1` (no `104` interim response at all).
struct ResumableUploadFaults {
    /// Ascending, without repeats.
    var dropPoints: [Int64] = []
    var withholdsInterimResponses = false

    /// Every value must make sense, so a typo fails the request instead of being ignored:
    /// `nil` for a `drop_at` that is not a list of whole numbers or a `no_104` other than 0 or 1.
    init?(_ query: [(name: String, value: String)]) {
        var points = Set<Int64>()
        for item in query {
            switch item.name {
            case "drop_at":
                for part in item.value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let point = ResumableUploadFields.integer(part) else { return nil }
                    points.insert(point)
                }
            case "no_104":
                guard let flag = ["0": false, "1": true][item.value] else { return nil }
                withholdsInterimResponses = flag
            default:
                continue
            }
        }
        dropPoints = points.sorted()
    }

    /// What a `400` says about the query.
    static let usage = "drop_at must be whole numbers separated by commas, no_104 0 or 1\n"
}
