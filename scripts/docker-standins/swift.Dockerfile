# Stand-in for the official `swift:6.x-bookworm` image's system packages (the build stage of the
# project's Dockerfile), on the Debian minbase stand-in; scripts/check-docker.sh then copies the
# machine's own Swift toolchain into /usr, where the official image has it.
ARG BASE
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        binutils ca-certificates git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev \
        libncurses-dev libpython3-dev libsqlite3-0 libstdc++-12-dev libxml2-dev libz3-dev pkg-config \
        tzdata unzip zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
CMD ["/bin/bash"]
