#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on a free loopback port, for tests and benchmarks:
#
#   url=$(scripts/postgres-cluster.sh start DIR [--fast])   # initdb DIR/data, start, print the admin URL
#   scripts/postgres-cluster.sh stop DIR                    # stop it (immediate) and remove DIR
#
# Uses Debian's postgresql (the newest /usr/lib/postgresql/N/bin, else PATH). initdb refuses to
# run as root, so as root the cluster runs as the `postgres` user (created by the package).
# --fast turns fsync off: for tests, which never crash the database server itself.
set -euo pipefail

command=${1:-}
dir=${2:-}
if [ -z "$command" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop DIR [--fast]" >&2
    exit 2
fi

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    bin=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
fi
if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "postgres-cluster: initdb and pg_ctl not found (apt-get install postgresql)" >&2
    exit 1
fi

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=postgres --regid=postgres --clear-groups -- "$@"
    else
        "$@"
    fi
}

case "$command" in
    start)
        mkdir -p "$dir"
        [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
        as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        # The full parallel test run keeps a few hundred connections open at its peak (every suite's
        # servers with their readers, writers and listeners): 1000 leaves room for suites to come.
        options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=1000"
        if [ "${3:-}" = "--fast" ]; then options="$options -c fsync=off"; fi
        # The server inherits pg_ctl's descriptors: give it none of the caller's (a pipe held open by
        # a daemon never reaches its end for whoever reads our output).
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" start \
            </dev/null >"$dir/pg_ctl.log" 2>&1 \
            || { cat "$dir/pg_ctl.log" "$dir/server.log" >&2; exit 1; }
        echo "postgres://postgres@127.0.0.1:$port/postgres"
        ;;
    stop)
        if [ -d "$dir/data" ]; then
            as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        fi
        rm -rf "$dir"
        ;;
    *)
        echo "usage: $0 start|stop DIR [--fast]" >&2
        exit 2
        ;;
esac
