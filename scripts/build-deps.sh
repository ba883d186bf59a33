#!/usr/bin/env bash
# Installs what building the package needs when it is missing (apt: libsqlite3-dev, libpq-dev,
# libssl-dev, pkg-config, as .ci/run does); does nothing when all are there. Run by scripts/serve.sh
# and scripts/test.sh before their builds.
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
[ -f /usr/include/postgresql/libpq-fe.h ] || need+=(libpq-dev)
[ -f /usr/include/openssl/evp.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq >&2
    "${as_root[@]}" apt-get install -y -qq "${need[@]}" >&2
fi
