#!/usr/bin/env bash
# The inspector in a real browser (scripts/check-inspector.py: headless Chromium with Selenium)
# against the release binary on a temporary database and a free port.
#
#   scripts/check-inspector.sh [path/to/navigation-values] [screenshot folder]
#
# Defaults: .build/release/navigation-values and .build/inspector-screenshots. Needs chromium,
# chromium-driver (apt) and selenium (pip); .ci/run installs them. With CHECK_INSPECTOR_TLS=1 the
# server serves HTTPS with a certificate from an authority made here (the openssl command), and
# the same check runs over it: curl and Python trust the authority, Chromium the server's key.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/navigation-values}
shots=${2:-.build/inspector-screenshots}
[ -x "$binary" ] || { echo "check-inspector: $binary is not built" >&2; exit 1; }
python=${PYTHON:-python3}
"$python" -c 'import selenium' 2>/dev/null || { echo "check-inspector: selenium is not installed (pip install selenium)" >&2; exit 1; }
command -v chromedriver >/dev/null 2>&1 || { echo "check-inspector: chromedriver is not installed (apt-get install chromium-driver)" >&2; exit 1; }

. scripts/server-for-checks.sh check-inspector
token="inspector-check-$(date +%s)-$$"
tls=()
if [ "${CHECK_INSPECTOR_TLS:-0}" = 1 ]; then
    scripts/make-test-ca.sh "$work"
    export CHECK_INSPECTOR_CA="$work/ca.pem"
    CHECK_INSPECTOR_SPKI=$(openssl x509 -pubkey -noout -in "$work/cert.pem" | openssl pkey -pubin -outform der \
        | openssl dgst -sha256 -binary | base64)
    export CHECK_INSPECTOR_SPKI
    tls=(--tls-cert "$work/cert.pem" --tls-key "$work/key.pem")
fi
start_server "$binary" serve --port 0 --db "$work/inspector.sqlite" --admin-token "$token" --log-level warning \
    --history-keep-events 0 "${tls[@]}"
rm -rf "$shots"
status=0
timeout 300 "$python" scripts/check-inspector.py "$url" "$token" "$shots" || status=$?
if [ "$status" -ne 0 ]; then
    echo "check-inspector: failed with status $status; server log:" >&2
    tail -n 30 "$work/stderr" >&2
fi
exit "$status"
