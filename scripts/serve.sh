#!/usr/bin/env bash
# Runs the server from a fresh checkout: installs what the build needs when it is missing (apt:
# libsqlite3-dev, libpq-dev, libssl-dev, pkg-config, as .ci/run does), builds the release binary when there is none or
# a source is newer (pointing SwiftPM at local mirrors first where there are some, as .ci/run does:
# scripts/swiftpm-mirrors.sh), then execs `navigation-values serve` with the given flags.
#
#   scripts/serve.sh [serve flags…]      e.g. scripts/serve.sh --port 9000 --admin-token-file ~/.config/navigation-values/admin-token
#
# Everything but the server's own output goes to stderr, so `listening on …` stays the only line
# on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build-deps.sh >&2

binary=.build/release/navigation-values
if ! [ -x "$binary" ] || [ -n "$(find Package.swift Sources Migrations -newer "$binary" -print -quit)" ]; then
    echo "serve.sh: building $binary (release)…" >&2
    # Dependencies named by their GitHub URLs resolve from local mirrors on a machine without GitHub
    # (CONTRIBUTING.md, "Dependencies and mirrors"); where there are none this does nothing. Set on
    # every build, not once: a dependency added since (swift-argument-parser) needs its mirror too.
    scripts/swiftpm-mirrors.sh >&2
    # The flags .ci/run and the Dockerfile build with, so the three share one build.
    swift build -c release --static-swift-stdlib --product navigation-values >&2
    touch "$binary"  # an unchanged link keeps its old time; the check above then passes next time
fi

exec "$binary" serve "$@"
