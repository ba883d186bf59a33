#!/usr/bin/env bash
# The test command: every suite, as `.ci/run` runs it.
#
#   scripts/test.sh [swift test arguments]     # e.g. scripts/test.sh --filter StacksOverHTTPTests
#
# Installs what the build needs when it is missing (scripts/build-deps.sh), points SwiftPM at the local mirrors where there are some (scripts/swiftpm-mirrors.sh), then runs
# `swift test --parallel`. The PostgreSQL suites use NAVIGATION_VALUES_TEST_POSTGRES_URL; when it is
# unset and Debian's postgresql is installed, a throwaway cluster is started for the run and removed
# after it (without either, those suites are skipped, and swift test says so).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build-deps.sh
scripts/swiftpm-mirrors.sh

if [ -z "${NAVIGATION_VALUES_TEST_POSTGRES_URL:-}" ] && compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
    pg_dir=$(mktemp -d /tmp/nv-test-postgres.XXXXXX)
    trap 'scripts/postgres-cluster.sh stop "$pg_dir"' EXIT
    NAVIGATION_VALUES_TEST_POSTGRES_URL=$(scripts/postgres-cluster.sh start "$pg_dir" --fast)
    export NAVIGATION_VALUES_TEST_POSTGRES_URL
    echo "PostgreSQL for the tests: $NAVIGATION_VALUES_TEST_POSTGRES_URL"
fi

swift test --parallel "$@"
