#!/usr/bin/env python3
"""Server-Sent Events for PeerBenchmarks' scale.* benchmarks: many open streams, one process.

Standard library only (asyncio), so it runs wherever python3 does. It prints the port it listens
on (127.0.0.1, chosen by the kernel) and serves until its standard input closes. The root test
server gives each connection a thread of its own, which 10,000 streams would turn into 10,000
threads; one asyncio loop holds them all.

GET /events?streams=N&count=K&group=G&interval_ms=MS
    200 text/event-stream, chunked, Connection: close. The stream stays silent until N
    connections of group G are open, so a client's time to open them all, and its memory with
    them all open, are measured before any event flows. Then each stream gets K events (default
    10), MS milliseconds apart (default 1000), then the last chunk, and the connection closes.
    Each event is one chunk, `data: {"n":K,"t":NS}` and a blank line, NS being
    time.monotonic_ns() (CLOCK_MONOTONIC on Linux, one clock for every process of the machine)
    read just before that chunk is written: the client tells the latency from send to consumer.

The streams of a group are spread over SLOTS evenly spaced moments of each interval, so that N
events a second arrive as a steady trickle, not a burst every second that would measure the
server's loop as much as the client.
"""

import asyncio
import resource
import sys
import time
from urllib.parse import parse_qs, urlsplit

SLOTS = 100
# A group starts this long after its last stream opened, so that the client has seen every
# stream's head before the first event.
START_DELAY = 0.2

HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/event-stream\r\n"
    b"Cache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n"
    b"Connection: close\r\n"
    b"\r\n"
)


class Group:
    """The streams of one measurement: silent until `expected` are open, then ticking together."""

    def __init__(self, expected, count, interval):
        self.expected = expected
        self.count = count
        self.interval = interval
        self.writers = []
        self.done = asyncio.Event()

    def add(self, writer):
        self.writers.append(writer)
        if len(self.writers) == self.expected:
            asyncio.get_running_loop().create_task(self.tick())

    async def tick(self):
        loop = asyncio.get_running_loop()
        start = loop.time() + START_DELAY
        slots = [self.writers[slot::SLOTS] for slot in range(SLOTS)]
        for n in range(1, self.count + 1):
            for slot, writers in enumerate(slots):
                due = start + (n - 1) * self.interval + slot * self.interval / SLOTS
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                for writer in writers:
                    if writer.is_closing():
                        continue
                    event = b'data: {"n":%d,"t":%d}\n\n' % (n, time.monotonic_ns())
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        for writer in self.writers:
            if not writer.is_closing():
                writer.write(b"0\r\n\r\n")
                writer.close()
        self.done.set()


groups = {}


def number(query, name, default):
    values = query.get(name)
    return int(values[0]) if values else default


async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split(" ")
    target = urlsplit(parts[1] if len(parts) > 1 else "/")
    if parts[0] != "GET" or target.path != "/events":
        body = b"not found\n"
        writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        writer.close()
        return
    query = parse_qs(target.query)
    name = query.get("group", ["default"])[0]
    group = groups.get(name)
    if group is None:
        group = Group(number(query, "streams", 1), number(query, "count", 10), number(query, "interval_ms", 1000) / 1000)
        groups[name] = group
    writer.write(HEAD)
    group.add(writer)
    await group.done.wait()
    groups.pop(name, None)


async def main():
    # Every stream is a descriptor: take as many as the hard limit allows.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=65535)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.buffer.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
