#!/usr/bin/env bash
# Runs the README's curl walk-through, as written, against the release binary, so that the README
# stays true: the block after "and in another:" in "A taste of the API: curl", then, in the same
# shell (its variables set), the support tools' block of docs/Inspector.md (tickets, observer
# tokens, diff, export, import and fork).
#
#   scripts/check-readme-walkthrough.sh [path/to/navigation-values]   (default: .build/release/navigation-values)
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/release/navigation-values}
[ -x "$binary" ] || { echo "check-readme-walkthrough: $binary is not built" >&2; exit 1; }
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
readme=$PWD/README.md

. scripts/server-for-checks.sh check-readme-walkthrough

# The block, with the server's real address, and the endless stream cut after 2 s (curl: 28).
python3 - "$readme" "$PWD/docs/Inspector.md" >"$work/walkthrough.sh" <<'PY'
import sys
def block_after(path, marker):
    text = open(path).read()
    block = text[text.index("```sh\n", text.index(marker)) + 6:]
    return block[:block.index("```")]
print(block_after(sys.argv[1], "and in another:"))
print(block_after(sys.argv[2], "## Support tools without the inspector"))
PY
grep -q '^BASE=http://127.0.0.1:8080$' "$work/walkthrough.sh"
grep -q '^curl -N ' "$work/walkthrough.sh"

# The walk-through runs in the server's folder, with the binary where the README says it is.
cd "$work"
mkdir -p .build/release
ln -s "$binary" .build/release/navigation-values
start_server .build/release/navigation-values serve --port 0 --admin-token secret
sed -e "s|^BASE=http://127.0.0.1:8080\$|BASE=$url|" \
    -e 's|^curl -N \(.*\)$|curl -sS -N --max-time 2 \1 \|\| test $? -eq 28|' walkthrough.sh >run.sh

bash -e -o pipefail run.sh >output || { cat output stderr >&2; echo "check-readme-walkthrough: failed" >&2; exit 1; }
cat output
for expected in '{"text": "initial value"}' '{"text": "hello"}' '{"preference": "chosen"}' 'id: 1' 'event: session.created'; do
    grep -qxF "$expected" output || { echo "check-readme-walkthrough: no line '$expected'" >&2; exit 1; }
done
# The support block's answers end without a newline: the diff's first operation, the import's new
# session and the fork's origin, found anywhere in the output.
for expected in '[{"op":"test","path":"/version","value":1},' '"origin":{"session":"' '"token":"t_'; do
    grep -qF "$expected" output || { echo "check-readme-walkthrough: no '$expected' in the output" >&2; exit 1; }
done
echo "check-readme-walkthrough: ok"
