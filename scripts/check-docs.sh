#!/usr/bin/env bash
# check-docs.sh [OUTPUT_DIR]
#
# Builds the DocC documentation of the client's products, NavigationValuesClient and
# NavigationValuesTesting, from their modules' symbol graphs and their catalogs
# (Sources/MODULE/MODULE.docc) with the toolchain's docc, and fails on:
#   - any DocC warning or error (a symbol or article link that does not resolve included);
#   - a public symbol left out of the catalog's topic groups: DocC files those under groups it
#     makes up on the module's page, so such a group there fails the check.
# The archives are written to OUTPUT_DIR (default .build/docs), MODULE.doccarchive each.
#
# The modules are built as the tests build them (debug, in .build: seconds after `swift test`), and
# their symbol graphs read from the built modules with swift-symbolgraph-extract, so no second
# build with other compiler flags is needed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
output=${1:-.build/docs}
modules=(NavigationValuesClient NavigationValuesTesting)

toolchain=$(dirname "$(readlink -f "$(command -v swift)")")
docc=${DOCC:-$toolchain/docc}
extract=${SWIFT_SYMBOLGRAPH_EXTRACT:-$toolchain/swift-symbolgraph-extract}
for tool in "$docc" "$extract"; do
    [ -x "$tool" ] || { echo "check-docs: $tool not found (set DOCC or SWIFT_SYMBOLGRAPH_EXTRACT)" >&2; exit 1; }
done

# NavigationValuesTesting depends on the client: one build makes both.
swift build --target NavigationValuesTesting 2>&1 | tail -n 1
bin=$(swift build --show-bin-path)
search=$bin/Modules
[ -d "$search" ] || search=$bin  # toolchains before 6.0 put modules beside the products
triple=$(swift -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -n 1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$output"
# The system-library targets' module maps (CLibCrypto is in NavigationValuesTesting's closure on
# Linux): swift build hands them to the compiler itself; the extractor is told where they are.
module_maps=()
for map in Sources/*/module.modulemap; do
    module_maps+=(-Xcc "-fmodule-map-file=$PWD/$map")
done
failed=0
for module in "${modules[@]}"; do
    graphs=$work/$module
    mkdir -p "$graphs"
    "$extract" -module-name "$module" -I "$search" -target "$triple" -output-dir "$graphs" \
        "${module_maps[@]}" -minimum-access-level public -emit-extension-block-symbols -skip-synthesized-members
    archive=$output/$module.doccarchive
    rm -rf "$archive"
    log=$work/$module.log
    status=0
    "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs" \
        --output-dir "$archive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.navigationvalues.$module" --warnings-as-errors >"$log" 2>&1 || status=$?
    if [ "$status" != 0 ] || grep -qE '^(warning|error):' "$log"; then
        cat "$log" >&2
        echo "check-docs: $module: DocC reported the problems above" >&2
        failed=1
        continue
    fi
    # The module's page: every topic group must be the catalog's own.
    page=$archive/data/documentation/$(echo "$module" | tr '[:upper:]' '[:lower:]').json
    uncurated=$(python3 - "$page" <<'EOF'
import json, sys
page = json.load(open(sys.argv[1]))
for section in page.get("topicSections", []):
    if section.get("generated"):
        for identifier in section["identifiers"]:
            print(f'{section.get("title")}: {identifier.rsplit("/", 1)[-1]}')
EOF
    )
    if [ -n "$uncurated" ]; then
        echo "check-docs: $module: public symbols in no topic group of Sources/$module/$module.docc:" >&2
        echo "$uncurated" >&2
        failed=1
        continue
    fi
    pages=$(find "$archive/data/documentation" -name '*.json' | wc -l)
    echo "check-docs: $module: $pages pages, no warnings, every public symbol in a topic group ($archive)"
done
exit "$failed"
