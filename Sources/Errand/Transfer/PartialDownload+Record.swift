extension PartialDownload {
    /// What the partial file holds, stored beside it as JSON.
    package struct Record: Codable, Equatable {
        var version = 1
        var url: String
        package var etag: String?
        package var lastModified: String?
        var expectedLength: Int64?

        /// The `If-Range` value: a strong ETag, else the Last-Modified date; `nil` forbids resuming.
        package var validator: String? {
            if let etag, !etag.hasPrefix("W/") { return etag }
            return lastModified
        }
    }
}
