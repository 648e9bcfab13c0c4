"""A WebSocket server on the `websockets` library, for Errand's interop tests.

One process, several listeners, one handler:
  --port        permessage-deflate offered (the library's default)
  --plain-port  no compression
  --tls-port    TLS with --cert/--key
  --mtls-port   TLS requiring a client certificate issued by --ca
  --unix        a Unix socket

Paths (query parameters after `?`):
  /echo                     echoes every message, text as text and binary as binary
  /hello                    sends one JSON text: the subprotocol chosen, whether compression was
                            agreed, the Authorization header; then closes with 1000
  /fragmented               sends a text message in three fragments and a binary one in two, then closes with 1000
  /close?code=N&reason=R    closes with code N and reason R
  /last-close?id=X (HTTP)   the code and reason of the close frame the client of /echo?id=X sent,
                            once that socket ended (waiting for it up to 10 s)
  /get, /health (plain HTTP) 200, for readiness probes

Subprotocols: "chat.v2" is chosen when offered, else none.
"""
import argparse
import asyncio
import http
import json
import ssl
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve, unix_serve
from websockets.exceptions import ConnectionClosed

# The close frames clients of /echo?id=X sent, by X (tests run in parallel), and an event set
# once each is known: the client may ask before the server's handler has seen its socket end.
closes = {}
closed = {}


def select_subprotocol(connection, offered):
    return "chat.v2" if "chat.v2" in offered else None


async def process_request(connection, request):
    path = urlsplit(request.path).path
    if path == "/last-close":
        key = parse_qs(urlsplit(request.path).query).get("id", [""])[0]
        try:
            await asyncio.wait_for(closed.setdefault(key, asyncio.Event()).wait(), 10)
        except asyncio.TimeoutError:
            pass
        code, reason = closes.get(key, (None, ""))
        return connection.respond(http.HTTPStatus.OK, f"{code} {reason}")
    if path in ("/get", "/health"):
        return connection.respond(http.HTTPStatus.OK, "ok\n")
    return None


async def handler(ws):
    parts = urlsplit(ws.request.path)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    try:
        if parts.path == "/echo":
            async for message in ws:
                await ws.send(message)
        elif parts.path == "/hello":
            await ws.send(json.dumps({
                "subprotocol": ws.subprotocol,
                "deflate": "permessage-deflate" in (ws.response.headers.get("Sec-WebSocket-Extensions") or ""),
                "authorization": ws.request.headers.get("Authorization"),
            }))
            await ws.close(1000)
        elif parts.path == "/fragmented":
            await ws.send(["frag", "men", "ted"])
            await ws.send([b"\x00\x01", b"\x02"])
            await ws.close(1000)
        elif parts.path == "/close":
            await ws.close(int(query.get("code", "1000")), query.get("reason", ""))
        else:
            await ws.close(1008, "unknown path")
    except ConnectionClosed:
        pass
    finally:
        if parts.path == "/echo" and "id" in query:
            # The frame the client sent, not ws.close_code: that stays None until the TCP
            # connection is gone, which may be after this handler ends.
            frame = ws.protocol.close_rcvd
            closes[query["id"]] = (frame.code, frame.reason) if frame else (None, "")
            closed.setdefault(query["id"], asyncio.Event()).set()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--plain-port", type=int, required=True)
    parser.add_argument("--tls-port", type=int, required=True)
    parser.add_argument("--mtls-port", type=int, required=True)
    parser.add_argument("--unix", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ca", required=True)
    args = parser.parse_args()

    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(args.cert, args.key)
    mtls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    mtls.load_cert_chain(args.cert, args.key)
    mtls.load_verify_locations(args.ca)
    mtls.verify_mode = ssl.CERT_REQUIRED

    # No timeouts of the server's own: under the thread sanitizer a client may take many seconds to
    # answer a ping or finish its handshake, and a server that gave up would fail the test for it.
    common = dict(
        select_subprotocol=select_subprotocol, process_request=process_request, max_size=32 << 20,
        open_timeout=None, ping_interval=None, close_timeout=None,
    )
    async with (
        serve(handler, args.host, args.port, **common),
        serve(handler, args.host, args.plain_port, compression=None, **common),
        serve(handler, args.host, args.tls_port, ssl=tls, **common),
        serve(handler, args.host, args.mtls_port, ssl=mtls, **common),
        unix_serve(handler, args.unix, **common),
    ):
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
