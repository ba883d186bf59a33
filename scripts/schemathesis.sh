#!/usr/bin/env bash
# Fuzzes the live server against its own /openapi.json with schemathesis (PyPI), every phase
# (examples, coverage, fuzzing, stateful) and every check: no 5xx, every answer's status, content
# type, headers and body match the document, and the document is as strict as the server (what it
# allows is accepted, what it forbids is refused).
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

# Anonymous imports (thousands of generated ones) would meet the creation quota, which has its own
# tests (AnonymousGrowthTests): a burst this run never spends.
"$binary" serve --port 0 --db "$work/schemathesis.sqlite" --admin-token "$token" --log-level warning \
    --create-burst 10000000 \
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
# Every check runs (--checks all) but use_after_free: DELETE /v1/sessions/{id} ends a session, and
# an ended session and its history stay readable until it is purged (docs/API.md), so a read after it
# is 200 by design, not a resource that outlived its deletion (a purged one is 404/410, tested in
# RetentionTests). Three answers depend on the session's state, not on the request, so a
# schema-valid request may meet them and a schema-violating one may meet them first: 409 (the
# stack or screen is not where the operation needs it, docs/Stacks.md), 410 (the session has
# ended, as the stateful phase's DELETE leaves it) and 412 (If-Match names a version the session
# is no longer at, or none at all, RFC 9110 13.1.1). The checks of positive and negative data
# count them as answers they expect, beside their defaults.
cat >"$work/schemathesis.toml" <<'TOML'
[parameters]
"query.wait" = 0

[auth.openapi.bearer]
bearer = "${NAVIGATION_VALUES_SCHEMATHESIS_TOKEN}"

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "410", "412", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "410", "412", "413", "415", "422", "428"]

# A stream takes a ticket (?ticket=) or an Authorization header, not both (400): a rule between
# a query parameter and the security scheme, which the document cannot state, and the run
# authenticates every request.
[[operations]]
include-operation-id = ["watchSessionEvents"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "410", "412", "429"]

# The session's own schema and stacks decide these operations' bodies and keys (a strict schema
# refuses undeclared value, handler and preference keys; a declared entry takes only its type;
# --max-stacks and --max-presentation-depth count what the session already holds): a request the
# document allows may be 422 for one session and 200 for another. Creation too: a strict schema
# and the root's values in one body.
[[operations]]
include-operation-id = [
    "createSession", "pushScreen", "replacePath", "updateValues", "setHandler", "removeHandler", "publishPreference",
    "createStack", "pushOntoStack", "replaceStackPath", "presentStack", "replaceAbove", "returnResult", "applyBatch",
    "importSession", "forkSession",
]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "410", "412", "422", "429"]

TOML
# One worker: hypothesis parses lambdas with ast.parse, which is not thread-safe on Python 3.11
# ("AST constructor recursion depth mismatch").
# /v1/events is an endless admin stream (SSE): it never answers a complete body, so it is left out.
export NAVIGATION_VALUES_SCHEMATHESIS_TOKEN="$token"
status=0
cd "$work"  # schemathesis leaves a .schemathesis cache folder behind
# The hooks (scripts/schemathesis_hooks.py) add a serializer for the NDJSON body of
# POST /v1/sessions/import and make every well-formed Idempotency-Key unique.
SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$OLDPWD/scripts${PYTHONPATH:+:$PYTHONPATH}" \
    timeout 240 schemathesis --no-color --config-file "$work/schemathesis.toml" run "$url/openapi.json" \
    --checks all \
    --exclude-checks use_after_free \
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
