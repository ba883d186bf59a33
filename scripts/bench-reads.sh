#!/usr/bin/env bash
# Reads through the product's own responder chain (request logging and metrics included), against
# nginx in the same run: `GET /healthz` vs nginx answering the same body, and `GET /v1/sessions/{id}`
# (a session of 4 screens) vs nginx serving the very bytes of that answer as a static file.
# wrk -t2 -c64 --latency, alternating, ROUNDS rounds; prints each round, the medians and the ratios.
#
# Usage: scripts/bench-reads.sh [--healthz-only] [--thresholds FILE] [BINARY] [DURATION] [ROUNDS]
#   --healthz-only     only `GET /healthz` (no session is created)
#   --thresholds FILE  check the /healthz medians against FILE (Benchmarks/Thresholds/http-healthz.json):
#                      exits 1 when the requests/s ratio to nginx misses it (p99 is reported only)
#   BINARY    a `navigation-values` executable (default: builds and uses .build/release/navigation-values)
#   DURATION  wrk's -d (default 10s); ROUNDS (default 3)
# scripts/bench-http.sh is this with --healthz-only and the healthz thresholds.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
healthz_only=""
thresholds=""
while [ $# -gt 0 ]; do
    case "$1" in
        --healthz-only) healthz_only=1; shift ;;
        --thresholds) thresholds="$2"; shift 2 ;;
        *) break ;;
    esac
done
binary="${1:-}"
duration="${2:-10s}"
rounds="${3:-3}"

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
if [ -z "$binary" ]; then
    swift build -c release --product navigation-values >/dev/null
    binary="$(swift build -c release --show-bin-path)/navigation-values"
fi

work="$(mktemp -d)"
ours_pid=""
cleanup() {
    [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The product, logging at its default level (info; probes log at debug), on a durable file.
"$binary" serve --port 0 --db "$work/bench.sqlite" --admin-token bench-admin >"$work/ours.out" 2>"$work/ours.err" &
ours_pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$work/ours.out" 2>/dev/null && break
    sleep 0.1
done
grep -q "listening on" "$work/ours.out" || { echo "server did not start"; cat "$work/ours.err"; exit 1; }
base="$(sed -n 's/^listening on //p' "$work/ours.out")"

mkdir -p "$work/html/v1/sessions" "$work/logs"
: >"$work/auth.lua"
paths=(/healthz)
if [ -z "$healthz_only" ]; then
    # A session of 4 screens with a few values and a handler: about 1 KB of JSON.
    created="$(curl -s -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{
      "root": {"name": "Inbox", "values": {"title": "Inbox", "filter": {"unread": true, "folder": "main"}}},
      "schema": {"values": {"title": {"type": "string", "default": ""}, "counter": {"type": "integer", "default": 0}},
                 "preferences": {"selection": {"type": "string", "default": ""}}}}')"
    id="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
    token="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
    for name in Thread Message Attachment; do
        curl -s -o /dev/null -X POST "$base/v1/sessions/$id/push" -H "Authorization: Bearer $token" \
            -H 'Content-Type: application/json' -d "{\"name\": \"$name\", \"values\": {\"title\": \"$name\"}}"
    done
    curl -s -o /dev/null -X PUT "$base/v1/sessions/$id/screens/root/handlers/selection" -H "Authorization: Bearer $token" \
        -H 'Content-Type: application/json' -d '{"passBack": true}'
    curl -s "$base/v1/sessions/$id" -H "Authorization: Bearer $token" >"$work/html/v1/sessions/$id"
    size="$(wc -c <"$work/html/v1/sessions/$id")"
    printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token" >"$work/auth.lua"
    paths+=("/v1/sessions/$id")
    echo "GET /v1/sessions/{id}: $size bytes of JSON (4 screens)"
fi

nginx_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
{
    nginx_conf_head "$work"
    cat <<CONF
    server {
        listen 127.0.0.1:$nginx_port;
        root $work/html;
        default_type application/json;
        location = /healthz { return 200 '{"status":"ok"}'; }
    }
}
CONF
} >"$work/nginx.conf"
"$nginx_bin" -p "$work" -c "$work/nginx.conf"

# Prints "requests_per_second p99_ms non_2xx" for one wrk run against URL.
run_wrk() {
    local output
    output="$(wrk -t2 -c64 -d"$duration" --latency -s "$work/auth.lua" "$1")"
    echo "$output" >>"$work/wrk.log"
    echo "$output" | wrk_figures
}

echo "ours: $binary serve (request logging and metrics in its chain)"
for path in "${paths[@]}"; do
    label="$path"; [ "$path" = /healthz ] || label="/v1/sessions/{id}"
    wrk -t2 -c64 -d2s -s "$work/auth.lua" "$base$path" >/dev/null
    wrk -t2 -c64 -d2s -s "$work/auth.lua" "http://127.0.0.1:$nginx_port$path" >/dev/null
    ours=(); theirs=(); ours99=(); theirs99=()
    for round in $(seq 1 "$rounds"); do
        read -r rps p99 bad < <(run_wrk "$base$path")
        [ -z "$bad" ] || { echo "ours answered $bad non-2xx on $label"; exit 1; }
        ours+=("$rps"); ours99+=("$p99")
        read -r nrps np99 _ < <(run_wrk "http://127.0.0.1:$nginx_port$path")
        theirs+=("$nrps"); theirs99+=("$np99")
        printf '%-20s round %s  ours %10s req/s p99 %7s ms   nginx %10s req/s p99 %7s ms\n' \
            "$label" "$round" "$rps" "$p99" "$nrps" "$np99"
    done
    om="$(median "${ours[@]}")"; nm="$(median "${theirs[@]}")"; op="$(median "${ours99[@]}")"
    awk -v l="$label" -v a="$om" -v b="$nm" -v p="$op" -v q="$(median "${theirs99[@]}")" \
        'BEGIN { printf "%-20s median ours %.0f req/s (p99 %s ms), nginx %.0f req/s (p99 %s ms), ratio %.2f\n", l, a, p, b, q, a / b }'
    if [ "$path" = /healthz ]; then healthz=("$om" "$nm" "$op"); fi
done

# Verdict against the thresholds kept in the repository.
if [ -n "$thresholds" ]; then
    min_ratio="$(sed -n 's/.*"minRequestsPerSecondRatioToNginx": *\([0-9.]*\).*/\1/p' "$thresholds")"
    max_p99="$(sed -n 's/.*"maxP99Milliseconds": *\([0-9.]*\).*/\1/p' "$thresholds")"
    awk -v a="${healthz[0]}" -v b="${healthz[1]}" -v p99="${healthz[2]}" -v min="$min_ratio" -v max="$max_p99" 'BEGIN {
        ratio = a / b
        printf "/healthz ratio ours/nginx %.2f (goal >= %s): %s\n", ratio, min, (ratio >= min ? "met" : "NOT MET")
        printf "/healthz p99 ours %.3f ms (goal < %s ms): %s\n", p99, max, (p99 < max ? "met" : "NOT MET")
        exit (ratio >= min ? 0 : 1)
    }'
fi
