#!/usr/bin/env bash
# `GET /healthz` through the product's own chain (the release `navigation-values serve`, request
# logging and metrics included) against nginx answering the same body, checked against
# Benchmarks/Thresholds/http-healthz.json: exits 1 when the requests/s ratio misses it.
# scripts/bench-reads.sh does the work (wrk -t2 -c64 --latency, alternating, medians); this only
# picks the route and the thresholds.
# Usage: scripts/bench-http.sh [DURATION] [ROUNDS]   (DURATION defaults to 10s, ROUNDS to 3)
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/bench-reads.sh --healthz-only --thresholds Benchmarks/Thresholds/http-healthz.json \
    "" "${1:-10s}" "${2:-3}"
