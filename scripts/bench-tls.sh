#!/usr/bin/env bash
# HTTPS figures, same run, same certificate (an ECDSA P-256 one from an authority made here):
#   ours-tls     navigation-values serve --tls-cert/--tls-key: TLS on its own event loops
#   nginx-tls    nginx terminating TLS (deploy/nginx.conf's settings) in front of a second
#                navigation-values speaking plain HTTP, as docker-compose.yml deploys it
#   ours-plain   that second instance reached directly over plain HTTP (the reference)
# for `GET /healthz` and `GET /v1/sessions/{id}` (a session of 4 screens, one per instance).
# wrk -t2 -c64 --latency (each connection's handshake once, then kept alive), alternating, ROUNDS
# rounds; prints each round, the medians, and the load averages before and after (the figures of a
# loaded machine say so).
#
# Usage: scripts/bench-tls.sh [BINARY] [DURATION] [ROUNDS]
#   BINARY    a `navigation-values` executable (default: builds and uses .build/release/navigation-values)
#   DURATION  wrk's -d (default 10s); ROUNDS (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
binary="${1:-}"
duration="${2:-10s}"
rounds="${3:-3}"
for tool in wrk nginx curl openssl; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || { echo "bench-tls: $tool is not installed" >&2; exit 1; }
done
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
if [ -z "$binary" ]; then
    swift build -c release --static-swift-stdlib --product navigation-values >/dev/null
    binary="$(swift build -c release --show-bin-path)/navigation-values"
fi

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

scripts/make-test-ca.sh "$work"

# Starts `serve` with more arguments; sets `started` to its base URL. (Not called in `$(...)`: a
# subshell's `pids` would be lost, and cleanup would leave the server running.)
start() {
    local name=$1
    shift
    "$binary" serve --port 0 --db "$work/$name.sqlite" --admin-token bench-admin "$@" >"$work/$name.out" 2>"$work/$name.err" &
    pids+=($!)
    for _ in $(seq 1 100); do
        grep -q "listening on" "$work/$name.out" 2>/dev/null && break
        sleep 0.1
    done
    grep -q "listening on" "$work/$name.out" || { echo "bench-tls: $name did not start" >&2; cat "$work/$name.err" >&2; exit 1; }
    started="$(sed -n 's/^listening on //p' "$work/$name.out")"
}
start ours-tls --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
ours_tls="$started"
start ours-plain
ours_plain="$started"


# A session of 4 screens on an instance; prints "PATH TOKEN".
make_session() {
    local base=$1 created id token
    created="$(curl -sS --cacert "$work/ca.pem" -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{
      "root": {"name": "Inbox", "values": {"title": "Inbox", "filter": {"unread": true, "folder": "main"}}},
      "schema": {"values": {"title": {"type": "string", "default": ""}, "counter": {"type": "integer", "default": 0}},
                 "preferences": {"selection": {"type": "string", "default": ""}}}}')"
    id="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
    token="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
    for name in Thread Message Attachment; do
        curl -sS --cacert "$work/ca.pem" -o /dev/null -X POST "$base/v1/sessions/$id/push" \
            -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            -d "{\"name\": \"$name\", \"values\": {\"title\": \"$name\"}}"
    done
    echo "/v1/sessions/$id $token"
}
read -r tls_session tls_token < <(make_session "$ours_tls")
read -r plain_session plain_token < <(make_session "$ours_plain")
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$tls_token" >"$work/tls.lua"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$plain_token" >"$work/plain.lua"

nginx_port="$(free_port)"
mkdir -p "$work/logs"
{
    nginx_conf_head "$work"
    cat <<CONF
    upstream navigation_values {
        server ${ours_plain#http://};
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$nginx_port ssl;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE+AESGCM:ECDHE+CHACHA20;
        ssl_prefer_server_ciphers on;
        ssl_session_cache shared:bench_tls:10m;
        location / {
            proxy_pass http://navigation_values;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
    }
}
CONF
} >"$work/nginx.conf"
"$nginx_bin" -p "$work" -c "$work/nginx.conf"
nginx_tls="https://127.0.0.1:$nginx_port"
curl -sS -f --cacert "$work/ca.pem" -o /dev/null "$nginx_tls/healthz"

# Prints "requests_per_second p99_ms non_2xx" for one wrk run: URL, script.
run_wrk() {
    local output
    output="$(wrk -t2 -c64 -d"$duration" --latency -s "$2" "$1")"
    echo "$output" >>"$work/wrk.log"
    echo "$output" | wrk_figures
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(nproc) cores; $binary; wrk -t2 -c64 -d$duration, $rounds rounds"
for what in healthz session; do
    if [ "$what" = healthz ]; then
        targets=("ours-tls $ours_tls/healthz $work/tls.lua" "nginx-tls $nginx_tls/healthz $work/plain.lua"
            "ours-plain $ours_plain/healthz $work/plain.lua")
        label="/healthz"
    else
        targets=("ours-tls $ours_tls$tls_session $work/tls.lua" "nginx-tls $nginx_tls$plain_session $work/plain.lua"
            "ours-plain $ours_plain$plain_session $work/plain.lua")
        label="/v1/sessions/{id}"
    fi
    for target in "${targets[@]}"; do
        read -r _ url script <<<"$target"
        wrk -t2 -c64 -d2s -s "$script" "$url" >/dev/null  # warm-up
    done
    declare -A rps=() p99=()
    for round in $(seq 1 "$rounds"); do
        line="$(printf '%-18s round %s' "$label" "$round")"
        for target in "${targets[@]}"; do
            read -r name url script <<<"$target"
            read -r r p bad < <(run_wrk "$url" "$script")
            [ -z "$bad" ] || { echo "bench-tls: $name answered $bad non-2xx on $label" >&2; exit 1; }
            rps[$name]+="$r "
            p99[$name]+="$p "
            line+="$(printf '  %s %8s req/s p99 %7s ms' "$name" "$r" "$p")"
        done
        echo "$line"
    done
    for target in "${targets[@]}"; do
        read -r name _ _ <<<"$target"
        # shellcheck disable=SC2086
        printf '%-18s median %-10s %8.0f req/s  p99 %7s ms\n' "$label" "$name" "$(median ${rps[$name]})" "$(median ${p99[$name]})"
    done
    unset rps p99
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
