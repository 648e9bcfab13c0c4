/// The monitor behind ``NetworkConfig/debugLogEnabled``: one line per finished request, with
/// credentials redacted (`[Errand] GET https://api.example.com/users?token=<redacted> → 200, 12.3 ms, 512 bytes`).
struct DebugLogMonitor: EventMonitor {
    /// Where lines go: standard error by default.
    var write: @Sendable (String) -> Void = DebugLog.write

    /// A tool that exits as its last request returns still logs that request.
    var finishesBeforeCaller: Bool { true }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        write(DebugLog.line(for: task))
    }
}
