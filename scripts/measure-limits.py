#!/usr/bin/env python3
"""Measures what a hostile client can make a built server spend, row by row, beside each limit.

    python3 scripts/measure-limits.py [path/to/navigation-values]   (default: .build/release/navigation-values)

Each row starts its own server (`serve --port 0`, a database in a temporary folder, admin token
`admin`, the default limits) on 127.0.0.1 and prints what it saw: statuses, answer sizes, the
server's resident memory (/proc/PID/status VmRSS) and CPU time, the database's size. Measures,
never asserts: the tests assert the bounds (ResourceBoundTests and the API suites).
"""

import http.client
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

BINARY = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/navigation-values")
ADMIN = {"Authorization": "Bearer admin"}


class Server:
    def __init__(self, *flags, folder=None):
        self.folder = folder or tempfile.mkdtemp(prefix="nv-measure-")
        self.db = os.path.join(self.folder, "db.sqlite")
        self.process = subprocess.Popen(
            [BINARY, "serve", "--port", "0", "--db", self.db, "--admin-token", "admin", "--log-level", "error",
             *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"the server did not start: {line!r}")
        self.port = int(line.strip().rsplit(":", 1)[1])

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def send(self, method, path, body=None, headers=None, connection=None):
        own = connection is None
        connection = connection or self.connection()
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        headers = dict(headers or {})
        if data is not None:
            headers.setdefault("Content-Type", "application/json")
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        if own:
            connection.close()
        return response.status, payload, response

    def create(self, body=None, headers=ADMIN):
        status, payload, _ = self.send("POST", "/v1/sessions", body or {}, headers)
        assert status == 201, (status, payload[:200])
        answer = json.loads(payload)
        return answer["id"], {"Authorization": "Bearer " + answer["token"]}, answer["token"]

    def metric(self, name):
        _, payload, _ = self.send("GET", "/metrics")
        for line in payload.decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def rss_mib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def db_mib(self):
        return sum(os.path.getsize(self.db + suffix) for suffix in ("", "-wal") if os.path.exists(self.db + suffix)) / 2**20

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=60)


def empty_screens(count):
    return {"screens": [{} for _ in range(count)]}


def row(title):
    print(f"\n## {title}")


def amplification():
    row("Amplification (was: a 4.5 KB PUT …/path answered 18 MB, 37→120 MiB, a 39 MB database; a 60 KB PATCH answered 18 MB; a 2 KB PUT cost 1.1 s of CPU)")
    server = Server()
    defaults = {f"d{i}": {"type": "string", "default": "x" * 4000} for i in range(15)}
    status, payload, _ = server.send("POST", "/v1/sessions", {"schema": {"values": defaults}}, ADMIN)
    heavy = json.loads(payload)
    heavy_auth = {"Authorization": "Bearer " + heavy["token"]}
    plain, plain_auth, _ = server.create()
    body = json.dumps(empty_screens(999)).encode()
    status, payload, _ = server.send("PUT", f"/v1/sessions/{plain}/path", body, plain_auth)
    print(f"setup: PUT path of 999 empty screens on a plain session: {status}, {len(payload)} bytes")
    before, cpu = server.rss_mib(), server.cpu_seconds()
    status, payload, _ = server.send("PUT", f"/v1/sessions/{heavy['id']}/path", body, heavy_auth)
    used = server.cpu_seconds() - cpu
    print(f"PUT path, {len(body)} bytes, 999 screens over 60 KB of defaults: {status}, answer {len(payload)} bytes, "
          f"server CPU {used:.3f} s, {json.loads(payload).get('limit')}")
    patch = json.dumps({"v": "v" * 60000}).encode()
    cpu = server.cpu_seconds()
    status, payload, _ = server.send("PATCH", f"/v1/sessions/{plain}/screens/root/values", patch, plain_auth)
    used = server.cpu_seconds() - cpu
    print(f"PATCH root, {len(patch)} bytes, inherited by 1,000 screens: {status}, answer {len(payload)} bytes, "
          f"server CPU {used:.3f} s, {json.loads(payload).get('limit')}")
    big_default = {"schema": {"values": {"d": {"type": "string", "default": "x" * 70000}}}}
    status, payload, _ = server.send("POST", "/v1/sessions", big_default, ADMIN)
    print(f"create with one 70 KB default: {status} {json.loads(payload).get('type')}")
    print(f"resident {before:.1f} → {server.rss_mib():.1f} MiB; database {server.db_mib():.2f} MiB")
    server.stop()


def stuck_readers():
    row("Stuck SSE readers (was: 20 stuck readers and one 609-byte PUT took the server from 82 to 623 MiB)")
    server = Server()
    session, auth, token = server.create({"root": {"values": {"big": "b" * 60000}}})
    readers = []
    for _ in range(20):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.connect(("127.0.0.1", server.port))
        reader.sendall(f"GET /v1/sessions/{session}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                       f"Authorization: Bearer {token}\r\n\r\n".encode())
        readers.append(reader)  # never read
    deadline = time.time() + 30
    while server.metric("navigation_values_subscribers") != 20 and time.time() < deadline:
        time.sleep(0.05)
    before = server.rss_mib()
    body = json.dumps(empty_screens(40)).encode()
    for _ in range(3):
        status, payload, _ = server.send("PUT", f"/v1/sessions/{session}/path", body, auth)
    time.sleep(2)
    print(f"20 readers that never read, 3 × PUT path ({len(body)} bytes, 40 screens inheriting 60 KB: "
          f"a {len(payload) / 1e6:.1f} MB event each): last {status}")
    print(f"resident {before:.1f} → {server.rss_mib():.1f} MiB; subscribers {server.metric('navigation_values_subscribers'):.0f}, "
          f"dropped {server.metric('navigation_values_subscribers_dropped_total'):.0f}")
    extra = []
    for _ in range(100):
        reader = socket.create_connection(("127.0.0.1", server.port))
        reader.sendall(f"GET /v1/sessions/{session}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                       f"Authorization: Bearer {token}\r\n\r\n".encode())
        extra.append(reader)
    deadline = time.time() + 30
    while server.metric("navigation_values_subscribers") != 100 and time.time() < deadline:
        time.sleep(0.05)
    status, _, response = server.send("GET", f"/v1/sessions/{session}/events", headers={**auth, "Accept": "text/event-stream"})
    print(f"subscriber 101 of one session (cap 100): {status}, Retry-After {response.getheader('Retry-After')}")
    for reader in readers + extra:
        reader.close()
    server.stop()


def anonymous_growth():
    row("Anonymous growth (was: 3,906 creates/s from one connection, all 201; 200 forged-token GETs loaded 200 sessions)")
    server = Server()
    connection = server.connection()
    counts, started = {}, time.time()
    for _ in range(1000):
        status, _, _ = server.send("POST", "/v1/sessions", {}, {}, connection)
        counts[status] = counts.get(status, 0) + 1
    elapsed = time.time() - started
    status, _, response = server.send("POST", "/v1/sessions", {}, {})
    print(f"1,000 anonymous creates on one connection in {elapsed:.2f} s: {counts}; "
          f"the next: {status}, Retry-After {response.getheader('Retry-After')}")
    counts = {}
    for _ in range(300):
        status, _, _ = server.send("POST", "/v1/sessions", {}, ADMIN, connection)
        counts[status] = counts.get(status, 0) + 1
    print(f"300 more with the admin token: {counts}")
    ids = [server.create()[0] for _ in range(200)]
    folder = server.folder
    server.stop()
    server = Server("--max-loaded-sessions", "100", folder=folder)
    statuses = {}
    for session in ids:
        status, _, _ = server.send("GET", f"/v1/sessions/{session}", headers={"Authorization": "Bearer t_forged"})
        statuses[status] = statuses.get(status, 0) + 1
    print(f"after a restart, 200 GETs with a forged token: {statuses}; "
          f"sessions loaded {server.metric('navigation_values_sessions_loaded'):.0f}")
    for session in ids:
        server.send("GET", f"/v1/sessions/{session}", headers=ADMIN)
    print(f"200 GETs with the admin token, --max-loaded-sessions 100: "
          f"sessions loaded {server.metric('navigation_values_sessions_loaded'):.0f}")
    server.stop()


def event_loops():
    row("Work on the event loops (was: /healthz 1.5 ms, then 646–1,161 ms during one heavy PUT)")
    server = Server()
    session, auth, _ = server.create()
    # The heaviest path the limits allow: 999 screens, each with a value, answered in full.
    body = json.dumps({"screens": [{"values": {"k": "v" * 800}} for _ in range(999)]}).encode()
    status, payload, _ = server.send("PUT", f"/v1/sessions/{session}/path", body, auth)
    print(f"heavy request: PUT path, {len(body)} bytes, 999 screens: {status}, answer {len(payload)} bytes")

    def latencies(count, stop=None):
        connection, seen = server.connection(), []
        for _ in range(count):
            started = time.perf_counter()
            server.send("GET", "/healthz", connection=connection)
            seen.append((time.perf_counter() - started) * 1000)
            if stop is not None and stop.is_set():
                break
        return sorted(seen)

    def summary(values):
        return f"p50 {values[len(values) // 2]:.2f} ms, p99 {values[int(len(values) * 0.99)]:.2f} ms, max {values[-1]:.2f} ms"

    print(f"/healthz alone, 500 requests: {summary(latencies(500))}")
    stop, heavy = threading.Event(), []

    def load():
        connection = server.connection()
        while not stop.is_set():
            started = time.perf_counter()
            server.send("PUT", f"/v1/sessions/{session}/path", body, auth, connection)
            heavy.append(time.perf_counter() - started)

    worker = threading.Thread(target=load)
    worker.start()
    time.sleep(0.5)
    during = latencies(1000)
    stop.set()
    worker.join()
    print(f"/healthz while another connection sends that PUT back to back ({len(heavy)} sent, "
          f"{sum(heavy) / max(1, len(heavy)) * 1000:.0f} ms each): {summary(during)}")
    server.stop()


def metric_labels():
    row("Metric labels from client input (was: 300 requests with 4 KB methods grew /metrics from 7 KB to 24.6 MB)")
    server = Server()
    _, before, _ = server.send("GET", "/metrics")
    for index in range(300):
        method = "X" * 4000 + str(index)
        connection = socket.create_connection(("127.0.0.1", server.port))
        connection.sendall(f"{method} /v1/sessions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        connection.recv(65536)
        connection.close()
    _, after, _ = server.send("GET", "/metrics")
    print(f"/metrics {len(before) / 1024:.1f} KB → {len(after) / 1024:.1f} KB after 300 requests with 4 KB methods")
    server.stop()


def token_in_clear():
    row("A token in clear (was: a create with Idempotency-Key kept the answer, token included, in idempotency_keys)")
    server = Server()
    status, payload, _ = server.send("POST", "/v1/sessions", {}, {**ADMIN, "Idempotency-Key": "measure-key-1"})
    token = json.loads(payload)["token"]
    status2, payload2, _ = server.send("POST", "/v1/sessions", {}, {**ADMIN, "Idempotency-Key": "measure-key-1"})
    server.stop()
    raw = b"".join(open(server.db + s, "rb").read() for s in ("", "-wal") if os.path.exists(server.db + s))
    rows = sqlite3.connect(server.db).execute("SELECT key, length(body) FROM idempotency_keys").fetchall()
    print(f"create {status}, retry {status2} with the same token: {json.loads(payload2)['token'] == token}")
    print(f"token bytes in the database files: {raw.count(token.encode())}; the client's key: "
          f"{raw.count(b'measure-key-1')}; idempotency rows (key, body bytes): {rows}")


def full_disk():
    row("Full disk looks ready (was: /readyz 200 while every write answered 503, on a 12 MB tmpfs)")
    server = Server("--max-db-bytes", str(4 * 2**20))
    session, auth, _ = server.create()
    statuses = {}
    for index in range(400):
        status, _, _ = server.send("PATCH", f"/v1/sessions/{session}/screens/root/values",
                                   {f"k{index % 50}": "x" * 30000}, auth)
        statuses[status] = statuses.get(status, 0) + 1
        if status == 503:
            break
    status, payload, _ = server.send("GET", "/readyz")
    print(f"--max-db-bytes 4 MiB, 30 KB patches until one fails: {statuses}; /readyz {status}")
    server.stop()


def big_reads():
    row("Big reads block others (was: an 18 MB history page); --max-page-bytes 1 MiB")
    server = Server()
    session, auth, _ = server.create()
    for index in range(20):
        server.send("PATCH", f"/v1/sessions/{session}/screens/root/values",
                    {f"k{key}": f"{index}" + "x" * 60000 for key in range(14)}, auth)
    for index in range(60):
        server.send("PATCH", f"/v1/sessions/{session}/screens/root/values",
                    {f"s{key}": f"{index}" + "x" * 50000 for key in range(2)}, auth)
    for name, path, cursor in (("history?limit=1000", "history?limit=1000&after=", "next"),
                               ("the long poll", "events?after=", "last")):
        after, sizes, events = 0, [], 0
        while True:
            status, payload, _ = server.send("GET", f"/v1/sessions/{session}/{path}{after}", headers=auth)
            page = json.loads(payload)
            if not page["events"]:
                break
            sizes.append(len(payload))
            events += len(page["events"])
            after = page["events"][-1]["seq"]
            if cursor == "next" and page["next"] is None:
                break
        print(f"{name}, 81 events (20 of 1.68 MB, 60 of 0.2 MB): {len(sizes)} pages, {events} events, "
              f"largest page {max(sizes) / 1e6:.2f} MB, the 0.2 MB events {sizes[-1] / 1e6:.2f} MB a page")
    server.stop()


for measure in (amplification, stuck_readers, anonymous_growth, event_loops, metric_labels, token_in_clear,
                full_disk, big_reads):
    measure()
