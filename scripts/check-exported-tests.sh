#!/usr/bin/env bash
# check-exported-tests.sh [SERVER_BINARY] [COUNT] [STEPS]
#
# Checks that a session exported as a Swift Testing test (GET /v1/sessions/{id}/export?format=
# swift-testing) compiles and passes on the core library alone, as a QA engineer would use it:
# the server (default: .build/release/navigation-values) serves a throwaway SQLite file;
# scripts/exported_test_sessions.py makes COUNT (default 4) random sessions of STEPS (default 60)
# requests each, over several stacks, with presentations and strings that need escaping; each is
# exported (one checking only some versions, one through `navigation-values export --as-test`, which
# must be byte for byte the same), into a throwaway package that depends on this one by path
# (mirrors as scripts/swiftpm-mirrors.sh sets them), built with warnings as errors and run: every
# test passes. Then one expected value is changed in one file, and that test must fail. Everything
# is removed on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:-$root/.build/release/navigation-values}
count=${2:-4}
steps=${3:-60}
[ -x "$binary" ] || { echo "check-exported-tests: no server binary at $binary" >&2; exit 2; }
. "$root/scripts/server-for-checks.sh" check-exported-tests
started=$(date +%s)

start_server "$binary" serve --port 0 --db "$work/db.sqlite"
seed=${NAVIGATION_VALUES_EXPORT_SEED:-$RANDOM}
echo "check-exported-tests: sessions from seed $seed (NAVIGATION_VALUES_EXPORT_SEED=$seed repeats them)"
python3 "$root/scripts/exported_test_sessions.py" "$url" "$count" "$seed" "$steps" >"$work/sessions"

package="$work/replays"
mkdir -p "$package/Tests/ReplayTests"
cat >"$package/Package.swift" <<EOF
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "replays",
    platforms: [.iOS(.v18), .macOS(.v15)],
    dependencies: [.package(name: "navigation-values", path: "$root")],
    targets: [
        .testTarget(
            name: "ReplayTests",
            dependencies: [.product(name: "NavigationValues", package: "navigation-values")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-warnings-as-errors"])])
    ]
)
EOF
first=""
while read -r id token; do
    query="format=swift-testing"
    if [ -z "$first" ]; then
        first=$id
    else
        # Every other session checks only some versions: the first, the third and the last.
        version=$(curl -fsS -H "Authorization: Bearer $token" "$url/v1/sessions/$id" \
            | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
        [ $((RANDOM % 2)) -eq 0 ] && query="$query&versions=1,$((version < 3 ? 1 : 3)),$version"
    fi
    curl -fsS -H "Authorization: Bearer $token" "$url/v1/sessions/$id/export?$query" \
        -o "$package/Tests/ReplayTests/$id.swift"
done <"$work/sessions"

# The command line writes the same file as the API, from the database.
"$binary" export --db "$work/db.sqlite" "$first" --as-test >"$work/cli.swift"
cmp "$work/cli.swift" "$package/Tests/ReplayTests/$first.swift" \
    || { echo "check-exported-tests: export --as-test differs from the API's file" >&2; exit 1; }

"$root/scripts/swiftpm-mirrors.sh" "$package"
swift build --package-path "$package" --build-tests 2>&1 | tee "$work/build.log" | grep -E 'error|warning' || true
grep -q 'warning:\|error:' "$work/build.log" && { echo "check-exported-tests: the generated tests do not build cleanly" >&2; exit 1; }
swift test --package-path "$package" --skip-build 2>&1 | tee "$work/test.log" | tail -3
grep -q "Test run with $count tests .* passed" "$work/test.log" \
    || { echo "check-exported-tests: not every generated test passed" >&2; exit 1; }

# One expected value edited (the first screen's resolved `count`, which every screen resolves: the
# schema declares it): the test must fail now, on that value.
python3 - "$package/Tests/ReplayTests/$first.swift" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
edited, count = re.subn(r'resolved: \["count": \.integer\(-?\d+\)', 'resolved: ["count": .integer(424242)', text, count=1)
assert count == 1 and edited != text, 'no check to edit'
open(path, 'w').write(edited)
EOF
if swift test --package-path "$package" >"$work/edited.log" 2>&1; then
    echo "check-exported-tests: a test expecting another value passed" >&2
    exit 1
fi
grep -q '424242' "$work/edited.log" \
    || { echo "check-exported-tests: the edited test failed for another reason" >&2; tail -20 "$work/edited.log" >&2; exit 1; }
echo "check-exported-tests: $count exported sessions pass on the core, an edited one fails ($(($(date +%s) - started)) s)"
