"""A plain ASGI app that reports, as JSON, what the connection looked like to the server.

.ci/interop-servers runs it under hypercorn three times (one worker each):

- ERRAND_H2_URL: TLS with the server certificate, ALPN ``h2`` and ``http/1.1``.
- ERRAND_H2C_URL: plain TCP; HTTP/1.1, and HTTP/2 with prior knowledge (h2c), on the same port.
- ERRAND_MTLS_URL: TLS that requires a client certificate issued by ERRAND_CONNECTION_CA.

Every path but the two below answers 200 ``application/json``::

    {"path": "/x", "query": "a=1", "method": "GET", "http_version": "2" | "1.1",
     "client_port": 54321, "host": "127.0.0.1:8443", "headers": {"user-agent": "..."},
     "tls": true, "client_cert_subject": null, "body_length": 0}

``client_port`` is the client's source port, so requests that share a connection report the same
one. ``host`` is the Host header (hypercorn turns HTTP/2's ``:authority`` into it). Header names are
lowercased; a repeated header's values are joined with ``", "``. ``body_length`` counts the request
body's bytes.

``client_cert_subject`` is the subject (RFC 4514) of the peer certificate when the ASGI scope has
the TLS extension (``scope["extensions"]["tls"]``). Hypercorn 0.18 does not provide it (its scope
extensions are only ``http.response.trailers``, ``http.response.push`` and
``http.response.early_hint``), so under hypercorn it is always null: the mTLS server proves a client
certificate was accepted by answering at all, as it refuses the handshake without one.

- ``GET /delay?ms=N``: waits N milliseconds (asyncio.sleep) before answering, so concurrent
  requests overlap; the JSON is the same as above.
- ``GET /bytes?n=N``: N bytes of ``application/octet-stream``, byte i being ``i % 256``, sent in
  64 KiB chunks with a Content-Length.
"""

import asyncio
import json
from urllib.parse import parse_qs

CHUNK = 64 * 1024


def query_number(scope, name, default):
    values = parse_qs(scope["query_string"].decode("latin-1")).get(name)
    return int(values[0]) if values else default


def client_cert_subject(scope):
    tls = scope.get("extensions", {}).get("tls")
    if not tls:
        return None
    if tls.get("client_cert_name"):
        return tls["client_cert_name"]
    chain = tls.get("client_cert_chain") or []
    if not chain:
        return None
    try:
        from cryptography import x509

        first = chain[0].encode() if isinstance(chain[0], str) else chain[0]
        return x509.load_pem_x509_certificate(first).subject.rfc4514_string()
    except Exception:  # an unexpected shape must not break the report
        return None


def report(scope, body_length):
    headers = {}
    for name, value in scope["headers"]:
        name, value = name.decode("latin-1").lower(), value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    client = scope.get("client")
    return {
        "path": scope["path"],
        "query": scope["query_string"].decode("latin-1"),
        "method": scope["method"],
        "http_version": scope["http_version"],
        "client_port": client[1] if client else None,
        "host": headers.get("host", headers.get(":authority")),
        "headers": headers,
        "tls": scope.get("scheme") == "https",
        "client_cert_subject": client_cert_subject(scope),
        "body_length": body_length,
    }


async def read_body(receive):
    length = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return length
        length += len(message.get("body", b""))
        if not message.get("more_body", False):
            return length


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return

    body_length = await read_body(receive)

    if scope["path"] == "/bytes":
        n = query_number(scope, "n", 0)
        await send({
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/octet-stream"), (b"content-length", b"%d" % n)],
        })
        pattern = bytes(range(256)) * (CHUNK // 256)
        sent = 0
        while sent < n:
            size = min(CHUNK, n - sent)
            await send({"type": "http.response.body", "body": pattern[:size], "more_body": sent + size < n})
            sent += size
        if n == 0:
            await send({"type": "http.response.body", "body": b""})
        return

    if scope["path"] == "/delay":
        await asyncio.sleep(query_number(scope, "ms", 0) / 1000)

    body = json.dumps(report(scope, body_length), separators=(",", ":")).encode()
    await send({
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))],
    })
    await send({"type": "http.response.body", "body": body})
