#!/bin/sh
# The postgres stand-in's start: make the cluster on first start (as the official image does, from
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB), then run the server in the foreground.
set -eu
user=${POSTGRES_USER:-postgres}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s\n' "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" >"$password_file"
    initdb --username="$user" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    database=${POSTGRES_DB:-$user}
    if [ "$database" != postgres ]; then
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        createdb --username="$user" "$database"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
