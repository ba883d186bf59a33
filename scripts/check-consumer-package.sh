#!/usr/bin/env bash
# check-consumer-package.sh [SERVER_BINARY]
#
# Checks that an app can depend on this package by version, as a new user would: the
# working tree (tracked and new files, not ignored ones) becomes a throwaway git repository tagged
# with the package's version (NavigationValuesVersion.current, 0.1.0 today); a throwaway app package
# depends on it with `.package(url: "file://…", from: VERSION)` and the products NavigationValues,
# NavigationValuesClient and NavigationValuesTesting, builds, and runs against the server (default:
# .build/release/navigation-values): a typed value through the client, read back through a live
# mirror, the same client code on the in-memory server, and a @ValueEntry on a local stack. The
# resolved graph must hold this package, swift-log (the client's one dependency) and
# swift-argument-parser (the executable's, which SwiftPM resolves for every product but which the
# app must neither build nor link), resolved from local mirrors where there are some, as
# scripts/swiftpm-mirrors.sh sets them. Everything is removed on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
server=${1:-$root/.build/release/navigation-values}
[ -x "$server" ] || { echo "check-consumer-package: no server binary at $server" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/nv-consumer.XXXXXX")
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s)
version=$(sed -n 's/^ *public static let current = "\([0-9][0-9.]*\)"$/\1/p' \
    "$root/Sources/NavigationValuesWire/NavigationValuesVersion.swift")
[ -n "$version" ] || { echo "check-consumer-package: no version in NavigationValuesVersion.swift" >&2; exit 2; }

# The package, as a release of the working tree.
mkdir -p "$work/navigation-values" "$work/app/Sources/app"
(cd "$root" && git ls-files -z --cached --others --exclude-standard \
    | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$work/navigation-values"
(
    cd "$work/navigation-values"
    git init -q
    git add -A
    git -c user.name=consumer-check -c user.email=consumer-check@localhost commit -qm "release $version"
    git tag "$version"
)

# The app.
cat > "$work/app/Package.swift" <<EOF
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "app",
    platforms: [.iOS(.v18), .macOS(.v15)],
    dependencies: [.package(url: "file://$work/navigation-values", from: "$version")],
    targets: [
        .executableTarget(
            name: "app",
            dependencies: [
                .product(name: "NavigationValues", package: "navigation-values"),
                .product(name: "NavigationValuesClient", package: "navigation-values"),
                .product(name: "NavigationValuesTesting", package: "navigation-values"),
            ])
    ]
)
EOF
cat > "$work/app/Sources/app/main.swift" <<'EOF'
import Foundation
import NavigationValues
import NavigationValuesClient
import NavigationValuesTesting

extension ScreenContext {
    @ValueEntry var greeting: String = "hello"
}
struct Title: ValueKey { static let defaultValue = "" }

// The core, with the macro, on a local stack.
let local = ScreenStack()
local.push { $0.greeting = "from the root" }
let pushed = local.push()

// The client and a mirror, against the server given on the command line.
guard let url = CommandLine.arguments.dropFirst().first.flatMap(URL.init(string:)) else {
    print("usage: app http://HOST:PORT")
    exit(2)
}
let session = try await NavigationValuesClient(baseURL: url).createSession(root: ScreenSeed("Home"))
let detail = try await session.push("Detail")
try await session.root.set(Title.self, "Inbox")
let mirror = try await RemoteStack.connect(to: session)
let title = mirror[id: detail.screen.id]?.resolved(Title.self) ?? "?"

// The same calls on the in-memory server, in this process.
let inMemory = try await InMemoryServer(sessions: [SessionSeed(root: ScreenSeed("Home"), path: [ScreenSeed("Detail")])])
try await inMemory.sessions[0].root.set(Title.self, "Outbox")
let memoryTitle = try await inMemory.sessions[0].top.resolved(Title.self)
print("consumer ok: local \(pushed.greeting), remote \(title) at version \(mirror.version), in memory \(memoryTitle)")
EOF

# Its build: this package and swift-log built, swift-argument-parser only resolved.
"$root/scripts/swiftpm-mirrors.sh" "$work/app" >/dev/null
(cd "$work/app" && swift build 2>&1 | tail -n 3)
pins=$(sed -n 's/.*"identity" : "\(.*\)".*/\1/p' "$work/app/Package.resolved" | sort | tr '\n' ' ')
if [ "$pins" != "navigation-values swift-argument-parser swift-log " ]; then
    echo "check-consumer-package: expected navigation-values, swift-argument-parser and swift-log resolved, got: $pins" >&2
    cat "$work/app/Package.resolved" >&2
    exit 1
fi
built=$(find "$work/app/.build" -name '*.swiftmodule' -path '*/Modules/*' -printf '%f\n' | sort | tr '\n' ' ')
case "$built" in
    *ArgumentParser*)
        echo "check-consumer-package: the app built swift-argument-parser, the executable's dependency: $built" >&2
        exit 1 ;;
    *Logging.swiftmodule*) ;;
    *)
        echo "check-consumer-package: no module of swift-log among what the app built: $built" >&2
        exit 1 ;;
esac

# Its run, against a server on a free port.
"$server" serve --port 0 --db :memory: --admin-token consumer-check > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 1 300); do
    grep -q '^listening on ' "$work/server.out" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
    sleep 0.1
done
address=$(sed -n 's/^listening on //p' "$work/server.out" | head -n 1)
[ -n "$address" ] || { echo "check-consumer-package: the server did not start" >&2; exit 1; }
output=$("$work/app/.build/debug/app" "$address")
echo "$output"
expected="consumer ok: local from the root, remote Inbox at version 3, in memory Outbox"
[ "$output" = "$expected" ] || { echo "check-consumer-package: expected '$expected'" >&2; exit 1; }
echo "check-consumer-package: an app depending on $version builds and runs ($(( $(date +%s) - started )) s)"
