# navigation-values: a static-stdlib release build on the official Swift image, run on a slim
# Ubuntu with only SQLite, libpq (for --db postgres://…), libcrypto (OpenSSL) and CA certificates.
#
#   docker build -t navigation-values .
#   docker run -d -p 8080:8080 -v navigation-values-data:/data -e NAVIGATION_VALUES_ADMIN_TOKEN=secret navigation-values

# ---- build ----
FROM swift:6.3-noble AS build
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev libpq-dev libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
# The manifest first, so that editing sources does not invalidate this layer's cache.
COPY Package.swift ./
COPY Migrations ./Migrations
COPY Sources ./Sources
COPY Tests ./Tests
# The manifest names the example target too (not built here, but its folder must exist).
COPY Examples ./Examples
# The @ValueEntry macro builds against the image's /usr/lib/swift/host (Package.swift finds it).
RUN swift build -c release --static-swift-stdlib --product navigation-values \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/navigation-values" /out/navigation-values

# ---- run ----
FROM ubuntu:24.04
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-0 libpq5 libssl3t64 ca-certificates \
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
# NAVIGATION_VALUES_PORT like `serve`, so change the port with that variable, not with --port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["navigation-values", "healthcheck"]
ENTRYPOINT ["navigation-values"]
CMD ["serve", "--host", "0.0.0.0", "--db", "/data/navigation-values.sqlite"]
