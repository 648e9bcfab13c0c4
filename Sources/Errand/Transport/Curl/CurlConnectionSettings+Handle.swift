import CErrandCurl
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CurlConnectionSettings {
    /// Sets `easy` up to reach `url` as these settings say: the URL (over a Unix socket for
    /// `http+unix`), HTTP version, proxy, trusted roots, client identity and host overrides.
    /// - Parameters:
    ///   - isReplay: The request is sent again after its HTTP/2 connection dropped it: on a new connection.
    ///   - certificateBundle: The trusted roots' PEM bytes, which outlive the transfer.
    /// - Returns: The `CURLOPT_RESOLVE` list, which must outlive the transfer; the caller frees it.
    /// - Throws: ``ErrandError/transport(_:)`` when libcurl refuses an option.
    func configure(
        _ easy: UnsafeMutableRawPointer, toReach url: URL, isReplay: Bool,
        certificateBundle: UnsafeRawBufferPointer?
    ) throws(ErrandError) -> UnsafeMutableRawPointer? {
        func setLong(_ option: Int32, _ value: Int) { _ = errand_curl_easy_setopt_long(easy, option, value) }
        func setString(_ option: Int32, _ value: String?) -> Int32 {
            errand_curl_easy_setopt_string(easy, option, value)
        }
        func require(_ result: Int32, _ what: String, code: URLError.Code) throws(ErrandError) {
            try CurlErrorMapping.require(result, what, url: url, code: code)
        }
        let target: URL
        if let socket = UnixSocketURL(url) {
            target = socket.httpURL
            try require(
                setString(ERRAND_CURLOPT_UNIX_SOCKET_PATH, socket.socketPath), "use a Unix socket",
                code: .unsupportedURL)
            // A local socket is never reached through a proxy.
            _ = setString(ERRAND_CURLOPT_PROXY, "")
        } else {
            target = url
            if let proxy {
                try require(
                    setString(ERRAND_CURLOPT_PROXY, proxy), "use ConnectionOptions.proxy", code: .unsupportedURL)
                // An explicit proxy serves every host: no_proxy is for the environment's.
                if !proxy.isEmpty { _ = setString(ERRAND_CURLOPT_NOPROXY, "") }
            }
        }
        _ = setString(ERRAND_CURLOPT_URL, target.absoluteString)
        setLong(ERRAND_CURLOPT_MAXAGE_CONN, idleConnectionTimeout)
        for (option, value) in httpVersionOptions(overTLS: target.scheme?.lowercased() == "https", isReplay: isReplay) {
            setLong(option, value)
        }
        if let bundle = certificateBundle {
            try require(
                errand_curl_easy_setopt_blob(easy, ERRAND_CURLOPT_CAINFO_BLOB, bundle.baseAddress, bundle.count),
                "use ConnectionOptions.trustedRoots", code: .secureConnectionFailed)
            if !trustsSystemDirectory { _ = setString(ERRAND_CURLOPT_CAPATH, nil) }
        }
        if let identity = clientIdentity {
            try require(
                setString(ERRAND_CURLOPT_SSLCERT, identity.certificate.path), "use ConnectionOptions.clientIdentity",
                code: .secureConnectionFailed)
            _ = setString(ERRAND_CURLOPT_SSLCERTTYPE, "PEM")
            _ = setString(ERRAND_CURLOPT_SSLKEY, identity.privateKey.path)
            _ = setString(ERRAND_CURLOPT_SSLKEYTYPE, "PEM")
            // Always set: without one, OpenSSL would ask for an encrypted key's password on the terminal.
            _ = setString(ERRAND_CURLOPT_KEYPASSWD, identity.password ?? "")
        }
        guard !resolveEntries.isEmpty else { return nil }
        var resolveList: UnsafeMutableRawPointer?
        for entry in resolveEntries {
            resolveList = errand_curl_slist_append(resolveList, entry) ?? resolveList
        }
        let result = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_RESOLVE, resolveList)
        guard result == ERRAND_CURLE_OK else {
            if let resolveList { errand_curl_slist_free_all(resolveList) }
            try require(result, "use ConnectionOptions.hostOverrides", code: .unsupportedURL)
            return nil
        }
        return resolveList
    }

    /// The long options that choose the HTTP version and how a request shares connections.
    private func httpVersionOptions(overTLS: Bool, isReplay: Bool) -> [(Int32, Int)] {
        // The connection that dropped the request is going away: a replay must not wait for it.
        var options = isReplay ? [(ERRAND_CURLOPT_FRESH_CONNECT, 1)] : []
        switch httpVersion {
        case .automatic:
            options.append((ERRAND_CURLOPT_HTTP_VERSION, Int(ERRAND_CURL_HTTP_VERSION_2TLS)))
            // Concurrent requests wait to share the first connection rather than each open one.
            if overTLS { options.append((ERRAND_CURLOPT_PIPEWAIT, 1)) }
        case .http1_1:
            options.append((ERRAND_CURLOPT_HTTP_VERSION, Int(ERRAND_CURL_HTTP_VERSION_1_1)))
        case .http2PriorKnowledge:
            options.append((ERRAND_CURLOPT_HTTP_VERSION, Int(ERRAND_CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)))
            if overTLS || reusesCleartextHTTP2 {
                options.append((ERRAND_CURLOPT_PIPEWAIT, 1))
            } else {
                // This libcurl fails a second request on an h2c connection: one connection each.
                options += [(ERRAND_CURLOPT_FRESH_CONNECT, 1), (ERRAND_CURLOPT_FORBID_REUSE, 1)]
            }
        }
        return options
    }
}
