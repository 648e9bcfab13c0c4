import CErrandCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a hop's easy handle is set up: connection, callbacks, method, trailers and header fields.
extension CurlTransfer {
    /// - Throws: ``ErrandError/transport(_:)`` when libcurl refuses an option that checks the
    ///   server: a request is never sent with less checking than it asked for.
    func configure() throws(ErrandError) {
        let request = hop.request
        setLong(ERRAND_CURLOPT_NOSIGNAL, 1)
        setLong(ERRAND_CURLOPT_TCP_NODELAY, 1)
        setLong(ERRAND_CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_ERRORBUFFER, errorBuffer)
        // Four times libcurl's default: a large body arrives in a quarter as many events.
        setLong(ERRAND_CURLOPT_BUFFERSIZE, Self.receiveBufferSize)
        setLong(ERRAND_CURLOPT_CONNECTTIMEOUT_MS, Int(CurlHop.timeout(request.timeoutInterval) * 1000))
        resolveList = try connection.configure(
            easy, toReach: request.url, isReplay: hop.isReplay, certificateBundle: certificateBundle)
        if let pins = hop.serverTrust.pins(for: request.url) {
            let pinned = pins.map { "sha256//" + $0 }.joined(separator: ";")
            let result = errand_curl_easy_setopt_string(easy, ERRAND_CURLOPT_PINNEDPUBLICKEY, pinned)
            try require(result, "check pinned public keys")
        }
        if hop.bodyPump != nil {
            // The body's framing is read here, so libcurl hands it over as it came.
            setLong(ERRAND_CURLOPT_HTTP_TRANSFER_DECODING, 0)
            setLong(ERRAND_CURLOPT_HTTP_CONTENT_DECODING, 0)
        } else if request.headers.headerField("Range") == nil
            && request.headers.headerField("Accept-Encoding") != "identity"
        {
            // A resumed download's byte offsets must be the server's, so a ranged body is never decoded.
            _ = errand_curl_easy_setopt_string(easy, ERRAND_CURLOPT_ACCEPT_ENCODING, "")
        }
        configureCallbacks()
        configureMethod(request.method.uppercased())
        if upload?.hasTrailers == true { try configureTrailers() }
        if upload != nil, request.headers.headerField("Upload-Complete") != nil { configureResumableSending() }
        configureHeaders(request)
    }

    /// A dropped connection loses what the kernel held to send: an upload that offers to resume
    /// (`Upload-Complete`) keeps at most ``resumableSendBuffer`` there — the bytes a drop makes it
    /// send again — on a connection of its own, which no later request inherits with that buffer.
    func configureResumableSending() {
        setLong(ERRAND_CURLOPT_FRESH_CONNECT, 1)
        setLong(ERRAND_CURLOPT_FORBID_REUSE, 1)
        _ = errand_curl_easy_setopt_sockopt_callback(easy, ERRAND_CURLOPT_SOCKOPTFUNCTION) { _, socket, _ in
            var size = Int32(CurlTransfer.resumableSendBuffer)
            _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            return 0
        }
    }

    /// The send buffer asked for a resumable upload's socket (Linux allots twice as much): on a
    /// 100 ms path it still carries 40 Mbit/s.
    static let resumableSendBuffer = 256 << 10

    /// A body with trailer fields goes out chunked over HTTP/1.1: libcurl sends trailers in no
    /// other framing.
    func configureTrailers() throws(ErrandError) {
        let url = hop.request.url
        if connection.httpVersion == .http2PriorKnowledge, url.scheme?.lowercased() != "https" {
            let reason =
                "a streamed body's trailer fields can be sent only over HTTP/1.1, and ConnectionOptions.httpVersion"
                + " asks for HTTP/2 with prior knowledge"
            throw .transport(
                URLError(
                    .unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
        }
        setLong(ERRAND_CURLOPT_HTTP_VERSION, Int(ERRAND_CURL_HTTP_VERSION_1_1))
        _ = errand_curl_easy_setopt_off(easy, ERRAND_CURLOPT_INFILESIZE_LARGE, -1)
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_TRAILERDATA, Unmanaged.passUnretained(self).toOpaque())
        _ = errand_curl_easy_setopt_trailer_callback(easy, ERRAND_CURLOPT_TRAILERFUNCTION) { list, context in
            guard let list, let context else { return ERRAND_CURL_TRAILERFUNC_ABORT }
            Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().appendTrailers(to: list)
            return ERRAND_CURL_TRAILERFUNC_OK
        }
    }

    /// Called by libcurl after the body's last byte: the fields the pump checked once the stream ended.
    func appendTrailers(to list: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        for (name, value) in upload?.trailers ?? [:] {
            // libcurl sends only lines with a space after the colon, and frees the list itself.
            list.pointee = errand_curl_slist_append(list.pointee, "\(name): \(value)") ?? list.pointee
        }
    }

    func configureCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_HEADERDATA, context)
        _ = errand_curl_easy_setopt_data_callback(easy, ERRAND_CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
            guard let context else { return 0 }
            let line = UnsafeRawBufferPointer(start: buffer, count: size * count)
            return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveHeader(line)
        }
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_WRITEDATA, context)
        _ = errand_curl_easy_setopt_data_callback(easy, ERRAND_CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
            guard let context else { return 0 }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: size * count)
            return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().receiveBody(bytes)
        }
    }

    func configureMethod(_ method: String) {
        guard let upload else {
            if method == "HEAD" {
                setLong(ERRAND_CURLOPT_NOBODY, 1)
            } else if method != "GET" {
                _ = errand_curl_easy_setopt_string(easy, ERRAND_CURLOPT_CUSTOMREQUEST, method)
            }
            return
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        setLong(ERRAND_CURLOPT_UPLOAD, 1)
        // -1, unknown: libcurl sends the body chunked on HTTP/1.1.
        _ = errand_curl_easy_setopt_off(easy, ERRAND_CURLOPT_INFILESIZE_LARGE, upload.size ?? -1)
        if method != "PUT" { _ = errand_curl_easy_setopt_string(easy, ERRAND_CURLOPT_CUSTOMREQUEST, method) }
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_READDATA, context)
        _ = errand_curl_easy_setopt_data_callback(easy, ERRAND_CURLOPT_READFUNCTION) { buffer, size, count, context in
            guard let context, let buffer else { return Int(ERRAND_CURL_READFUNC_ABORT) }
            let target = UnsafeMutableRawBufferPointer(start: buffer, count: size * count)
            return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().sendBody(into: target)
        }
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_SEEKDATA, context)
        _ = errand_curl_easy_setopt_seek_callback(easy, ERRAND_CURLOPT_SEEKFUNCTION) { context, offset, origin in
            guard let context else { return ERRAND_CURL_SEEKFUNC_CANTSEEK }
            return Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().rewindBody(
                to: offset, origin: origin)
        }
    }

    func configureHeaders(_ request: TransportRequest) {
        var lines: [String] = []
        for (name, value) in request.headers where !name.equalsIgnoringASCIICase("Content-Length") {
            // A line break would end the field and start another that the caller never set.
            guard !name.containsLineBreak, !value.containsLineBreak else { continue }
            // libcurl sends "Name;" as a field with an empty value; "Name:" would remove the field.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if let cookieHeader = hop.cookieHeader { lines.append("Cookie: \(cookieHeader)") }
        if upload != nil {
            // Waiting for "100 Continue" costs a round trip, and some servers never send it.
            lines.append("Expect:")
            if request.body?.isEmpty == false && request.headers.headerField("Content-Type") == nil {
                // What URLSession sends for a body without a type.
                lines.append("Content-Type: application/x-www-form-urlencoded")
            }
        }
        for line in lines {
            // On failure libcurl returns nil and keeps the list: keep it too, so it is freed.
            headerList = errand_curl_slist_append(headerList, line) ?? headerList
        }
        if let headerList { _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_HTTPHEADER, headerList) }
    }

    /// Throws unless `result`, of setting the option that lets the transfer do `what`, is
    /// `CURLE_OK`: a request is never sent with less checking, or elsewhere, than it asked for.
    func require(_ result: Int32, _ what: String) throws(ErrandError) {
        try CurlErrorMapping.require(result, what, url: hop.request.url)
    }

    func setLong(_ option: Int32, _ value: Int) {
        _ = errand_curl_easy_setopt_long(easy, option, value)
    }
}
