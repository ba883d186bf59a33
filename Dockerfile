# navigation-values: a static-stdlib release build on the official Swift image, run on a slim
# Debian with only SQLite, libpq (for --db postgres://…), libcrypto (OpenSSL) and CA certificates. Both stages are
# Debian bookworm. The base images are build arguments, so a machine that cannot pull them can
# build stand-ins (scripts/check-docker.sh does, for CI); by default they are the official ones.
#
#   docker build -t navigation-values .
#   printf '%s\n' "$(openssl rand -hex 32)" >admin-token && chmod 0644 admin-token
#   docker run -d -p 8080:8080 -v navigation-values-data:/data \
#       -v "$PWD/admin-token:/run/secrets/admin-token:ro" \
#       -e NAVIGATION_VALUES_ADMIN_TOKEN_FILE=/run/secrets/admin-token navigation-values
#
# HTTPS: mount the certificate chain and key (readable by uid 10001) and name them:
#   -v "$PWD/tls:/run/tls:ro" -e NAVIGATION_VALUES_TLS_CERT=/run/tls/cert.pem -e NAVIGATION_VALUES_TLS_KEY=/run/tls/key.pem

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- build ----
FROM ${SWIFT_IMAGE} AS build
# Marks the build stage's image, which the classic builder keeps untagged, so it can be pruned.
LABEL org.navigation-values.stage=build
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev libpq-dev libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
# The manifest and the dependencies first, so that editing sources does not invalidate these layers.
# deploy/swiftpm-mirrors holds SwiftPM mirrors only where the build machine cannot reach GitHub
# (its README); otherwise the dependencies resolve from their URLs.
COPY Package.swift ./
COPY scripts/swiftpm-mirrors.sh ./scripts/
COPY deploy/swiftpm-mirrors ./deploy/swiftpm-mirrors
RUN if [ -x deploy/swiftpm-mirrors/swiftpm-mirrors ]; then \
        NAVIGATION_VALUES_MIRRORS=/build/deploy/swiftpm-mirrors scripts/swiftpm-mirrors.sh; \
    fi \
    && swift package resolve
COPY Migrations ./Migrations
COPY Sources ./Sources
COPY Tests ./Tests
# The manifest names the example target too (not built here, but its folder must exist).
COPY Examples ./Examples
# The @ValueEntry macro builds against the image's /usr/lib/swift/host (Package.swift finds it).
RUN swift build -c release --static-swift-stdlib --product navigation-values \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/navigation-values" /out/navigation-values

# ---- run ----
FROM ${RUNTIME_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-0 libpq5 libssl3 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin navigation-values \
    && mkdir -p /data \
    && chown navigation-values:navigation-values /data
COPY --from=build /out/navigation-values /usr/local/bin/navigation-values
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
# `healthcheck` GETs /healthz over a plain socket (no curl in this image); it reads the port from
# NAVIGATION_VALUES_PORT like `serve`, so change the port with that variable, not with --port, and
# speaks HTTPS when NAVIGATION_VALUES_TLS_CERT is set, as `serve` does.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["navigation-values", "healthcheck"]
ENTRYPOINT ["navigation-values"]
CMD ["serve", "--host", "0.0.0.0", "--db", "/data/navigation-values.sqlite"]
