#!/usr/bin/env bash
# Opens N connections (default 10,000) to the release `navigation-values serve` (on :memory:):
# half send `GET /healthz` and stay open (keep-alive), half never send anything. Prints the
# server's resident memory and thread count before and with all of them open. Needs a hard
# open-file limit above N.
# Usage: scripts/bench-http-idle.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10000}"
swift build -c release --product navigation-values >/dev/null
server_bin="$(swift build -c release --show-bin-path)/navigation-values"
log="$(mktemp)"
"$server_bin" serve --port 0 --db :memory: --admin-token bench-idle >"$log" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
port="$(sed -n 's/^listening on http:\/\/127\.0\.0\.1://p' "$log")"
[ -n "$port" ] || { echo "server did not start"; exit 1; }
python3 - "$port" "$pid" "$count" <<'PY'
import socket, sys
port, pid, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def status():
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return f"rss {fields['VmRSS'].strip()}, threads {fields['Threads'].strip()}"
print("before:", status())
sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
busy = sockets[: count // 2]
for s in busy:
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
answered = sum(s.recv(4096).startswith(b"HTTP/1.1 200") for s in busy)
print(f"{count} open ({answered} answered and kept alive, {count - len(busy)} silent):", status())
PY
