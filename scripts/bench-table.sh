#!/usr/bin/env bash
# The table of Benchmarks/README.md in one run, every figure beside its anchor's from the same run, as ratios,
# each goal with `met` or `NOT MET`:
#
#   push/pop alternating over 1,000 sessions, `--sync full` and `--sync normal`, mutations/s
#     vs the floor: floor-server, push/pop on this repository's HTTP stack applied in memory and
#        appended to one log with group fdatasync (Benchmarks/Sources/FloorServer)      goal >= 0.6
#     vs the same floor with a SQLite file as its log (`floor-server --log-store sqlite`: each group
#        one transaction of event rows, the product's events table and unique index, WAL,
#        synchronous=FULL); also printed: that floor / the file-log floor       (information)
#     vs plain SQLite, one row per commit, WAL, synchronous=FULL (scripts/bench-table/sqlite-commits.c)
#                                                                                       goal >= 5
#     vs redis-server (appendonly yes, appendfsync always) LPUSH and RPOP on 1,000 lists, 64 clients
#   GET /v1/sessions/{id} (4 screens) vs nginx serving the same bytes as a static file  goal >= 0.8
#   GET /healthz (the product's chain: request logging and metrics) vs nginx `return 204`  goal >= 0.85
#   push and pop p99 paced at half the --sync full peak vs Redis appendfsync always's p99 at the
#     same paced load (scripts/bench-table/paced-load.c)                                 goal: no worse
#     and the SQLite-log floor's p99 at the same load beside Redis's                   (information)
#   bytes per resident session, 100,000 sessions of 5 screens x 3 values, all resident
#     (api-bench, Benchmarks/Thresholds/api.json)                                        goal <= 2 KB
#   1,000 SSE subscribers of one session, 50 pushes: p99 of the event at the last subscriber after
#     the push's answer; RSS 10,000 idle streams add (events-bench, events.json)  goals <= 5 ms, <= 64 MB
#
# wrk -t2 -c64 --latency for DURATION, rounds alternating between ours and the anchors (medians
# printed); then, once: WAL pages written per mutation (the store's own counter in /metrics,
# SQLite's SQLITE_DBSTATUS_CACHE_WRITE), the p99 of push at half the peak rate (a paced open-loop
# load, scripts/bench-table/paced-load.c: wrk2 is not packaged) beside the same load against nginx
# answering 204 (the floor under any p99 here) and against Redis with appendfsync always (what a
# durable write's p99 is on this disk with the anchor store), and throughput at 1, 4, 16 and
# 64 connections beside Redis's. Builds release, installs wrk, nginx, redis-server, sqlite3 and
# libsqlite3-dev with apt when missing; every server runs in a temporary folder on the same disk
# (not tmpfs: syncs cost what they cost) on ports of its own, and is stopped on exit.
#
# Usage: scripts/bench-table.sh [--binary PATH] [--duration 10s] [--rounds 3] [--only-table]
#                               [--floor] [--profile] [--allocs] [--only-paced [--rate N] [--syncs]]
#   --binary PATH  a `navigation-values` executable (default: builds it release through the
#                  Benchmarks package, into Benchmarks/.build/release, beside the benchmarks)
#   --duration D   wrk's -d for each table run (default 10s); the scaling runs take half
#   --rounds N     rounds of the table (default 3)
#   --only-table   the table alone: skip pages, CPU per mutation and scaling (the paced p99, the
#                  memory and the fan-out, which have goals, stay)
#   --floor        accepted for older command lines: the floor now runs in every table round
#   --profile      instead of the table: `perf record -g` of the server during push/pop (--sync
#                  full), GET /v1/sessions/{id} and GET /healthz (installs linux-perf when missing):
#                  the top 10 symbols of each, objects and threads, and what the machine ran meanwhile
#   --allocs       instead of the table: heap allocations per request (push/pop, GET session,
#                  /healthz) in the server, counted by scripts/bench-table/count-allocs.c (LD_PRELOAD)
#   --only-paced   instead of the table: the paced phase alone, `--rounds` times (ours with --sync
#                  full, nginx 204, Redis always and the SQLite-log floor, each for DURATION at the
#                  same rate), then the medians; about 1 + 5 x DURATION x rounds s
#   --rate N       with --only-paced: requests/s in all, instead of half the peak of one wrk run of
#                  push/pop (--sync full, DURATION): a fixed rate compares builds on a shared machine
#   --syncs        with --only-paced: `perf trace` of the server's fdatasync/fsync during each of its
#                  runs (installs linux-perf when missing), and their durations by file and
#                  connection (scripts/bench-table/syncs.py), beside the slowest requests' timeline
# The machine is shared: absolute figures move with whatever else runs; ratios from the same run
# are what to compare.
set -euo pipefail
cd "$(dirname "$0")/.."
repository="$(pwd)"
# One run at a time on a machine: two would share its 2 cores and its disk, and each would print
# the other's load as its own figures.
exec 9>"${TMPDIR:-/tmp}/navigation-values-bench-table.lock"
if ! flock -n 9; then
    echo "bench-table.sh: another run holds ${TMPDIR:-/tmp}/navigation-values-bench-table.lock; waiting for it" >&2
    flock 9
fi
binary=""
duration="10s"
rounds=3
mode="table"
only_table=""
paced_rate=""
trace_syncs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --only-table) only_table=1; shift ;;
        --floor) shift ;;
        --profile) mode="profile"; shift ;;
        --allocs) mode="allocs"; shift ;;
        --only-paced) mode="paced"; shift ;;
        --rate) paced_rate="$2"; shift 2 ;;
        --syncs) trace_syncs=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
seconds="${duration%s}"
half_seconds="$(awk -v s="$seconds" 'BEGIN { h = s / 2; print (h < 1 ? 1 : h) }')"

need=()
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v cc >/dev/null 2>&1 || need+=(gcc)
[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
if { [ "$mode" = profile ] || [ -n "$trace_syncs" ]; } && ! command -v perf >/dev/null 2>&1; then need+=(linux-perf); fi
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
# The release server is built through the benchmarks package (which depends on this one by path), so
# that it and the benchmarks below share one release build.
scripts/swiftpm-mirrors.sh Benchmarks >/dev/null 2>&1
if [ -z "$binary" ]; then
    swift build --package-path Benchmarks -c release --product navigation-values >/dev/null
    binary="$(swift build --package-path Benchmarks -c release --show-bin-path)/navigation-values"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/bench-table.XXXXXX")"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ -n "${BENCH_TABLE_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

cc -O2 -o "$work/sqlite-commits" scripts/bench-table/sqlite-commits.c -lsqlite3
cc -O2 -pthread -o "$work/paced-load" scripts/bench-table/paced-load.c
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts the release server on a file of its own; sets `port_<name>`. Extra variables before the
# binary (LD_PRELOAD) come from `launch_prefix`.
launch_prefix=()
start_ours() {
    local name="$1" sync="$2"
    mkdir -p "$work/$name"
    env "${launch_prefix[@]}" "$binary" serve --port 0 --db "$work/$name/bench.sqlite" --sync "$sync" \
        --admin-token bench-admin --create-rate 1000000 --create-burst 10000000 >"$work/$name/out" 2>"$work/$name/err" &
    pids+=($!)
    eval "pid_$name=$!"
    await_listening "$name"
}

# Waits up to 20 s for the server writing to $work/NAME/out to print its `listening on` line;
# sets `port_<name>`.
await_listening() {
    local name="$1"
    for _ in $(seq 1 200); do
        grep -q "listening on" "$work/$name/out" 2>/dev/null && break
        sleep 0.1
    done
    grep -q "listening on" "$work/$name/out" || { echo "server $name did not start"; cat "$work/$name/err"; exit 1; }
    eval "port_$name=$(sed -n 's/^listening on http:\/\/127.0.0.1://p' "$work/$name/out")"
}

# Starts floor-server ("$benchmarks_bin", built beforehand) with 1,000 sessions of its own on
# $work/NAME, their ids and tokens in $work/sessions-NAME, and ARGS... (its log's options); sets
# `port_<name>`.
start_floor() { # start_floor NAME ARGS...
    local name="$1"
    shift
    mkdir -p "$work/$name"
    "$benchmarks_bin/floor-server" --sessions 1000 --sessions-file "$work/sessions-$name" "$@" \
        >"$work/$name/out" 2>"$work/$name/err" &
    pids+=($!)
    await_listening "$name"
}

# 1,000 sessions with five screens above the root each (so that a pop never finds only the root,
# even when it overtakes its push, or when a push was cut off at the end of an earlier run),
# created over 16 keep-alive connections; writes "id token" lines to FILE.
create_sessions() {
    python3 - "$1" "$2" <<'PY'
import http.client, json, sys, threading
port, out = int(sys.argv[1]), sys.argv[2]
lines, lock = [], threading.Lock()
def work(count):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(count):
        connection.request("POST", "/v1/sessions", json.dumps({"root": {"name": "Home", "values": {"title": "Home"}}}),
                           {"Content-Type": "application/json"})
        answer = connection.getresponse(); body = json.loads(answer.read())
        assert answer.status == 201, (answer.status, body)
        screens = [{"name": f"List{n}", "values": {}} for n in range(5)]
        connection.request("PUT", f"/v1/sessions/{body['id']}/path", json.dumps({"screens": screens}),
                           {"Content-Type": "application/json", "Authorization": "Bearer " + body["token"]})
        placed = connection.getresponse(); placed.read()
        assert placed.status == 200, placed.status
        with lock: lines.append(f"{body['id']} {body['token']}")
threads = [threading.Thread(target=work, args=(1000 // 16 + (1 if i < 1000 % 16 else 0),)) for i in range(16)]
for t in threads: t.start()
for t in threads: t.join()
open(out, "w").write("\n".join(lines) + "\n")
PY
}

# A session of 4 screens with values and a handler (about 1 KB of JSON); sets `reads_id`, `reads_token`.
create_read_session() {
    local base="http://127.0.0.1:$1" created
    created="$(curl -sf -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{
      "root": {"name": "Inbox", "values": {"title": "Inbox", "filter": {"unread": true, "folder": "main"}}},
      "schema": {"values": {"title": {"type": "string", "default": ""}, "counter": {"type": "integer", "default": 0}},
                 "preferences": {"selection": {"type": "string", "default": ""}}}}')"
    reads_id="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
    reads_token="$(echo "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')"
    for name in Thread Message Attachment; do
        curl -sf -o /dev/null -X POST "$base/v1/sessions/$reads_id/push" -H "Authorization: Bearer $reads_token" \
            -H 'Content-Type: application/json' -d "{\"name\": \"$name\", \"values\": {\"title\": \"$name\"}}"
    done
    curl -sf -o /dev/null -X PUT "$base/v1/sessions/$reads_id/screens/root/handlers/selection" \
        -H "Authorization: Bearer $reads_token" -H 'Content-Type: application/json' -d '{"passBack": true}'
}

to_ms() {
    case "$1" in
        *us) awk -v v="${1%us}" 'BEGIN {printf "%.3f", v / 1000}' ;;
        *ms) awk -v v="${1%ms}" 'BEGIN {printf "%.3f", v}' ;;
        *s) awk -v v="${1%s}" 'BEGIN {printf "%.3f", v * 1000}' ;;
        *) echo "$1" ;;
    esac
}
load() { cut -d' ' -f1-3 /proc/loadavg; }  # the 1, 5 and 15 minute load averages, printed beside figures
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# "requests/s p50_ms p99_ms non_2xx" of one wrk run: run_wrk THREADS CONNECTIONS DURATION URL SCRIPT [ARGS...]
run_wrk() {
    local threads="$1" connections="$2" length="$3" url="$4" script="$5" output
    shift 5
    output="$(wrk -t"$threads" -c"$connections" -d"$length" --latency -s "$script" "$url" -- "$@")"
    echo "$output" >>"$work/wrk.log"
    echo "$(echo "$output" | awk '/Requests\/sec/ {print $2}')" \
        "$(to_ms "$(echo "$output" | awk '$1 == "50%" {print $2}')")" \
        "$(to_ms "$(echo "$output" | awk '$1 == "99%" {print $2}')")" \
        "$(echo "$output" | awk '/Non-2xx/ {print $5} END {}' | grep . || echo 0)"
}
pushpop() { # pushpop NAME THREADS CONNECTIONS DURATION
    local port
    port="$(eval echo "\$port_$1")"
    run_wrk "$2" "$3" "$4" "http://127.0.0.1:$port" scripts/bench-table/pushpop.lua "$work/sessions-$1" "$2"
}
# "ops/s p50_ms p99_ms" of redis-benchmark: redis_run CLIENTS REQUESTS COMMAND...
redis_run() {
    local clients="$1" requests="$2"
    shift 2
    redis-benchmark -p "$redis_port" -c "$clients" -n "$requests" -r 1000 --csv "$@" 2>/dev/null |
        awk -F, 'NR == 2 { gsub(/"/, ""); print $(NF - 6), $(NF - 3), $(NF - 1) }'
}
metric() { # metric NAME SAMPLE: the sample's value in the server's /metrics (empty when absent)
    curl -sf "http://127.0.0.1:$(eval echo "\$port_$1")/metrics" | awk -v s="$2" '$1 == s {print $2}'
}
pages_written() { metric "$1" navigation_values_store_pages_written_total; }
committed() { metric "$1" 'navigation_values_store_commits_total{result="committed"}'; }
# The store's writer and checkpointer CPU seconds ("writer checkpointer"), empty for an older build.
writer_cpu() {
    local w c
    w="$(metric "$1" 'navigation_values_store_thread_cpu_seconds_total{thread="writer"}')"
    c="$(metric "$1" 'navigation_values_store_thread_cpu_seconds_total{thread="checkpointer"}')"
    if [ -n "$w" ]; then echo "$w $c"; fi
}
# utime+stime clock ticks of a process: "http-loop http-worker other all", other being the whole
# process's (/proc/PID/stat, which keeps the time of threads that have exited: dispatch's worker
# threads come and go) less the loop and worker threads'.
thread_cpu() {
    local task all
    all="$(sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }')"
    for task in /proc/"$1"/task/*; do
        printf '%s %s\n' "$(cat "$task/comm" 2>/dev/null | tr ' ' '_')" "$(sed 's/.*) //' "$task/stat" 2>/dev/null)"
    done | awk -v all="$all" '{ t = $13 + $14; if ($1 ~ /^http-loop/) l += t; else if ($1 ~ /^http-worker/) w += t }
        END { printf "%d %d %d %d\n", l, w, all - l - w, all }'
}

start_load="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== bench-table: $(date -u +%FT%TZ), $(nproc) cores, load $start_load, binary $binary"
echo "   repository at $(git -C "$repository" describe --always --dirty 2>/dev/null || echo '?') (a --binary may be another build); disk of the temp folder: $(df -P "$work" | awk 'NR == 2 {print $1}')"
echo "   the machine is shared with other builds: absolute figures vary, ratios come from the same run"

# paced LABEL NOTE PORT SESSIONS [redis]: paced-load at $paced_at requests/s over 64 connections for
# DURATION; prints the two lines (push, pop) and keeps each p50, p90 and p99 in
# paced_p50[LABEL/KIND], paced_p90[...] and paced_p99[...] (KIND push or pop), and every run's in
# paced_all[LABEL/KIND] ("p50/p90/p99 ..."). With $paced_trace set, paced-load writes every request
# there (PACED_LOAD_TRACE).
declare -A paced_p50 paced_p90 paced_p99 paced_all
paced_trace=""
start_nginx() { # start_nginx SERVER_BLOCKS: nginx (two workers, no access log) with these server blocks
    mkdir -p "$work/nginx-logs"
    cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    keepalive_requests 1000000;
$1
}
CONF
    "$nginx_bin" -p "$work" -c "$work/nginx.conf"
}
start_redis_always() { # Redis with appendfsync always on redis_port, answering pings
    redis_port="$(free_port)"
    mkdir -p "$work/redis"
    redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --appendonly yes --appendfsync always \
        --save "" --daemonize no --logfile "$work/redis/log" &
    pids+=($!)
    for _ in $(seq 1 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
}
paced() {
    local label="$1" note="$2" kind rate p50 p90 p99 p999 max bad
    while read -r kind rate p50 p90 p99 p999 max bad; do
        [ "$bad" = 0 ] || echo "($bad non-2xx or errors)"
        paced_p50[$label/$kind]="$p50"; paced_p90[$label/$kind]="$p90"; paced_p99[$label/$kind]="$p99"
        paced_all[$label/$kind]="${paced_all[$label/$kind]:-} $p50/$p90/$p99"
        awk -v l="$label" -v note="$note" -v k="$kind" -v r="$rate" -v a="$p50" -v b="$p90" -v c="$p99" -v d="$p999" -v e="$max" -v load="$(load)" 'BEGIN {
            printf "%-14s %-4s %6d/s  p50 %7.3f  p90 %7.3f  p99 %7.3f  p99.9 %7.3f  max %8.3f ms  load %s%s\n", l, k, r, a, b, c, d, e, load, note }'
    done < <(PACED_LOAD_TRACE="$paced_trace" "$work/paced-load" "$3" "$4" "$paced_at" 64 "$seconds" ${5:-})
}

if [ "$mode" = allocs ]; then
    cc -O2 -shared -fPIC -o "$work/count-allocs.so" scripts/bench-table/count-allocs.c
    launch_prefix=("LD_PRELOAD=$work/count-allocs.so")
    start_ours allocs normal
    create_sessions "$port_allocs" "$work/sessions-allocs"
    create_read_session "$port_allocs"
    reading() {
        kill -USR2 "$pid_allocs"
        local count=""
        for _ in $(seq 1 50); do
            count="$(grep '^allocations ' "$work/allocs/err" | tail -1 | cut -d' ' -f2)"
            [ -n "$count" ] && [ "$count" != "${last_reading:-}" ] && break
            sleep 0.1
        done
        last_reading="$count"
        echo "$count"
    }
    # requests and allocations of one wrk run, after a warm-up of the same run
    measure() { # measure LABEL wrk-arguments...
        local label="$1" before after output requests
        shift
        wrk "$@" >/dev/null
        before="$(reading)"
        output="$(wrk "$@")"
        after="$(reading)"
        requests="$(echo "$output" | awk '/requests in/ {print $1}')"
        awk -v l="$label" -v a="$before" -v b="$after" -v r="$requests" \
            'BEGIN { printf "%-34s %9d requests  %11d allocations  %6.1f per request\n", l, r, b - a, (b - a) / r }'
    }
    echo "-- heap allocations per request in the server (malloc, calloc, realloc, memalign counted; wrk -t2 -c64 -d5s)"
    measure "push/pop alternating (--sync normal)" -t2 -c64 -d5s -s scripts/bench-table/pushpop.lua \
        "http://127.0.0.1:$port_allocs" -- "$work/sessions-allocs" 2
    measure "GET /v1/sessions/{id}" -t2 -c64 -d5s -s scripts/bench-table/auth.lua \
        "http://127.0.0.1:$port_allocs/v1/sessions/$reads_id" -- "$reads_token"
    measure "GET /healthz" -t2 -c64 -d5s "http://127.0.0.1:$port_allocs/healthz"
    exit 0
fi

if [ "$mode" = paced ]; then
    start_ours full full
    echo "-- creating 1,000 sessions (five screens above the root each)"
    create_sessions "$port_full" "$work/sessions-full"
    nginx_paced_port="$(free_port)"
    start_nginx "    server {
        listen 127.0.0.1:$nginx_paced_port;
        location / { return 204; }
    }"
    start_redis_always
    # The SQLite-log floor (floor-server --log-store sqlite): what the same paced load's p99 is
    # with SQLite as the synced log and nothing else.
    swift build --package-path Benchmarks -c release --product floor-server >/dev/null
    benchmarks_bin="$(swift build --package-path Benchmarks -c release --show-bin-path)"
    start_floor floorsql --log "$work/floorsql/log.sqlite" --log-store sqlite
    pushpop floorsql 2 64 2s >/dev/null
    pushpop full 2 64 2s >/dev/null
    if [ -n "$paced_rate" ]; then
        paced_at="$paced_rate"
        echo "== paced push/pop at $paced_at requests/s (--rate) over 64 connections, ${seconds} s each; latency from when each request was due"
    else
        read -r peak _ _ bad < <(pushpop full 2 64 "$duration")
        [ "$bad" = 0 ] || { echo "ours (full) answered $bad non-2xx"; exit 1; }
        paced_at="$(awk -v p="$peak" 'BEGIN {printf "%d", p / 2}')"
        echo "== paced push/pop at half the peak (--sync full peak $peak/s, wrk -t2 -c64 -d$duration, load $(load): $paced_at requests/s over 64 connections, ${seconds} s each; latency from when each request was due)"
    fi
    perf_offset=0
    if [ -n "$trace_syncs" ]; then
        # perf trace's clock less CLOCK_MONOTONIC (paced-load's), in ms: one fdatasync traced
        # right after python read the monotonic clock.
        monotonic="$(perf trace -T -e fdatasync -o "$work/clock.txt" -- python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY); t = time.monotonic(); os.fdatasync(fd); print("%.3f" % (t * 1e3))' "$work/clock")"
        perf_offset="$(awk -v m="$monotonic" '/fdatasync/ { printf "%.3f", $1 - m; exit }' "$work/clock.txt")"
        echo "-- perf trace's clock is CLOCK_MONOTONIC + $perf_offset ms"
    fi
    for round in $(seq 1 "$rounds"); do
        echo "-- round $round"
        if [ -n "$trace_syncs" ]; then
            # Every fdatasync and fsync on the machine with its duration and thread (`perf trace
            # -p` misses the threads dispatch starts later), the server's threads sampled every
            # 0.1 s (syncs.py keeps theirs), and its descriptors' files and modes (the
            # connections) once the run is under way.
            perf trace -a -T -e fdatasync,fsync -o "$work/syncs-$round.txt" 2>"$work/perf-$round.err" &
            perf_pid=$!
            sleep 1
            paced_trace="$work/requests-$round.txt"
            : >"$work/tasks-$round.txt"
            ( sleep 1; for fd in /proc/"$pid_full"/fd/*; do
                printf '%s %s %s\n' "${fd##*/}" "$(readlink "$fd")" "$(awk '$1 == "flags:" {print $2}' "/proc/$pid_full/fdinfo/${fd##*/}" 2>/dev/null)"
              done >"$work/fds-$round.txt" ) &
            fds_pid=$!
            ( while kill -0 "$perf_pid" 2>/dev/null; do ls /proc/"$pid_full"/task >>"$work/tasks-$round.txt"; sleep 0.1; done ) &
            tasks_pid=$!
        fi
        steps_before="$(metric full 'navigation_values_store_checkpoints_total{mode="writer",result="complete"}') $(metric full navigation_values_store_writer_checkpoint_seconds_total) $(metric full navigation_values_store_writer_checkpoint_pages_total)"
        paced "--sync full" "" "$port_full" "$work/sessions-full"
        paced_trace=""
        steps_after="$(metric full 'navigation_values_store_checkpoints_total{mode="writer",result="complete"}') $(metric full navigation_values_store_writer_checkpoint_seconds_total) $(metric full navigation_values_store_writer_checkpoint_pages_total)"
        awk -v a="$steps_before" -v b="$steps_after" 'BEGIN { split(a, x, " "); split(b, y, " "); n = y[1] - x[1]
            if (y[2] == "") exit
            printf "   the writer'"'"'s finishing steps: %d, %.2f ms and %.0f pages each on average\n", n, n ? (y[2] - x[2]) / n * 1000 : 0, n ? (y[3] - x[3]) / n : 0 }'
        if [ -n "$trace_syncs" ]; then
            kill -INT "$perf_pid" 2>/dev/null || true
            wait "$perf_pid" "$fds_pid" "$tasks_pid" 2>/dev/null || true
            python3 scripts/bench-table/syncs.py "$work/syncs-$round.txt" "$work/fds-$round.txt" "$work/requests-$round.txt" \
                "$work/full/bench.sqlite" "$perf_offset" "$work/tasks-$round.txt" | sed 's/^/   /'
        fi
        paced "nginx 204" "   (the floor: same load, an answer that does nothing)" "$nginx_paced_port" "$work/sessions-full"
        paced "redis always" "   (the anchor: LPUSH / LPOP, appendfsync always)" "$redis_port" "$work/sessions-full" redis
        paced "floor sqlite" "   (the SQLite-log floor: push/pop in memory, one SQLite commit per group)" \
            "$port_floorsql" "$work/sessions-floorsql"
    done
    echo
    echo "== medians of $rounds rounds at $paced_at requests/s (each run p50/p90/p99 ms), load now $(load)"
    for label in "--sync full" "nginx 204" "redis always" "floor sqlite"; do
        for kind in push pop; do
            median_of() { printf '%s\n' ${paced_all[$label/$kind]} | cut -d/ -f"$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
            printf '%-14s %-4s p50 %7s  p90 %7s  p99 %7s ms   runs:%s\n' "$label" "$kind" "$(median_of 1)" "$(median_of 2)" "$(median_of 3)" "${paced_all[$label/$kind]}"
        done
    done
    exit 0
fi

start_ours full full
start_ours normal normal
echo "-- creating 1,000 sessions on each server (five screens above the root each)"
create_sessions "$port_full" "$work/sessions-full"
create_sessions "$port_normal" "$work/sessions-normal"
if [ "$mode" = profile ]; then
    # profile LABEL PID NAME -- RUN...: `perf record -g` of process PID (only it: the machine is
    # shared) while RUN... drives it for DURATION, with the whole machine sampled meanwhile; prints
    # what RUN... printed, then the top 10 symbols by self time, objects, threads, and what else ran.
    profile() {
        local label="$1" pid="$2" name="$3" perf_pid perf_all_pid
        shift 4
        echo
        echo "-- $label: perf record -g -F 999 of the server (pid $pid), ${seconds} s, load $(load)"
        perf record -q -g -F 999 -p "$pid" -o "$work/perf-$name.data" -- sleep "$seconds" >/dev/null 2>&1 &
        perf_pid=$!
        perf record -q -a -F 199 -o "$work/perf-all-$name.data" -- sleep "$seconds" >/dev/null 2>&1 &
        perf_all_pid=$!
        "$@"
        wait "$perf_pid" "$perf_all_pid" || true
        echo "   top 10 symbols, self time (perf report --no-children --sort dso,sym)"
        perf report -q -i "$work/perf-$name.data" --no-children --sort dso,sym -g none 2>/dev/null | grep -v '^$' |
            head -10 | cut -c1-160 || true
        echo "   top 10 objects (perf report --sort dso)"
        perf report -q -i "$work/perf-$name.data" --no-children --sort dso -g none 2>/dev/null | grep -v '^$' | head -10 || true
        echo "   by thread (perf report --sort comm)"
        perf report -q -i "$work/perf-$name.data" --no-children --sort comm -g none 2>/dev/null | grep -v '^$' | head -8 || true
        echo "   the whole machine meanwhile, by command (perf record -a; others' builds included)"
        perf report -q -i "$work/perf-all-$name.data" --no-children --sort comm -g none 2>/dev/null | grep -v '^$' |
            head -8 || true
    }
    wrk_summary() { # wrk_summary LABEL THREADS CONNECTIONS DURATION URL SCRIPT [ARGS...]
        local label="$1" rps p50 p99 bad
        shift
        read -r rps p50 p99 bad < <(run_wrk "$@")
        echo "   $label during the profile: $rps/s, p50 $p50 ms, p99 $p99 ms, non-2xx $bad"
    }
    create_read_session "$port_normal"
    pushpop full 2 64 2s >/dev/null
    run_wrk 2 64 2s "http://127.0.0.1:$port_normal/v1/sessions/$reads_id" scripts/bench-table/auth.lua "$reads_token" >/dev/null
    run_wrk 2 64 2s "http://127.0.0.1:$port_normal/healthz" scripts/bench-table/auth.lua >/dev/null
    profile "push/pop alternating, --sync full (wrk -t2 -c64)" "$pid_full" pushpop -- \
        wrk_summary "push/pop" 2 64 "$duration" "http://127.0.0.1:$port_full" scripts/bench-table/pushpop.lua \
        "$work/sessions-full" 2
    profile "GET /v1/sessions/{id} (wrk -t2 -c64)" "$pid_normal" get -- \
        wrk_summary "GET session" 2 64 "$duration" "http://127.0.0.1:$port_normal/v1/sessions/$reads_id" \
        scripts/bench-table/auth.lua "$reads_token"
    profile "GET /healthz (wrk -t2 -c64)" "$pid_normal" healthz -- \
        wrk_summary "GET /healthz" 2 64 "$duration" "http://127.0.0.1:$port_normal/healthz" scripts/bench-table/auth.lua
    exit 0
fi

# The benchmarks package's parts of the table, built before anything is measured: the floor
# (floor-server, with 1,000 sessions of its own, once with its flat log file and once with a SQLite
# file as its log), and api-bench and events-bench (memory per
# resident session, fan-out, idle streams).
for product in floor-server api-bench events-bench; do
    swift build --package-path Benchmarks -c release --product "$product" >/dev/null
done
benchmarks_bin="$(swift build --package-path Benchmarks -c release --show-bin-path)"
start_floor floor --log "$work/floor/log"
start_floor floorsql --log "$work/floorsql/log.sqlite" --log-store sqlite

# The session GET's bytes as nginx's static file, and its configuration.
create_read_session "$port_normal"
mkdir -p "$work/html/v1/sessions" "$work/nginx-logs"
curl -sf "http://127.0.0.1:$port_normal/v1/sessions/$reads_id" -H "Authorization: Bearer $reads_token" \
    >"$work/html/v1/sessions/$reads_id"
read_size="$(wc -c <"$work/html/v1/sessions/$reads_id")"
nginx_port="$(free_port)"
nginx_paced_port="$(free_port)"  # answers every request 204: the paced load's anchor
start_nginx "    server {
        listen 127.0.0.1:$nginx_port;
        root $work/html;
        default_type application/json;
        location = /healthz { return 204; }
    }
    server {
        listen 127.0.0.1:$nginx_paced_port;
        location / { return 204; }
    }"
start_redis_always
# About a pushed screen's size (no quotes or commas: redis-benchmark's CSV names the command).
redis_value='id=sc_0123456789abcdef;name=Detail;values=title:x;at=2026-12-01T12:00:00.000Z'
# redis-benchmark runs a count, not a time: one short run sizes each run to about DURATION.
read -r calibration _ < <(redis_run 64 20000 LPUSH 'list:__rand_int__' "$redis_value")
redis_requests="$(awk -v r="$calibration" -v s="$seconds" 'BEGIN {printf "%d", r * s / 2}')"
redis_run 64 20000 RPOP 'list:__rand_int__' >/dev/null

echo "-- warm-up (2 s each)"
pushpop full 2 64 2s >/dev/null
pushpop normal 2 64 2s >/dev/null
pushpop floor 2 64 2s >/dev/null
pushpop floorsql 2 64 2s >/dev/null
run_wrk 2 64 2s "http://127.0.0.1:$port_normal/v1/sessions/$reads_id" scripts/bench-table/auth.lua "$reads_token" >/dev/null
run_wrk 2 64 2s "http://127.0.0.1:$nginx_port/v1/sessions/$reads_id" scripts/bench-table/auth.lua >/dev/null
run_wrk 2 64 2s "http://127.0.0.1:$port_normal/healthz" scripts/bench-table/auth.lua >/dev/null
run_wrk 2 64 2s "http://127.0.0.1:$nginx_port/healthz" scripts/bench-table/auth.lua >/dev/null

pages_full_start="$(pages_written full)"; commits_full_start="$(committed full)"
pages_normal_start="$(pages_written normal)"; commits_normal_start="$(committed normal)"
cpu_full_start="$(thread_cpu "$pid_full")"; writer_cpu_full_start="$(writer_cpu full)"
declare -A figures
record() { figures[$1]="${figures[$1]:-} $2"; }
echo "-- table rounds: wrk -t2 -c64 -d$duration --latency; redis-benchmark -c 64 -r 1000, $redis_requests requests each of LPUSH and RPOP"
for round in $(seq 1 "$rounds"); do
    read -r rps p50 p99 bad < <(pushpop full 2 64 "$duration")
    [ "$bad" = 0 ] || { echo "ours (full) answered $bad non-2xx"; exit 1; }
    record full_rps "$rps"; record full_p50 "$p50"; record full_p99 "$p99"
    printf 'round %s  push/pop --sync full     %9s mutations/s  p50 %7s ms  p99 %7s ms  load %s\n' "$round" "$rps" "$p50" "$p99" "$(load)"

    read -r lpush lp50 lp99 < <(redis_run 64 "$redis_requests" LPUSH 'list:__rand_int__' "$redis_value")
    read -r rpop rp50 rp99 < <(redis_run 64 "$redis_requests" RPOP 'list:__rand_int__')
    record lpush "$lpush"; record lpush_p50 "$lp50"; record lpush_p99 "$lp99"; record rpop "$rpop"
    printf 'round %s  redis LPUSH (always)     %9s ops/s        p50 %7s ms  p99 %7s ms   RPOP %s ops/s p50 %s ms  load %s\n' \
        "$round" "$lpush" "$lp50" "$lp99" "$rpop" "$rp50" "$(load)"

    read -r rps p50 p99 bad < <(pushpop floor 2 64 "$duration")
    [ "$bad" = 0 ] || { echo "floor-server answered $bad non-2xx"; exit 1; }
    record floor_rps "$rps"; record floor_p50 "$p50"; record floor_p99 "$p99"
    printf 'round %s  floor push/pop (fdatasync) %7s mutations/s  p50 %7s ms  p99 %7s ms  load %s\n' "$round" "$rps" "$p50" "$p99" "$(load)"

    read -r rps p50 p99 bad < <(pushpop floorsql 2 64 "$duration")
    [ "$bad" = 0 ] || { echo "floor-server (SQLite log) answered $bad non-2xx"; exit 1; }
    record floorsql_rps "$rps"; record floorsql_p50 "$p50"; record floorsql_p99 "$p99"
    printf 'round %s  floor push/pop (SQLite log) %6s mutations/s  p50 %7s ms  p99 %7s ms  load %s\n' "$round" "$rps" "$p50" "$p99" "$(load)"

    read -r rps p50 p99 bad < <(pushpop normal 2 64 "$duration")
    [ "$bad" = 0 ] || { echo "ours (normal) answered $bad non-2xx"; exit 1; }
    record normal_rps "$rps"; record normal_p50 "$p50"; record normal_p99 "$p99"
    printf 'round %s  push/pop --sync normal   %9s mutations/s  p50 %7s ms  p99 %7s ms  load %s\n' "$round" "$rps" "$p50" "$p99" "$(load)"

    rm -f "$work/plain.sqlite"*
    read -r src sp50 sp99 spages < <("$work/sqlite-commits" "$work/plain.sqlite" "$seconds")
    record sqlite "$src"; record sqlite_p50 "$sp50"; record sqlite_pages "$spages"
    printf 'round %s  sqlite 1 row/commit FULL %9s commits/s    p50 %7s ms  p99 %7s ms   %s pages/commit  load %s\n' \
        "$round" "$src" "$sp50" "$sp99" "$spages" "$(load)"

    read -r rps p50 p99 bad < <(run_wrk 2 64 "$duration" "http://127.0.0.1:$port_normal/v1/sessions/$reads_id" \
        scripts/bench-table/auth.lua "$reads_token")
    [ "$bad" = 0 ] || { echo "ours answered $bad non-2xx to GET session"; exit 1; }
    record get_rps "$rps"; record get_p99 "$p99"
    read -r nrps np50 np99 _ < <(run_wrk 2 64 "$duration" "http://127.0.0.1:$nginx_port/v1/sessions/$reads_id" \
        scripts/bench-table/auth.lua)
    record nginx_get "$nrps"
    printf 'round %s  GET session (%s B)     %9s req/s        p99 %7s ms   nginx static %s req/s p99 %s ms  load %s\n' \
        "$round" "$read_size" "$rps" "$p99" "$nrps" "$np99" "$(load)"

    read -r rps p50 p99 bad < <(run_wrk 2 64 "$duration" "http://127.0.0.1:$port_normal/healthz" scripts/bench-table/auth.lua)
    record healthz_rps "$rps"; record healthz_p99 "$p99"
    read -r nrps np50 np99 _ < <(run_wrk 2 64 "$duration" "http://127.0.0.1:$nginx_port/healthz" scripts/bench-table/auth.lua)
    record nginx_204 "$nrps"
    printf 'round %s  GET /healthz             %9s req/s        p99 %7s ms   nginx return 204 %s req/s p99 %s ms  load %s\n' \
        "$round" "$rps" "$p99" "$nrps" "$np99" "$(load)"
done
m() { median ${figures[$1]}; }
n() { printf '%.0f' "$(m "$1")"; } # the median, rounded
pages_full_end="$(pages_written full)"; commits_full_end="$(committed full)"
pages_normal_end="$(pages_written normal)"; commits_normal_end="$(committed normal)"
cpu_full_end="$(thread_cpu "$pid_full")"; writer_cpu_full_end="$(writer_cpu full)"

echo
peak="$(m full_rps)"
half="$(awk -v p="$peak" 'BEGIN {printf "%d", p / 2}')"
paced_at="$half"
echo "== paced push/pop at half the peak (--sync full peak $peak/s: $half requests/s over 64 connections, ${seconds} s; latency from when each request was due)"
paced "--sync full" "" "$port_full" "$work/sessions-full"
paced "--sync normal" "" "$port_normal" "$work/sessions-normal"
# nginx answering 204 at once: the floor this machine's scheduling and the load generator put
# under any p99.
paced "nginx 204" "   (the anchor: same load, an answer that does nothing)" "$nginx_paced_port" "$work/sessions-full"
# redis-server with appendfsync always (LPUSH and LPOP on a list per session, same schedule): what a
# durable write's p99 is on this machine's disk when the store is Redis; the goal is ours no worse.
paced "redis always" "   (the anchor: LPUSH / LPOP, appendfsync always)" "$redis_port" "$work/sessions-full" redis
# The SQLite-log floor at the same load: the p99 of SQLite as the synced log with nothing else.
paced "floor sqlite" "   (the SQLite-log floor: push/pop in memory, one SQLite commit per group)" \
    "$port_floorsql" "$work/sessions-floorsql"

# Memory per resident session and fan-out, measured by the benchmarks package (in-process
# servers of the same release code), each figure with its threshold and verdict in
# $work/figures ("NAME.KEY VALUE LIMIT met|NOT-MET", BenchmarkSupport's Thresholds).
echo
echo "== memory per resident session (api-bench: 100,000 sessions of 5 screens x 3 values, --max-loaded-sessions 200000), load $(load)"
NAVIGATION_VALUES_BENCH_FIGURES="$work/figures" "$benchmarks_bin/api-bench" --skip-throughput --skip-batch \
    --memory-sessions 100000 --max-loaded-sessions 200000 2>&1 | grep -v '^thresholds' || true
echo "== fan-out and idle streams (events-bench idle fanout), load $(load)"
NAVIGATION_VALUES_BENCH_FIGURES="$work/figures" "$benchmarks_bin/events-bench" idle fanout 2>&1 |
    grep -E 'per idle subscriber|idle streams|last of|p99 over|check|2xx ->|FAILED|error' || true
echo "   load at the end: $(load)"
# figure KEY: the value the benchmarks recorded for KEY (empty when the run did not get that far).
figure() { awk -v k="$1" '$1 == k { v = $2 } END { if (v != "") print v }' "$work/figures" 2>/dev/null; }

echo
echo "== the table (medians of $rounds rounds; ratio = ours / anchor; load at start $start_load, now $(load))"
printf '| %-40s | %-36s | %-40s | %-7s | %-9s |\n' workload "this server" anchor ratio goal
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..38})" \
    "$(printf -- '-%.0s' {1..42})" "---------" "-----------"
row() { # row WORKLOAD OURS_TEXT ANCHOR_TEXT OURS ANCHOR [GOAL]: a ratio that must reach GOAL (none: information)
    awk -v w="$1" -v o="$2" -v a="$3" -v x="$4" -v y="$5" -v g="${6:-}" 'BEGIN {
        r = (y > 0 ? x / y : 0)
        if (g == "") printf "| %-40s | %-36s | %-40s | %7.3f | %-9s |\n", w, o, a, r, "(info)"
        else printf "| %-40s | %-36s | %-40s | %7.3f | >= %-6s | %s\n", w, o, a, r, g, (r >= g ? "met" : "NOT MET") }'
}
ceiling() { # ceiling WORKLOAD OURS_TEXT ANCHOR_TEXT VALUE LIMIT: a figure that must stay at or under LIMIT
    awk -v w="$1" -v o="$2" -v a="$3" -v x="$4" -v g="$5" 'BEGIN {
        if (x == "") { printf "| %-40s | %-36s | %-40s | %7s | <= %-6s | NOT MET (not measured)\n", w, "(no figure)", a, "", g; exit }
        printf "| %-40s | %-36s | %-40s | %7s | <= %-6s | %s\n", w, o, a, "", g, (x + 0 <= g + 0 ? "met" : "NOT MET") }'
}
row "push/pop, 1,000 sessions, --sync full" "$(n full_rps)/s p50 $(m full_p50) p99 $(m full_p99) ms" \
    "floor push/pop fdatasync: $(n floor_rps)/s" "$(m full_rps)" "$(m floor_rps)" 0.6
row "same, --sync full" "" "floor push/pop SQLite log: $(n floorsql_rps)/s" "$(m full_rps)" "$(m floorsql_rps)"
row "same, --sync full" "" "sqlite 1 row/commit FULL: $(n sqlite)/s" "$(m full_rps)" "$(m sqlite)" 5
row "same, --sync full" "" "redis LPUSH always: $(n lpush)/s p50 $(m lpush_p50) ms" "$(m full_rps)" "$(m lpush)"
row "floor push/pop (SQLite log)" "$(n floorsql_rps)/s p50 $(m floorsql_p50) p99 $(m floorsql_p99) ms" \
    "floor push/pop fdatasync: $(n floor_rps)/s" "$(m floorsql_rps)" "$(m floor_rps)"
row "push/pop, 1,000 sessions, --sync normal" "$(n normal_rps)/s p50 $(m normal_p50) p99 $(m normal_p99) ms" \
    "floor push/pop fdatasync: $(n floor_rps)/s" "$(m normal_rps)" "$(m floor_rps)"
row "GET /v1/sessions/{id} ($read_size B)" "$(n get_rps) req/s p99 $(m get_p99) ms" \
    "nginx static $read_size B: $(n nginx_get)/s" "$(m get_rps)" "$(m nginx_get)" 0.8
row "GET /healthz" "$(n healthz_rps) req/s p99 $(m healthz_p99) ms" "nginx return 204: $(n nginx_204)/s" \
    "$(m healthz_rps)" "$(m nginx_204)" 0.85
for kind in push pop; do
    ceiling "paced $kind p99 at half peak, --sync full" "${paced_p99[--sync full/$kind]:-} ms ($half/s)" \
        "redis always, same load: ${paced_p99[redis always/$kind]:-} ms" "${paced_p99[--sync full/$kind]:-}" \
        "${paced_p99[redis always/$kind]:-0}"
done
for kind in push pop; do
    row "paced $kind p99, SQLite-log floor" "${paced_p99[floor sqlite/$kind]:-} ms ($half/s)" \
        "redis always, same load: ${paced_p99[redis always/$kind]:-} ms" "${paced_p99[floor sqlite/$kind]:-0}" \
        "${paced_p99[redis always/$kind]:-1}"
done
resident="$(figure api.maxBytesPerResidentSession)"
ceiling "bytes per resident session (100,000)" "${resident%.*} B" "api-bench, 5 screens x 3 values" "$resident" 2048
last="$(figure events.maxLastSubscriberFanOutP99Milliseconds)"
ceiling "fan-out 1,000 subscribers, 50 pushes" "p99 ${last:0:6} ms to the last one" "events-bench, after the push's 2xx" "$last" 5
idle="$(figure events.maxIdleStreamsMegabytes)"
ceiling "10,000 idle SSE streams" "${idle:0:6} MB of RSS" "events-bench, the server's VmRSS added" "$idle" 64
awk -v x="$(m full_rps)" -v l="$(m lpush)" -v r="$(m rpop)" -v s="$(m sqlite_p50)" 'BEGIN {
    mix = 2 / (1 / l + 1 / r); printf "(redis RPOP median %.0f/s; LPUSH and RPOP alternating would run at %.0f/s: --sync full / that = %.2f; plain SQLite commit p50 %s ms, about one fsync)\n", r, mix, x / mix, s }'
awk -v f="$(m floor_rps)" -v l="$(m lpush)" -v p50="$(m floor_p50)" -v p99="$(m floor_p99)" 'BEGIN {
    printf "floor (HTTP stack, memory, one log, group fdatasync): %.0f/s p50 %s p99 %s ms = %.2f of redis LPUSH always\n", f, p50, p99, f / l }'
echo "(a goal counts as met only when three runs on a quiet machine all meet it: the loads above say how quiet this one was)"
[ -n "$only_table" ] && exit 0

echo
echo "== WAL pages written per mutation over the table's rounds (the store's counter; SQLite's own for the anchor)"
if [ -n "$pages_full_start" ] && [ -n "$pages_full_end" ]; then
    awk -v p="$((pages_full_end - pages_full_start))" -v c="$((commits_full_end - commits_full_start))" \
        'BEGIN { printf "--sync full:   %d pages for %d mutations: %.2f pages per mutation\n", p, c, p / c }'
    awk -v p="$((pages_normal_end - pages_normal_start))" -v c="$((commits_normal_end - commits_normal_start))" \
        'BEGIN { printf "--sync normal: %d pages for %d mutations: %.2f pages per mutation\n", p, c, p / c }'
else
    echo "the server has no navigation_values_store_pages_written_total in /metrics (an older build)"
fi
echo "plain SQLite, 1 row per commit: $(m sqlite_pages) pages per commit"

echo
echo "== CPU per mutation of the --sync full server over the table's rounds (utime+stime from /proc/PID/stat and /proc/PID/task, by thread name)"
awk -v a="$cpu_full_start" -v b="$cpu_full_end" -v c="$((commits_full_end - commits_full_start))" -v t="$(getconf CLK_TCK)" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "http-loop threads %.0f us, http-worker threads %.0f us, the rest (chiefly the store'"'"'s dispatch queues: writer, checkpointer, readers) %.0f us, in all %.0f us per mutation (%d mutations)\n",
        (y[1] - x[1]) / t / c * 1e6, (y[2] - x[2]) / t / c * 1e6, (y[3] - x[3]) / t / c * 1e6, (y[4] - x[4]) / t / c * 1e6, c }'
if [ -n "$writer_cpu_full_start" ] && [ -n "$writer_cpu_full_end" ]; then
    awk -v a="$writer_cpu_full_start" -v b="$writer_cpu_full_end" -v c="$((commits_full_end - commits_full_start))" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        printf "the store'"'"'s own counters: writer %.0f us per mutation while running batches, checkpointer %.0f us per mutation\n",
            (y[1] - x[1]) / c * 1e6, (y[2] - x[2]) / c * 1e6 }'
    checkpoints() { metric full "navigation_values_store_checkpoints_total{mode=\"$1\",result=\"$2\"}"; }
    echo "checkpoints (--sync full): checkpointer $(checkpoints passive complete) complete, $(checkpoints passive partial) partial, $(checkpoints passive failed) failed;" \
        "writer $(checkpoints writer complete) complete, $(checkpoints writer partial) partial, $(checkpoints writer failed) failed;" \
        "forced $(checkpoints restart complete), $(checkpoints restart busy) busy;" \
        "the log restarted $(metric full navigation_values_store_wal_restarts_total) times; WAL $(metric full navigation_values_store_wal_pages) pages"
else
    echo "the server has no navigation_values_store_thread_cpu_seconds_total in /metrics (an older build)"
fi
for name in full normal; do
    echo "$name: database $(du -k "$work/$name/bench.sqlite" | cut -f1) KiB, WAL $(du -k "$work/$name/bench.sqlite-wal" 2>/dev/null | cut -f1 || echo 0) KiB after $(committed "$name") mutations"
done

echo
echo "== throughput by connections (push/pop --sync full vs redis LPUSH always, ${half_seconds} s each)"
for connections in 1 4 16 64; do
    threads=2; [ "$connections" = 1 ] && threads=1
    read -r rps p50 p99 bad < <(pushpop full "$threads" "$connections" "${half_seconds}s")
    scale_requests="$(awk -v r="$(m lpush)" -v s="$half_seconds" -v c="$connections" 'BEGIN {printf "%d", r * s * (c < 64 ? c / 64 : 1) + 1000}')"
    read -r lpush lp50 _ < <(redis_run "$connections" "$scale_requests" LPUSH 'list:__rand_int__' "$redis_value")
    redis_run "$connections" "$scale_requests" RPOP 'list:__rand_int__' >/dev/null
    awk -v c="$connections" -v a="$rps" -v p="$p50" -v b="$lpush" -v q="$lp50" -v bad="$bad" 'BEGIN {
        printf "%2d connections: ours %8.0f mutations/s p50 %7s ms   redis %8.0f ops/s p50 %6s ms   ratio %.2f%s\n", c, a, p, b, q, a / b, (bad != 0 ? "  (" bad " non-2xx)" : "") }'
done
