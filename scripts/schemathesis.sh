#!/usr/bin/env bash
# Fuzzes the live server against its own /openapi.json with schemathesis (PyPI), every phase
# (examples, coverage, fuzzing, stateful) and every check: no 5xx, every answer's status, content
# type, headers and body match the document, and the document is as strict as the server (what it
# allows is accepted, what it forbids is refused). SCHEMATHESIS_MAX_EXAMPLES (50) and
# SCHEMATHESIS_SEED (7) change the run; 50 examples make about 4,700 test cases in 2 minutes.
#
#   scripts/schemathesis.sh [path/to/navigation-values]     (default: .build/release/navigation-values)
#
# Starts the binary on a temporary database and a free port, runs schemathesis with the admin
# token, stops the server, and exits with schemathesis's status. Bounded to 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/navigation-values}
examples=${SCHEMATHESIS_MAX_EXAMPLES:-50}
seed=${SCHEMATHESIS_SEED:-7}
command -v schemathesis >/dev/null 2>&1 || { echo "schemathesis: not installed (pip install schemathesis)" >&2; exit 1; }
[ -x "$binary" ] || { echo "schemathesis.sh: $binary is not built" >&2; exit 1; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

. scripts/server-for-checks.sh schemathesis.sh
token="schemathesis-admin-token"

# Anonymous imports (thousands of generated ones) would meet the creation quota, which has its own
# tests (AnonymousGrowthTests): a burst this run never spends.
start_server "$binary" serve --port 0 --db "$work/schemathesis.sqlite" --admin-token "$token" --log-level warning \
    --create-burst 10000000
echo "schemathesis against $url (at most $examples examples per operation)"

# What the run configures, and why: each is listed in docs/API.md, "The OpenAPI document", as what
# the document cannot say. Every check and every phase run, stateful included; nothing else is
# left out, and no hook reads, rewrites or filters an answer (scripts/schemathesis_hooks.py only
# serializes the import's NDJSON body and gives each request an Idempotency-Key of its own).
#
# - A long poll waits up to `wait` seconds by design: the run asks for none, so that requests on
#   live sessions answer at once. /v1/events is an endless stream: schemathesis reads it for one
#   second, fewer times.
# - Answers that depend on the session's state, not on the request, so that a request the document
#   allows may meet them and one it forbids may meet them before its body is read: 409 (the stack
#   or screen is not where the operation needs it), 410 (the session has ended, as the stateful
#   phase's DELETE leaves it; or its events were purged), 412 (If-Match names a version the session
#   is no longer at). And 422 where the session's own schema and stacks decide the body (a strict
#   schema refuses undeclared keys, a declared entry takes only its type, --max-stacks and
#   --max-presentation-depth count what the session holds), or a create's own strict schema its
#   root's values, or an import's lines must replay as recorded.
# - A stream takes a ticket (?ticket=) or an Authorization header, not both (400): the document
#   states them as alternatives, and alternatives in OpenAPI do not forbid both, while the run
#   authenticates every request and its stateful phase passes the tickets it was given on.
# - A hand-off code of the right shape is still only a code when the server signed it (400 when
#   not, 404 without a record, 409 once used, 410 expired): a schema cannot state a signature.
# - DELETE /v1/sessions/{id} ends a session; an ended session and its history stay readable until
#   it is purged (docs/API.md), so a read after it answers 200 by design: use_after_free is off for
#   the reads under a session, and stays on elsewhere (observer tokens).
cat >"$work/schemathesis.toml" <<'TOML'
[parameters]
"query.wait" = 0

[auth.openapi.bearer]
bearer = "${NAVIGATION_VALUES_SCHEMATHESIS_TOKEN}"

# The one check that needs a setting: every answer within 5 s (a loaded 2-core machine included).
[checks]
max_response_time = 5.0

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "410", "412", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "410", "412", "413", "415", "422", "428", "429"]

[[operations]]
include-operation-id = [
    "createSession", "pushScreen", "replacePath", "updateValues", "setHandler", "removeHandler", "publishPreference",
    "createStack", "pushOntoStack", "replaceStackPath", "presentStack", "replaceAbove", "returnResult", "applyBatch",
    "importSession", "forkSession",
]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "410", "412", "422", "429"]

[[operations]]
include-operation-id = [
    "getSession", "getScreen", "listStacks", "getStack", "watchSessionEvents", "getHistory", "replaySession",
    "diffSession", "exportSession",
]
checks.use_after_free.enabled = false

[[operations]]
include-operation-id = ["watchSessionEvents", "watchAllEvents"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "410", "412", "429"]

[[operations]]
include-operation-id = ["redeemHandoff"]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "404", "409", "410", "429"]

[[operations]]
include-operation-id = ["watchAllEvents"]
request-timeout = 1
generation.max-examples = 5
TOML
# One worker: hypothesis parses lambdas with ast.parse, which is not thread-safe on Python 3.11
# ("AST constructor recursion depth mismatch").
export NAVIGATION_VALUES_SCHEMATHESIS_TOKEN="$token"
status=0
cd "$work"  # schemathesis leaves a .schemathesis cache folder behind
started=$SECONDS
# Every check runs: the default, so that the configuration above can still turn one off for an
# operation (`--checks all` would turn it on again everywhere).
SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$OLDPWD/scripts${PYTHONPATH:+:$PYTHONPATH}" \
    timeout 600 schemathesis --no-color --config-file "$work/schemathesis.toml" run "$url/openapi.json" \
    --max-examples "$examples" \
    --request-timeout 10 \
    --seed "$seed" \
    --workers 1 \
    --suppress-health-check all | tee "$work/report" || status=$?
echo "schemathesis.sh: $(grep -Eo '[0-9]+ generated' "$work/report" | head -1) test cases in $((SECONDS - started)) s"
if [ "$status" -ne 0 ]; then
    echo "schemathesis.sh: failed with status $status; server log:" >&2
    tail -n 50 "$work/stderr" >&2
fi
exit "$status"
