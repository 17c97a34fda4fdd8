#!/usr/bin/python3
"""A loopback TCP proxy that adds latency: every byte the upstream server sends back reaches the
client DELAY ms after the proxy received it (a pipe with that one-way latency on the answer path;
requests pass at once), so each request/response exchange on a connection costs DELAY ms more,
whatever the client or the protocol (HTTP/1.1 keep-alive included).  Used by scripts/bench/bench_s3.sh to
put moto's server "50 ms away" from instbench and the AWS CLI alike.

Bounded and self-stopping, since a benchmark's clean-up may not run:
- listens on 127.0.0.1 only and forwards only to a loopback address;
- at most --max-connections at a time (more are closed at once), at most 256 chunks of 64 KiB
  (16 MiB) held per connection while they wait out the delay (the upstream is not read meanwhile);
- exits after --timeout seconds, or within a second of its parent process exiting.

Counts (written as JSON to --stats FILE on SIGUSR1, then reset): connections accepted, exchanges
(requests: client data after the connection was idle or answering), the most connections with
a request waiting for its answer at one time, and the round trips one after another (the longest
chain of requests each sent after the answer to the one before it had been delivered: what the
added latency is paid for, at the least).

usage: delay_proxy.py --target PORT [--target-host 127.0.0.1] [--delay-ms 50] [--port-file FILE]
                      [--stats FILE] [--max-connections 512] [--timeout 900]"""
import argparse
import asyncio
import ipaddress
import json
import os
import signal
import socket
import sys

CHUNK = 64 << 10
MAX_CHUNKS = 256   # per connection: CHUNK * MAX_CHUNKS bytes held at most


class Stats:
    def __init__(self):
        self.open = self.waiting = 0   # now: connections open, requests waiting for their answer
        self.reset()

    def reset(self):
        self.connections = self.exchanges = self.max_waiting = 0
        self.answered_depth = self.rounds = 0   # chain length: of delivered answers, of any request

    def dump(self, path):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"connections": self.connections, "exchanges": self.exchanges,
                       "max_waiting": self.max_waiting, "rounds": self.rounds}, f)
        os.replace(tmp, path)
        self.reset()


class Conn:
    """One client connection's state: whether a request is waiting for its answer."""

    def __init__(self, stats):
        self.stats = stats
        self.waiting = False
        self.depth = 0

    def request_data(self):
        if not self.waiting:
            self.waiting = True
            self.depth = self.stats.answered_depth + 1
            self.stats.rounds = max(self.stats.rounds, self.depth)
            self.stats.exchanges += 1
            self.stats.waiting += 1
            self.stats.max_waiting = max(self.stats.max_waiting, self.stats.waiting)

    def answer_data(self):
        if self.waiting:
            self.waiting = False
            self.stats.waiting -= 1
            self.stats.answered_depth = max(self.stats.answered_depth, self.depth)


async def forward(reader, writer, conn):
    """Client to server, at once."""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            conn.request_data()
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def forward_delayed(reader, writer, conn, delay):
    """Server to client, each chunk DELAY s after it arrived (order kept)."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue(MAX_CHUNKS)

    async def pump():
        try:
            while True:
                data = await reader.read(CHUNK)
                await queue.put((loop.time() + delay, data))
                if not data:
                    return
        except (ConnectionError, OSError):
            await queue.put((loop.time() + delay, b""))

    pumping = asyncio.ensure_future(pump())
    try:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                break
            conn.answer_data()
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass
    finally:
        pumping.cancel()
        writer.close()


def make_handler(args, stats):
    async def handle(c_reader, c_writer):
        if stats.open >= args.max_connections:
            c_writer.close()
            return
        stats.open += 1
        stats.connections += 1
        conn = Conn(stats)
        try:
            s_reader, s_writer = await asyncio.open_connection(args.target_host, args.target)
        except OSError:
            stats.open -= 1
            c_writer.close()
            return
        try:
            await asyncio.gather(forward(c_reader, s_writer, conn),
                                 forward_delayed(s_reader, c_writer, conn, args.delay_ms / 1000.0))
        finally:
            conn.answer_data()
            stats.open -= 1
            s_writer.close()
            c_writer.close()
    return handle


async def watchdog(timeout, parent):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end and os.getppid() == parent:
        await asyncio.sleep(min(1.0, max(0.0, end - loop.time())))


async def main(args):
    stats = Stats()
    parent = os.getppid()
    server = await asyncio.start_server(make_handler(args, stats), "127.0.0.1", 0,
                                        family=socket.AF_INET, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    if args.stats:
        loop.add_signal_handler(signal.SIGUSR1, stats.dump, args.stats)
    stop = asyncio.ensure_future(watchdog(args.timeout, parent))
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, stop.cancel)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.replace(args.port_file + ".tmp", args.port_file)
    else:
        print(port, flush=True)
    try:
        await stop
    except asyncio.CancelledError:
        pass
    server.close()


def parse():
    ap = argparse.ArgumentParser(description="loopback TCP proxy adding latency to every answer")
    ap.add_argument("--target", type=int, required=True, help="upstream port")
    ap.add_argument("--target-host", default="127.0.0.1", help="upstream address (loopback only)")
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--port-file", help="where to write the port listened on (else printed)")
    ap.add_argument("--stats", help="file the counts are written to on SIGUSR1")
    ap.add_argument("--max-connections", type=int, default=512)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before it exits by itself")
    args = ap.parse_args()
    try:
        loopback = ipaddress.ip_address(args.target_host).is_loopback
    except ValueError:
        loopback = args.target_host == "localhost"
    if not loopback:
        ap.error("--target-host must be a loopback address")
    if not 0 <= args.delay_ms <= 10000 or not 0 < args.timeout <= 86400 or not 0 < args.max_connections <= 4096:
        ap.error("--delay-ms, --timeout or --max-connections out of range")
    return args


if __name__ == "__main__":
    try:
        asyncio.run(main(parse()))
    except KeyboardInterrupt:
        sys.exit(130)
