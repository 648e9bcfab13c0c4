extension TestServer {
    /// The most recent upload resource created for the target `/resumable/{name}` (a `POST` or
    /// `PUT` with a valid `Upload-Complete`), as it stands now; `nil` when none was, or it was
    /// forgotten (the server keeps the last 1000). A cancelled upload is still reported.
    public func resumableUpload(named name: String) -> ResumableUploadSummary? {
        state.resumableUploads.summary(named: name)
    }
}
