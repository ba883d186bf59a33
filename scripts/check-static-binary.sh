#!/usr/bin/env bash
# What the Docker image relies on, checked without a Docker engine: the release binary built as the
# Dockerfile builds it links no Swift runtime library dynamically, and runs `--help`, prints a
# completion script, runs `serve` and answers /healthz from a bare folder holding nothing but
# itself, with an empty environment.
#
#   scripts/check-static-binary.sh          (builds .build/release/navigation-values if needed)
set -euo pipefail
cd "$(dirname "$0")/.."

swift build -c release --static-swift-stdlib --product navigation-values
binary="$(swift build -c release --show-bin-path)/navigation-values"

echo "--- ldd $binary"
ldd "$binary" | tee /tmp/navigation-values-ldd.$$
if grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|libXCTest|/opt/swift|/usr/lib/swift' \
    /tmp/navigation-values-ldd.$$; then
    rm -f /tmp/navigation-values-ldd.$$
    echo "check-static-binary: the binary links Swift runtime libraries dynamically" >&2
    exit 1
fi
if grep -q 'not found' /tmp/navigation-values-ldd.$$; then
    rm -f /tmp/navigation-values-ldd.$$
    echo "check-static-binary: a library the binary needs is missing" >&2
    exit 1
fi
rm -f /tmp/navigation-values-ldd.$$

bare=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
    rm -rf "$bare"
}
trap cleanup EXIT
cp "$binary" "$bare/navigation-values"
cd "$bare"

echo "--- --help and a completion script from $bare"
env -i ./navigation-values --help >help.txt
grep -q '^USAGE: navigation-values \[--version\] <subcommand>' help.txt
env -i ./navigation-values --generate-completion-script bash >completion.bash
grep -q '^complete .* navigation-values$' completion.bash

echo "--- serve from $bare"
env -i ./navigation-values serve --port 0 --db ./data.sqlite --admin-token check >stdout.txt 2>stderr.txt &
server=$!
for _ in $(seq 300); do
    grep -q '^listening on ' stdout.txt 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat stderr.txt >&2; echo "check-static-binary: serve exited" >&2; exit 1; }
    sleep 0.1
done
port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' stdout.txt)
[ -n "$port" ] || { cat stderr.txt >&2; echo "check-static-binary: no 'listening on' line" >&2; exit 1; }

# GET /healthz with bash alone, then with the binary's own healthcheck (the Docker HEALTHCHECK).
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
answer=$(cat <&3)
exec 3<&-
echo "$answer" | head -n 1
echo "$answer" | head -n 1 | grep -q '^HTTP/1.1 200'
echo "$answer" | tail -n 1 | grep -q '{"status":"ok"}'
env -i NAVIGATION_VALUES_PORT="$port" ./navigation-values healthcheck

kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
[ "$status" -eq 0 ] || { cat stderr.txt >&2; echo "check-static-binary: serve exited $status on SIGTERM" >&2; exit 1; }
echo "check-static-binary: ok"
