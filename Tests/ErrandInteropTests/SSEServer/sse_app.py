"""Server-Sent Events endpoints for Errand's interop suite: sse-starlette under uvicorn.

.ci/run starts it (``uvicorn sse_app:app``) and exports ERRAND_SSE_URL. sse-starlette ends every
line with CRLF and every event with an empty line; its own keep-alive ping is off, so the bytes
are the same on every run.

- ``GET /events?count=N&retry=MS``: a comment, then N events (default 3) ``id: K``, ``event: tick``,
  ``data: {"n":K}``, the first carrying ``retry: MS`` when asked; then the stream ends cleanly.
- ``GET /resume?count=N&drop_after=K&retry=MS``: events 1..K (default N // 2), then the server
  cuts the connection mid-stream (no last chunk), as a crashed server does. A reconnect with
  ``Last-Event-ID: J`` gets events J+1..N and a clean end.
- ``GET /empty``: 204, which tells an event source to stop.
- ``GET /wrongtype``: 200 ``text/plain``, which is not an event stream.
- ``GET /fail``: 500 with a short text body.
"""

import json

from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route


class DroppedStream(Exception):
    """Raised mid-stream on purpose: uvicorn then closes the connection without ending the body."""


def number(request, name, default):
    value = request.query_params.get(name)
    return default if value is None else int(value)


def tick(n, retry=None):
    return ServerSentEvent(data=json.dumps({"n": n}, separators=(",", ":")), event="tick", id=str(n), retry=retry)


async def events(request):
    count, retry = number(request, "count", 3), number(request, "retry", None)

    async def stream():
        yield ServerSentEvent(comment="errand interop stream")
        for n in range(1, count + 1):
            yield tick(n, retry if n == 1 else None)

    return EventSourceResponse(stream(), ping=0)


async def resume(request):
    count = number(request, "count", 6)
    drop_after = number(request, "drop_after", count // 2)
    retry = number(request, "retry", None)
    last_id = request.headers.get("last-event-id")
    first = int(last_id) + 1 if last_id and last_id.isdigit() else 1

    async def stream():
        for n in range(first, count + 1):
            yield tick(n, retry if n == first else None)
            if last_id is None and n == drop_after:
                raise DroppedStream(f"dropped after event {n}")

    return EventSourceResponse(stream(), ping=0)


async def empty(request):
    return Response(status_code=204)


async def wrongtype(request):
    return PlainTextResponse("this is not an event stream\n")


async def fail(request):
    return PlainTextResponse("the event source failed\n", status_code=500)


app = Starlette(
    routes=[
        Route("/events", events),
        Route("/resume", resume),
        Route("/empty", empty),
        Route("/wrongtype", wrongtype),
        Route("/fail", fail),
    ]
)
