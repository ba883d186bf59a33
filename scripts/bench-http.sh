#!/usr/bin/env bash
# Compares `GET /healthz` on http-bench-server (release) with an nginx location answering the
# same body: wrk -t2 -c64 -d10s --latency against each, alternating, three rounds; prints the
# medians of requests/s and p99 latency, and the ratio ours/nginx (goal: >= 0.5, p99 < 5 ms).
# Usage: scripts/bench-http.sh [DURATION]   (DURATION defaults to 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10s}"
rounds=3

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

swift build -c release --product http-bench-server >/dev/null
server_bin="$(swift build -c release --show-bin-path)/http-bench-server"

work="$(mktemp -d)"
ours_pid=""
cleanup() {
    [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ours_port="$(free_port)"
nginx_port="$(free_port)"

mkdir -p "$work/logs"
cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$nginx_port;
        location = /healthz {
            default_type application/json;
            return 200 '{"status":"ok"}';
        }
    }
}
CONF
"$nginx_bin" -p "$work" -c "$work/nginx.conf"

"$server_bin" "$ours_port" >"$work/ours.log" 2>&1 &
ours_pid=$!
for _ in $(seq 1 100); do
    grep -q "listening on" "$work/ours.log" 2>/dev/null && break
    sleep 0.1
done
grep -q "listening on" "$work/ours.log" || { echo "server did not start"; cat "$work/ours.log"; exit 1; }

# Prints "requests_per_second p99_milliseconds" for one wrk run.
run_wrk() {
    local output rps p99
    output="$(wrk -t2 -c64 -d"$duration" --latency "http://127.0.0.1:$1/healthz")"
    echo "$output" >>"$work/wrk.log"
    rps="$(echo "$output" | awk '/Requests\/sec/ {print $2}')"
    p99="$(echo "$output" | awk '$1 == "99%" {print $2}')"
    echo "$rps $(to_ms "$p99")"
}
to_ms() {
    case "$1" in
        *us) awk -v v="${1%us}" 'BEGIN {printf "%.3f", v / 1000}' ;;
        *ms) awk -v v="${1%ms}" 'BEGIN {printf "%.3f", v}' ;;
        *s) awk -v v="${1%s}" 'BEGIN {printf "%.3f", v * 1000}' ;;
        *) echo "$1" ;;
    esac
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Warm both up, then alternate.
wrk -t2 -c64 -d2s "http://127.0.0.1:$ours_port/healthz" >/dev/null
wrk -t2 -c64 -d2s "http://127.0.0.1:$nginx_port/healthz" >/dev/null
ours_rps=(); ours_p99=(); nginx_rps=(); nginx_p99=()
for round in $(seq 1 $rounds); do
    read -r rps p99 < <(run_wrk "$ours_port")
    ours_rps+=("$rps"); ours_p99+=("$p99")
    echo "round $round  ours:  $rps req/s  p99 $p99 ms"
    read -r rps p99 < <(run_wrk "$nginx_port")
    nginx_rps+=("$rps"); nginx_p99+=("$p99")
    echo "round $round  nginx: $rps req/s  p99 $p99 ms"
done

ours_median="$(median "${ours_rps[@]}")"
nginx_median="$(median "${nginx_rps[@]}")"
echo
echo "median req/s   ours $ours_median   nginx $nginx_median"
echo "median p99 ms  ours $(median "${ours_p99[@]}")   nginx $(median "${nginx_p99[@]}")"

# Verdict against the thresholds kept in the repository.
thresholds=Benchmarks/Thresholds/http-healthz.json
min_ratio="$(sed -n 's/.*"minRequestsPerSecondRatioToNginx": *\([0-9.]*\).*/\1/p' "$thresholds")"
max_p99="$(sed -n 's/.*"maxP99Milliseconds": *\([0-9.]*\).*/\1/p' "$thresholds")"
ours_p99_median="$(median "${ours_p99[@]}")"
awk -v a="$ours_median" -v b="$nginx_median" -v min="$min_ratio" -v p99="$ours_p99_median" -v max="$max_p99" 'BEGIN {
    ratio = a / b
    printf "ratio ours/nginx %.2f (goal >= %s): %s\n", ratio, min, (ratio >= min ? "met" : "NOT MET")
    printf "p99 ours %.3f ms (goal < %s ms): %s\n", p99, max, (p99 < max ? "met" : "NOT MET")
    exit (ratio >= min ? 0 : 1)
}'
