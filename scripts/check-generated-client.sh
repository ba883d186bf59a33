#!/usr/bin/env bash
# A client generated from the served OpenAPI document by a mainstream generator keeps every type and
# walks the seed's Demo: starts the release binary on a temporary database and a free port, runs
# openapi-python-client (PyPI) on its /openapi.json, fails on any schema or operation the generator
# could not keep, then runs scripts/generated_client_walk.py with the generated package.
#
#   scripts/check-generated-client.sh [path/to/navigation-values]   (default: .build/release/navigation-values)
#
# Needs openapi-python-client (pip; .ci/run installs it in .build/ci-tools); PYTHON names the Python
# that has it (default: python3). About 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/navigation-values}
python=${PYTHON:-python3}
# A path (.ci/run gives .build/ci-tools/bin/python) made absolute, since the generator runs in $work.
case $python in */*) python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python") ;; esac
[ -x "$binary" ] || { echo "check-generated-client: $binary is not built" >&2; exit 1; }
"$python" -m openapi_python_client --version >/dev/null 2>&1 || {
    echo "check-generated-client: openapi-python-client is not installed (pip install openapi-python-client)" >&2; exit 1; }

. scripts/server-for-checks.sh check-generated-client
start_server "$binary" serve --port 0 --db "$work/generated-client.sqlite" --admin-token "check-generated-client" \
    --log-level warning

# The generator knows no NDJSON (export's answer, import's body): it is told to treat it as the
# bytes it is, so those two operations are generated too.
cat >"$work/config.yml" <<'YAML'
content_type_overrides:
  application/x-ndjson: application/octet-stream
YAML
(cd "$work" && "$python" -m openapi_python_client generate --url "$url/openapi.json" --config config.yml \
    --meta none --output-path client) >"$work/generate.log" 2>&1 || {
    cat "$work/generate.log" >&2; echo "check-generated-client: the generator failed" >&2; exit 1; }
# Its warnings name what it left out: a schema it could not parse, a reference to one, an operation
# or an answer it dropped. Formatting with ruff, which is not installed, is the only one allowed.
if grep -E 'Unable to|Could not|will not be generated|will be omitted|Invalid|Unsupported' "$work/generate.log" >&2; then
    echo "check-generated-client: the generator left parts of the document out (above)" >&2
    exit 1
fi
models=$(find "$work/client/models" -name '*.py' ! -name '__init__.py' | wc -l)
operations=$(find "$work/client/api" -mindepth 2 -name '*.py' ! -name '__init__.py' | wc -l)
echo "check-generated-client: openapi-python-client $("$python" -m openapi_python_client --version | awk '{print $NF}') generated $models models and $operations operations"

mkdir -p "$work/pkg"
mv "$work/client" "$work/pkg/navigation_values_server_client"
PYTHONPATH="$work/pkg" "$python" scripts/generated_client_walk.py "$url"
