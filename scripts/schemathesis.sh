#!/usr/bin/env bash
# Fuzzes the live server against its own /openapi.json with schemathesis (PyPI): no 5xx, and
# every answer's status, content type, headers and body match the document.
#
#   scripts/schemathesis.sh [path/to/navigation-values]     (default: .build/release/navigation-values)
#
# Starts the binary on a temporary database and a free port, runs schemathesis with the admin
# token, stops the server, and exits with schemathesis's status. Bounded to a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/navigation-values}
examples=${SCHEMATHESIS_MAX_EXAMPLES:-50}
command -v schemathesis >/dev/null 2>&1 || { echo "schemathesis: not installed (pip install schemathesis)" >&2; exit 1; }
[ -x "$binary" ] || { echo "schemathesis.sh: $binary is not built" >&2; exit 1; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

work=$(mktemp -d)
token="schemathesis-admin-token"
server=""
cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill -TERM "$server"
        wait "$server" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

"$binary" serve --port 0 --db "$work/schemathesis.sqlite" --admin-token "$token" --log-level warning \
    >"$work/stdout" 2>"$work/stderr" &
server=$!
for _ in $(seq 300); do
    grep -q '^listening on ' "$work/stdout" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$work/stderr" >&2; echo "schemathesis.sh: the server exited" >&2; exit 1; }
    sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$work/stdout")
[ -n "$url" ] || { echo "schemathesis.sh: no 'listening on' line within 30 s" >&2; exit 1; }
echo "schemathesis against $url (at most $examples examples per operation)"

# A long poll waits up to `wait` seconds by design; the run asks for none, so that requests on
# live sessions answer at once.
printf '[parameters]\n"query.wait" = 0\n' >"$work/schemathesis.toml"
# One worker: hypothesis parses lambdas with ast.parse, which is not thread-safe on Python 3.11
# ("AST constructor recursion depth mismatch").
# /v1/events is an endless admin stream (SSE): it never answers a complete body, so it is left out.
status=0
cd "$work"  # schemathesis leaves a .schemathesis cache folder behind
# The hooks add a serializer for the NDJSON body of POST /v1/sessions/import.
SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$OLDPWD/scripts${PYTHONPATH:+:$PYTHONPATH}" \
    timeout 240 schemathesis --no-color --config-file "$work/schemathesis.toml" run "$url/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --header "Authorization: Bearer $token" \
    --exclude-path /v1/events \
    --max-examples "$examples" \
    --request-timeout 10 \
    --seed 7 \
    --workers 1 \
    --suppress-health-check all || status=$?
if [ "$status" -ne 0 ]; then
    echo "schemathesis.sh: failed with status $status; server log:" >&2
    tail -n 50 "$work/stderr" >&2
fi
exit "$status"
