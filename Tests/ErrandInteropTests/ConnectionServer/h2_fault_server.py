"""An HTTP/2 server that misbehaves on purpose, for Errand's connection interop tests.

Written with the ``h2`` library (hyper-h2) on asyncio. One process serves two ports that share
all state (keys, counts, the connection counter):

- ``--port``: h2c with prior knowledge on plain TCP (ERRAND_H2_FAULT_URL). No HTTP/1.1, no Upgrade.
- ``--tls-port``: h2 over TLS, ALPN ``h2`` only, with ``--cert``/``--key`` (ERRAND_H2_FAULT_TLS_URL).

Paths (the query may carry other parameters; only ``key`` and ``code`` are read):

- ``/ok``: 200 ``{"stream_id": N, "connection": C}``; C numbers connections from 1 in accept order.
- ``/goaway-mid-response``: 200 headers with ``content-length: 100000``, 1000 bytes of body, then
  GOAWAY(last_stream_id = this stream, INTERNAL_ERROR), then the server closes the connection.
- ``/reset-mid-response``: the same headers and 1000 bytes, then RST_STREAM(INTERNAL_ERROR) on this
  stream only; the connection stays open and usable.
- ``/refuse-once?key=K``: the first request with key K gets RST_STREAM(REFUSED_STREAM) before
  anything else (the request was not processed); later ones get 200 ``{"attempt": n}``.
- ``/goaway-before-processing?key=K``: the first request with key K gets GOAWAY(last_stream_id =
  this stream - 2, i.e. lower than it; NO_ERROR) and the server closes the connection, so the
  request was never processed and may be retried on a new connection; later ones get 200
  ``{"attempt": n}``.
- ``/count?key=K``: 200 ``{"count": n}``, how many requests with key K (on any path) the server has
  seen, refused ones included.
- ``/hang-headers``: never answers; the stream stays open until the client gives up.
- anything else: 404 ``{"error": "not found"}``.

``code=N`` (an HTTP/2 error code number) overrides the error code of the GOAWAY or RST_STREAM on
the ``goaway-*`` and ``reset-mid-response`` paths.

Requests are answered once their request stream has ended (a request body is read and discarded);
the two "before processing" faults act as soon as the request headers arrive. After a GOAWAY the
server half-closes (plain TCP: FIN right after the GOAWAY; TLS: close_notify) and drops the
connection once the client closes or after two seconds.

What curl 7.88.1 (libcurl 7.88.1 with nghttp2 1.52.0, the libcurl Errand's CurlTransport links on
this machine) does, checked with ``curl --http2-prior-knowledge -v`` on the plain port and
``curl --http2 --cacert ca.pem -v`` on the TLS port (the same on both):

- ``/ok``: exit 0, the JSON.
- ``/goaway-mid-response``: exit 18 (CURLE_PARTIAL_FILE), "HTTP/2 stream 1 was not closed cleanly
  before end of the underlying stream", after 1000 of the 100000 bytes. Also 18 with ``code=0``.
- ``/reset-mid-response``: exit 92 (CURLE_HTTP2_STREAM), "HTTP/2 stream 1 was not closed cleanly:
  INTERNAL_ERROR (err 2)", after 1000 bytes. Over TLS a next URL on the same command line reuses the
  connection (``num_connects`` 0) and gets 200 on stream 3.
- ``/refuse-once?key=K``: exit 0 with ``{"attempt":2}``: libcurl itself retries a REFUSED_STREAM
  once on a fresh connection ("REFUSED_STREAM, retrying a fresh connect", "Connection died,
  retrying a fresh connect (retry count: 1)"); ``/count?key=K`` then says 2.
- ``/goaway-before-processing?key=K``: exit 16 (CURLE_HTTP2), "Error in the HTTP2 framing layer",
  after "recveived GOAWAY, error=0, last_stream=0" (sic). libcurl does NOT retry the unprocessed
  stream; ``/count?key=K`` then says 1. Same as stream 3 after ``/ok`` on a reused TLS connection
  (last_stream=1), and with ``code=2``. ``curl --retry 2 --retry-all-errors`` gets ``{"attempt":2}``.
- ``/hang-headers`` with ``--max-time 2``: exit 28, "Operation timed out after 2001 milliseconds
  with 0 bytes received".

Beware, libcurl 7.88.1 bug (curl/curl#10634, fixed in 8.0.0 by #10643): with
``--http2-prior-knowledge`` (CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) a reused connection fails at once
with exit 16 "Error in the HTTP2 framing layer", sequential or ``--parallel``; only the first
request on an h2c connection succeeds. h2 over TLS (ALPN) reuses and multiplexes fine.

Run: ``python h2_fault_server.py --host 127.0.0.1 --port P --tls-port Q --cert server.pem --key
server.key``; it prints one "listening" line per port once both accept connections.
"""

import argparse
import asyncio
import json
import ssl
import sys
from urllib.parse import parse_qs, urlsplit

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from h2.errors import ErrorCodes

PARTIAL_LENGTH = 100_000
PARTIAL_SENT = 1000
CLOSE_GRACE = 2.0

counts = {}
connection_numbers = iter(range(1, 1 << 62))


def json_body(value):
    return json.dumps(value, separators=(",", ":")).encode()


class Connection:
    def __init__(self, reader, writer):
        self.reader = reader
        self.writer = writer
        self.number = next(connection_numbers)
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        self.requests = {}  # stream id -> (path, query dict)
        self.closing = False

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self):
        self.h2.initiate_connection()
        self.flush()
        try:
            while not self.closing:
                data = await self.reader.read(65536)
                if not data:
                    break
                try:
                    events = self.h2.receive_data(data)
                except h2.exceptions.ProtocolError:
                    self.flush()  # h2 has queued a GOAWAY(PROTOCOL_ERROR)
                    break
                for event in events:
                    self.handle(event)
                    if self.closing:
                        break
                self.flush()
                await self.writer.drain()
            if self.closing:
                await self.close_after_goaway()
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
            pass
        finally:
            self.writer.close()

    async def close_after_goaway(self):
        """Sends what is queued (the GOAWAY), half-closes, and waits for the client to go."""
        self.flush()
        await self.writer.drain()
        if self.writer.can_write_eof():
            self.writer.write_eof()
        else:
            self.writer.close()  # TLS: close_notify
        async def discard_until_eof():
            while await self.reader.read(65536):
                pass

        try:
            await asyncio.wait_for(discard_until_eof(), CLOSE_GRACE)
        except (asyncio.TimeoutError, ConnectionError, ssl.SSLError):
            pass

    def handle(self, event):
        if isinstance(event, h2.events.RequestReceived):
            headers = dict(event.headers)
            url = urlsplit(headers.get(":path", "/"))
            query = {name: values[0] for name, values in parse_qs(url.query).items()}
            self.requests[event.stream_id] = (url.path, query)
            self.on_headers(event.stream_id, url.path, query)
        elif isinstance(event, h2.events.DataReceived):
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            if event.stream_id in self.requests:
                path, query = self.requests.pop(event.stream_id)
                self.respond(event.stream_id, path, query)
        elif isinstance(event, h2.events.StreamReset):
            self.requests.pop(event.stream_id, None)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.closing = True

    def on_headers(self, stream_id, path, query):
        """Acts on the faults that happen before the request is processed."""
        key = query.get("key")
        if path in ("/refuse-once", "/goaway-before-processing") and key is not None:
            counts[key] = counts.get(key, 0) + 1
            attempt = counts[key]
            if attempt == 1:
                del self.requests[stream_id]
                if path == "/refuse-once":
                    self.h2.reset_stream(stream_id, self.error_code(query, ErrorCodes.REFUSED_STREAM))
                else:
                    self.h2.close_connection(
                        error_code=self.error_code(query, ErrorCodes.NO_ERROR),
                        last_stream_id=max(stream_id - 2, 0),
                    )
                    self.closing = True
            else:
                self.requests[stream_id] = (path, dict(query, attempt=str(attempt)))
        elif key is not None and path != "/count":
            counts[key] = counts.get(key, 0) + 1

    @staticmethod
    def error_code(query, default):
        return int(query["code"]) if "code" in query else default

    def send_json(self, stream_id, value, status=200):
        body = json_body(value)
        self.h2.send_headers(stream_id, [
            (":status", str(status)),
            ("content-type", "application/json"),
            ("content-length", str(len(body))),
            ("server", "errand-h2-fault"),
        ])
        self.h2.send_data(stream_id, body, end_stream=True)

    def send_partial(self, stream_id):
        self.h2.send_headers(stream_id, [
            (":status", "200"),
            ("content-type", "application/octet-stream"),
            ("content-length", str(PARTIAL_LENGTH)),
            ("server", "errand-h2-fault"),
        ])
        self.h2.send_data(stream_id, b"e" * PARTIAL_SENT)

    def respond(self, stream_id, path, query):
        if path == "/ok":
            self.send_json(stream_id, {"stream_id": stream_id, "connection": self.number})
        elif path in ("/refuse-once", "/goaway-before-processing"):
            self.send_json(stream_id, {"attempt": int(query.get("attempt", 1))})
        elif path == "/count":
            self.send_json(stream_id, {"count": counts.get(query.get("key"), 0)})
        elif path == "/goaway-mid-response":
            self.send_partial(stream_id)
            self.h2.close_connection(
                error_code=self.error_code(query, ErrorCodes.INTERNAL_ERROR), last_stream_id=stream_id
            )
            self.closing = True
        elif path == "/reset-mid-response":
            self.send_partial(stream_id)
            self.h2.reset_stream(stream_id, self.error_code(query, ErrorCodes.INTERNAL_ERROR))
        elif path == "/hang-headers":
            pass
        else:
            self.send_json(stream_id, {"error": "not found"}, status=404)


async def serve(reader, writer):
    await Connection(reader, writer).run()


async def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-port", type=int)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    args = parser.parse_args()

    servers = [await asyncio.start_server(serve, args.host, args.port)]
    print(f"h2c (prior knowledge) listening on http://{args.host}:{args.port}", flush=True)
    if args.tls_port is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
        context.set_alpn_protocols(["h2"])
        servers.append(await asyncio.start_server(serve, args.host, args.tls_port, ssl=context))
        print(f"h2 (TLS, ALPN h2) listening on https://{args.host}:{args.tls_port}", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
