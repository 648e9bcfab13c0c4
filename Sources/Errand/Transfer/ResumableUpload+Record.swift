import Foundation

extension ResumableUpload {
    /// An upload resource the server offered, kept as JSON (owner-only) in `ResumableUploads/`
    /// of the request's cache folder (an account's, with ``NetworkConfig/cacheDirPathFilters``),
    /// named by a hash of the method, the URL and the file's path; gone once the upload is over.
    struct Record: Codable, Equatable {
        /// What the file was when the upload began: a record of another file is never resumed.
        struct FileState: Codable, Equatable {
            var size: Int64
            /// Seconds since 1970 of its last change.
            var modified: Double

            /// `url`'s size and time of last change.
            /// - Throws: ``ErrandError/fileSystem(_:)`` when the file cannot be measured.
            init(of url: URL) throws(ErrandError) {
                size = try UploadFile.size(of: url, subject: "resumable upload")
                let attributes = try? FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
                modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            }
        }

        var version = 1
        var uploadURL: String
        var requestURL: String
        var file: FileState

        /// Whether this record may resume an upload of `file` to `url`: never on another origin,
        /// which a record written by someone else could name, and the request's credentials go there.
        func resumes(file state: FileState, to url: URL) -> Bool {
            guard let upload = URL(string: uploadURL) else { return false }
            return version == 1 && file == state && requestURL == Self.withoutUserInfo(url).absoluteString
                && ResumableUpload.isSameOrigin(upload, url)
        }

        /// `url` without its user information: a password in it is the request's to send, never
        /// a record's to keep; the request's own goes with each attempt.
        static func withoutUserInfo(_ url: URL) -> URL {
            guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
                parts.percentEncodedUser != nil || parts.percentEncodedPassword != nil
            else { return url }
            parts.percentEncodedUser = nil
            parts.percentEncodedPassword = nil
            return parts.url ?? url
        }

        /// `url` with the user information of `request`'s URL, if it has any.
        static func url(_ url: URL, withUserInfoOf request: URL) -> URL {
            guard let from = URLComponents(url: request, resolvingAgainstBaseURL: false),
                from.percentEncodedUser != nil || from.percentEncodedPassword != nil,
                var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return url }
            parts.percentEncodedUser = from.percentEncodedUser
            parts.percentEncodedPassword = from.percentEncodedPassword
            return parts.url ?? url
        }

        /// Where the record of `file`'s upload by `request` lives.
        static func file(for request: TransportRequest, uploading file: URL, in directory: URL) -> URL {
            let url = withoutUserInfo(request.url).absoluteString
            let key = "\(request.method.uppercased()) \(url) \(file.standardizedFileURL.path)"
            return directory.appendingPathComponent(folderName, isDirectory: true)
                .appendingPathComponent(FNV1a.hex(of: key.utf8) + ".json")
        }

        /// The folder of the records, under the cache directory.
        static let folderName = "ResumableUploads"

        /// The record at `url`; `nil` when there is none or it is unreadable.
        static func load(from url: URL) -> Record? {
            guard let data = try? Data(contentsOf: url) else { return nil }
            return try? JSONDecoder().decode(Record.self, from: data)
        }

        /// Writes the record whole, atomically, readable by its owner only.
        /// - Throws: ``ErrandError/fileSystem(_:)``.
        func save(to url: URL) throws(ErrandError) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            // A struct of strings and numbers always encodes.
            let data = (try? encoder.encode(self)) ?? Data()
            try OwnerOnlyFile.write(data, to: url, creatingDirectory: true, subject: "resumable upload record")
        }

        static func remove(_ url: URL) {
            try? FileManager.default.removeItem(at: url)
        }
    }
}
