# Stand-in for the official `postgres` image, as docker-compose.yml uses it: POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB make the cluster on first start in
# /var/lib/postgresql/data, which listens on every address with password authentication, and
# pg_isready is on PATH for the health check. Debian bookworm's PostgreSQL 15.
ARG BASE
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
# The postgres user Debian's package makes (its uid is whatever the package got).
# hadolint ignore=DL3066
USER postgres
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
