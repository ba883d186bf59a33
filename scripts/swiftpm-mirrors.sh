#!/usr/bin/env bash
# swiftpm-mirrors.sh [PACKAGE_DIR]
# swiftpm-mirrors.sh --export DIR
#
# Points SwiftPM at local mirrors of the packages this project names by their GitHub URLs
# (swift-log, swift-argument-parser), for the package in PACKAGE_DIR (default: the project's
# root), on a machine that cannot reach GitHub. A machine that can needs none of this: SwiftPM resolves from GitHub, and
# this script does nothing when there are no mirrors. See CONTRIBUTING.md, "Dependencies and
# mirrors".
#
# The mirrors: $NAVIGATION_VALUES_MIRRORS (a folder with `swiftpm-mirrors` and `mirrors/`), else
# `shared/` beside the main checkout (found from a worktree or a clone of it too). Its
# `swiftpm-mirrors` sets them (in PACKAGE_DIR/.swiftpm, not committed). A mirror that git does not
# take as a repository (a bare repository copied without its empty `refs/` folder) is copied once
# to a cache, mended there, and used from there instead.
#
# `--export DIR` copies the mirrors, mended, with their `swiftpm-mirrors`, into DIR (emptied
# first), a folder that works as $NAVIGATION_VALUES_MIRRORS anywhere: the Docker build's context
# (scripts/check-docker.sh). With no mirrors here, DIR is left empty.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export_dir=""
if [ "${1:-}" = "--export" ]; then
    export_dir=${2:?usage: swiftpm-mirrors.sh --export DIR}
else
    package=$(cd "${1:-$root}" && pwd)
fi

# Where to look, first found wins: the variable; `shared/` beside the checkout this one belongs to
# (a worktree's main checkout); beside the repository it was cloned from (a fresh clone of it
# elsewhere, as CI's check makes); the workplace's own /work/shared.
candidates=()
[ -n "${NAVIGATION_VALUES_MIRRORS:-}" ] && candidates+=("$NAVIGATION_VALUES_MIRRORS")
common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
[ -n "$common" ] && candidates+=("$(dirname "$(dirname "$common")")/shared")
origin=$(git -C "$root" remote get-url origin 2>/dev/null || true)
[ -d "$origin" ] && candidates+=("$(cd "$origin" && cd .. && pwd)/shared")
candidates+=(/work/shared)
shared=""
for candidate in "${candidates[@]}"; do
    if [ -x "$candidate/swiftpm-mirrors" ]; then shared=$candidate; break; fi
done
if [ -n "$export_dir" ]; then
    mkdir -p "$export_dir"
    find "$export_dir" -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
    if [ -z "$shared" ]; then
        echo "swiftpm-mirrors.sh: no mirrors here to export; SwiftPM resolves from the packages' own URLs"
        exit 0
    fi
    cp "$shared/swiftpm-mirrors" "$export_dir/"
    cp -R "$shared/mirrors" "$export_dir/"
    chmod -R u+w "$export_dir"
    grep -v '^#' "$export_dir/mirrors/ORIGINS" | while read -r dir _; do
        [ -n "$dir" ] && mkdir -p "$export_dir/mirrors/$dir/refs/heads" "$export_dir/mirrors/$dir/refs/tags"
    done
    echo "swiftpm-mirrors.sh: mirrors exported to $export_dir"
    exit 0
fi
if [ -z "$shared" ]; then
    echo "swiftpm-mirrors.sh: no mirrors here; SwiftPM resolves from the packages' own URLs"
    exit 0
fi

"$shared/swiftpm-mirrors" "$package"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/navigation-values-mirrors
grep -v '^#' "$shared/mirrors/ORIGINS" | while read -r dir url; do
    [ -n "$dir" ] || continue
    mirror="$shared/mirrors/$dir"
    git -C "$mirror" rev-parse --git-dir >/dev/null 2>&1 && continue
    mended="$cache/$dir"
    if ! git -C "$mended" rev-parse --git-dir >/dev/null 2>&1; then
        # Mended beside, then moved in place: another checkout may be doing the same.
        mkdir -p "$cache"
        scratch=$(mktemp -d "$cache/.$dir.XXXXXX")
        cp -R "$mirror/." "$scratch"
        chmod -R u+w "$scratch"
        mkdir -p "$scratch/refs/heads" "$scratch/refs/tags"
        git -C "$scratch" rev-parse --git-dir >/dev/null
        rm -rf "$mended"
        mv "$scratch" "$mended" 2>/dev/null || rm -rf "$scratch"
    fi
    swift package --package-path "$package" config set-mirror --original "$url" --mirror "$mended"
    echo "swiftpm-mirrors.sh: $dir is not a git repository as shipped (no refs/); using a mended copy in $mended"
done
