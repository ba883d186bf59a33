# Sourced by the checks that run the built server (schemathesis.sh, check-generated-client.sh,
# check-inspector.sh, check-readme-walkthrough.sh): $work, a temporary folder, and on exit the
# server stopped (SIGTERM, then waited for) and $work removed, even on failure.
#
#   . scripts/server-for-checks.sh NAME          NAME starts the messages
#   start_server COMMAND [ARGUMENTS…]            e.g. start_server "$binary" serve --port 0 --db "$work/db.sqlite"
#
# start_server runs the command in the background in the current folder, its stdout and stderr in
# $work/stdout and $work/stderr, waits up to 30 s for its `listening on` line, and sets $server (its
# pid) and $url.
check_name=$1
work=$(mktemp -d)
server=""
stop_server_and_clean() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -TERM "$server"; wait "$server" || true; fi
    rm -rf "$work"
}
trap stop_server_and_clean EXIT

start_server() {
    "$@" >"$work/stdout" 2>"$work/stderr" &
    server=$!
    for _ in $(seq 300); do
        grep -q '^listening on ' "$work/stdout" 2>/dev/null && break
        kill -0 "$server" 2>/dev/null || { cat "$work/stderr" >&2; echo "$check_name: the server exited" >&2; exit 1; }
        sleep 0.1
    done
    url=$(sed -n 's/^listening on //p' "$work/stdout")
    [ -n "$url" ] || { echo "$check_name: no 'listening on' line within 30 s" >&2; exit 1; }
}
