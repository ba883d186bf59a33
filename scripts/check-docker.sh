#!/usr/bin/env bash
# The Docker deployment, built and run: the Dockerfile's image, then docker-compose.yml's
# PostgreSQL, two instances and nginx. Needs root (it starts dockerd when none runs).
#
#   scripts/check-docker.sh
#
# What it does, each step timed:
#   1. installs Debian's docker.io, docker-compose and debootstrap when missing; starts dockerd when
#      none answers, and stops it on exit (only the one it started);
#   2. builds stand-ins for the registry's images, which cannot be pulled here, from Debian's
#      packages: debian:bookworm-slim (a debootstrap minbase root), swift:6.x-bookworm (that root,
#      the official image's packages and this machine's Swift toolchain), postgres and nginx
#      (scripts/docker-standins). Kept in Docker's image store and the minbase root as a tarball in
#      $NAVIGATION_VALUES_DOCKER_CACHE (default ~/.cache/navigation-values-docker), so a second run
#      builds none of them;
#   3. builds the image from the Dockerfile with those as its base images (build arguments), with
#      the SwiftPM mirrors in its context when this machine has some (scripts/swiftpm-mirrors.sh);
#   4. runs it with its admin token in a file: HEALTHCHECK reports healthy, the server runs as the
#      image's non-root user, a session created survives `docker restart` (read back from the
#      volume), and `docker stop` ends it with status 0 within 10 s; then once more serving HTTPS
#      with a certificate from an authority made here (mounted files named by variables), which
#      its HEALTHCHECK and curl --cacert reach;
#   5. `docker-compose up`: sessions written through the balancer (both instances take some; a
#      client's X-Request-Id kept, X-Forwarded-For logged as the client, a 2 MiB import let through
#      to the server, HTTPS terminated by nginx with a certificate from an authority made here),
#      one instance killed, every session still served by the other; `docker-compose down -v`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

started=$SECONDS
step_start=$SECONDS
timings=()
step() {
    local took=$((SECONDS - step_start))
    timings+=("$(printf '%4ds  %s' "$took" "$1")")
    echo "check-docker: $1 (${took}s)"
    step_start=$SECONDS
}
fail() {
    echo "check-docker: $*" >&2
    exit 1
}

# ---- 1. Docker itself ----
need=()
command -v docker >/dev/null 2>&1 || need+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
# The classic builder, which Debian's engine and docker-compose 1.29 both use (no buildx here).
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0

work=$(mktemp -d /tmp/nv-check-docker.XXXXXX)
# deploy/swiftpm-mirrors holds the mirrors only while the image builds (scripts/swiftpm-mirrors.sh).
empty_mirrors() { find deploy/swiftpm-mirrors -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +; }
dockerd_pid=""
container=""
compose_project=""
cleanup() {
    set +e
    if [ -n "$container" ]; then docker rm -f -v "$container" >/dev/null 2>&1; fi
    if [ -n "$compose_project" ]; then
        (cd "$root" && docker-compose -p "$compose_project" down -v --remove-orphans >/dev/null 2>&1)
    fi
    docker volume rm -f "nv-check-data-$$" >/dev/null 2>&1
    (cd "$root" && empty_mirrors)
    if [ -n "$dockerd_pid" ]; then
        kill -TERM "$dockerd_pid" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -rf "$work"
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
    dockerd >"$work/dockerd.log" 2>&1 &
    dockerd_pid=$!
    for _ in $(seq 150); do
        docker info >/dev/null 2>&1 && break
        kill -0 "$dockerd_pid" 2>/dev/null || { cat "$work/dockerd.log" >&2; fail "dockerd exited"; }
        sleep 0.2
    done
    docker info >/dev/null 2>&1 || { tail -20 "$work/dockerd.log" >&2; fail "dockerd does not answer"; }
fi
docker version --format 'docker: client {{.Client.Version}}, engine {{.Server.Version}}'
docker-compose version --short | sed 's/^/docker-compose: /'
step "docker ready"

# ---- 2. Stand-ins for the registry's images ----
# Their tags carry a recipe number (raise it when a stand-in's recipe changes) and, for the build
# stage, the toolchain's version.
recipe=1
cache=${NAVIGATION_VALUES_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/navigation-values-docker}
mkdir -p "$cache"
has_image() { docker image inspect "$1" >/dev/null 2>&1; }

debian_image=navigation-values-standin/debian:bookworm-slim-$recipe
if ! has_image "$debian_image"; then
    if ! [ -s "$cache/bookworm-minbase.tar.gz" ]; then
        rootfs="$work/rootfs"
        debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
            || { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap failed"; }
        rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
        tar -C "$rootfs" -czf "$cache/bookworm-minbase.tar.gz.partial" .
        mv "$cache/bookworm-minbase.tar.gz.partial" "$cache/bookworm-minbase.tar.gz"
        rm -rf "$rootfs"
    fi
    docker import --change 'CMD ["/bin/bash"]' "$cache/bookworm-minbase.tar.gz" "$debian_image" >/dev/null
fi
step "stand-in debian:bookworm-slim ($debian_image)"

swift_bin=$(readlink -f "$(command -v swift)")
toolchain=$(cd "$(dirname "$swift_bin")/.." && pwd)  # the folder holding bin/ and lib/ (/opt/swift/usr)
swift_version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -n 1)
[ -n "$swift_version" ] || fail "cannot read the Swift toolchain's version"
swift_image=navigation-values-standin/swift:$swift_version-bookworm-$recipe
if ! has_image "$swift_image"; then
    docker build -q --build-arg BASE="$debian_image" -f scripts/docker-standins/swift.Dockerfile \
        -t "$swift_image-packages" scripts/docker-standins >/dev/null
    # The toolchain goes to /usr, as in the official image, without what a build never runs
    # (debugger, editor and documentation tools, the embedded and WebAssembly runtimes).
    docker rm -f "nv-standin-swift-$$" >/dev/null 2>&1 || true
    docker run --name "nv-standin-swift-$$" -v "$toolchain:/toolchain:ro" "$swift_image-packages" sh -c '
        tar -C /toolchain -cf - \
            --exclude=./bin/lldb* --exclude=./lib/liblldb* --exclude=./bin/sourcekit-lsp \
            --exclude=./lib/libsourcekitdInProc.so --exclude=./lib/libSwiftSourceKit* --exclude=./bin/docc \
            --exclude=./share/docc --exclude=./bin/clangd --exclude=./bin/swift-format \
            --exclude=./lib/swift/embedded --exclude=./bin/wasmkit . \
        | tar -C /usr -xf - && swift --version'
    docker commit --change 'CMD ["/bin/bash"]' "nv-standin-swift-$$" "$swift_image" >/dev/null
    docker rm "nv-standin-swift-$$" >/dev/null
    docker rmi "$swift_image-packages" >/dev/null
fi
step "stand-in swift:$swift_version-bookworm ($swift_image)"

postgres_image=navigation-values-standin/postgres:15-bookworm-$recipe
nginx_image=navigation-values-standin/nginx:bookworm-$recipe
standin() {  # IMAGE RECIPE: builds scripts/docker-standins/RECIPE.Dockerfile as IMAGE unless it is there
    has_image "$1" || docker build -q --build-arg BASE="$debian_image" -f "scripts/docker-standins/$2.Dockerfile" \
        -t "$1" scripts/docker-standins >/dev/null
}
standin "$postgres_image" postgres
standin "$nginx_image" nginx
step "stand-ins postgres and nginx"

# ---- 3. The image ----
image=navigation-values:check
previous=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
scripts/swiftpm-mirrors.sh --export deploy/swiftpm-mirrors
docker build --build-arg SWIFT_IMAGE="$swift_image" --build-arg RUNTIME_IMAGE="$debian_image" -t "$image" . \
    >"$work/build.log" 2>&1 || { tail -40 "$work/build.log" >&2; fail "docker build failed"; }
empty_mirrors  # the build has them; the folder holds its README alone again
# What earlier runs left: the image this one replaced, and their build stages (untagged, 3 GB
# each); the newest build stage stays, the cache of the next build.
if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect -f '{{.Id}}' "$image")" ]; then
    docker rmi "$previous" >/dev/null 2>&1 || true
fi
docker images -q --filter dangling=true --filter label=org.navigation-values.stage=build | tail -n +2 \
    | xargs -r docker rmi >/dev/null 2>&1 || true
grep -E '^(Step|Successfully)' "$work/build.log" | tail -3
docker image inspect -f 'image: {{.Size}} bytes' "$image"
step "docker build"

# ---- 4. The image, run ----
# A loopback port nothing listens on, for the container's published port.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_healthy() {
    local status=""
    for _ in $(seq 120); do
        status=$(docker inspect -f '{{.State.Health.Status}}' "$1")
        [ "$status" = healthy ] && return 0
        [ "$(docker inspect -f '{{.State.Running}}' "$1")" = true ] || { docker logs "$1" >&2; fail "$1 exited"; }
        sleep 0.5
    done
    docker logs "$1" >&2
    fail "$1 is '$status', not healthy, after 60 s"
}
# The admin token as a Docker secret would be: a file mounted read-only, named by a *_FILE variable.
token=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
printf '%s\n' "$token" >"$work/admin-token"
chmod 0644 "$work/admin-token"
port=$(free_port)
container=nv-check-$$
# The image's HEALTHCHECK command, checked every second rather than every 30 s.
docker run -d --name "$container" -p "127.0.0.1:$port:8080" -v "nv-check-data-$$:/data" \
    -v "$work/admin-token:/run/secrets/admin-token:ro" -e NAVIGATION_VALUES_ADMIN_TOKEN_FILE=/run/secrets/admin-token \
    --health-interval 1s --health-start-period 10s "$image" >/dev/null
wait_healthy "$container"
step "docker run: healthy"

uid=$(docker exec "$container" sh -c "sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/1/status")
[ "$uid" = 10001 ] || fail "the server runs as uid '$uid', not the image's user 10001"
echo "server process uid: $uid"
base="http://127.0.0.1:$port"
session=$(curl -sS -f -X POST "$base/v1/sessions" -H 'Content-Type: application/json' \
    -d '{"root": {"name": "Home", "values": {"text": "kept"}}}')
id=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$session")
curl -sS -f -o "$work/before.json" -H "Authorization: Bearer $token" "$base/v1/sessions/$id"
curl -sS -f -o /dev/null -H "Authorization: Bearer $token" "$base/v1/sessions"  # the token from the file works
docker restart "$container" >/dev/null
wait_healthy "$container"
curl -sS -f -o "$work/after.json" -H "Authorization: Bearer $token" "$base/v1/sessions/$id"
cmp -s "$work/before.json" "$work/after.json" || fail "session $id differs after docker restart"
echo "session $id read back after docker restart"
step "non-root, a session kept across docker restart"

stop_started=$(date +%s.%N)
docker stop "$container" >/dev/null
stop_took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$stop_started" "$(date +%s.%N)")
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$container")
echo "docker stop: ${stop_took}s, exit status $exit_code"
[ "$exit_code" = 0 ] || { docker logs "$container" 2>&1 | tail -20 >&2; fail "exit status $exit_code after docker stop"; }
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)" "$stop_took" || fail "docker stop took ${stop_took}s"
docker rm -v "$container" >/dev/null
container=""
docker volume rm "nv-check-data-$$" >/dev/null
step "docker stop"

# An authority made here, and a certificate it signs for localhost: for the image serving HTTPS
# now, and for nginx in front of the compose file's instances below.
scripts/make-test-ca.sh "$work/secrets/tls"
mv "$work/secrets/tls/ca.pem" "$work/ca.pem"  # what curl trusts; the authority's key goes
rm "$work/secrets/tls/ca.key"
chmod 0644 "$work/secrets/tls/key.pem"  # read by the image's user, 10001, through the mount

# The image serving HTTPS: the pair mounted read-only, named by NAVIGATION_VALUES_TLS_CERT and
# _KEY, which the HEALTHCHECK reads too (it then speaks HTTPS).
port=$(free_port)
container=nv-check-tls-$$
docker run -d --name "$container" -p "127.0.0.1:$port:8080" -v "$work/secrets/tls:/run/tls:ro" \
    -e NAVIGATION_VALUES_TLS_CERT=/run/tls/cert.pem -e NAVIGATION_VALUES_TLS_KEY=/run/tls/key.pem \
    --health-interval 1s --health-start-period 10s "$image" >/dev/null
wait_healthy "$container"
curl -sS -f -o /dev/null --cacert "$work/ca.pem" "https://localhost:$port/healthz" \
    || { docker logs "$container" >&2; fail "the image does not answer over HTTPS"; }
docker logs "$container" 2>&1 | grep -q 'info tls subject=' || fail "the image did not log its certificate"
echo "the image serves HTTPS (healthy; curl --cacert answered)"
docker rm -f -v "$container" >/dev/null
container=""
step "docker run: HTTPS"

# ---- 5. docker-compose.yml ----
compose_project=nvcheck$$
balancer_port=$(free_port)
balancer_tls_port=$(free_port)
cp "$work/admin-token" "$work/secrets/admin-token"
export NAVIGATION_VALUES_IMAGE="$image" POSTGRES_IMAGE="$postgres_image" NGINX_IMAGE="$nginx_image"
export BALANCER_PORT="127.0.0.1:$balancer_port" BALANCER_TLS_PORT="127.0.0.1:$balancer_tls_port" POSTGRES_PASSWORD="$token"
export NAVIGATION_VALUES_ADMIN_TOKEN_SECRET="$work/secrets/admin-token" NAVIGATION_VALUES_TLS_DIR="$work/secrets/tls"
compose() { docker-compose -p "$compose_project" "$@"; }
compose up -d --no-build >"$work/compose-up.log" 2>&1 || { cat "$work/compose-up.log" >&2; fail "docker-compose up failed"; }
base="http://127.0.0.1:$balancer_port"
for _ in $(seq 240); do
    curl -s -f -o /dev/null "$base/readyz" && break
    sleep 0.5
done
curl -sS -f -o /dev/null "$base/readyz" || { compose logs >&2; fail "no ready instance behind the balancer"; }
step "docker-compose up"

ids=()
for n in $(seq 10); do
    session=$(curl -sS -f -X POST "$base/v1/sessions" -H 'Content-Type: application/json' \
        -d "{\"root\": {\"name\": \"Home\", \"values\": {\"n\": $n}}}")
    ids+=("$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$session")")
done
# Round robin: both instances took some (their JSON request logs).
served_a=$(compose logs --no-color instance-a | grep -c '"method":"POST","route":"/v1/sessions"' || true)
served_b=$(compose logs --no-color instance-b | grep -c '"method":"POST","route":"/v1/sessions"' || true)
echo "${#ids[@]} sessions written through the balancer: instance-a $served_a, instance-b $served_b"
[ "$served_a" -gt 0 ] && [ "$served_b" -gt 0 ] || fail "the balancer did not spread the sessions over both instances"
# deploy/nginx.conf keeps a client's X-Request-Id, passes X-Forwarded-For (which the instances
# trust from it), and lets a body over 1 MiB through to the server, which judges it (problem+json).
request_id=check-docker-$$
answer=$(curl -sS -D - -o /dev/null -X POST "$base/v1/sessions" -H 'Content-Type: application/json' \
    -H "X-Request-Id: $request_id" -H 'X-Forwarded-For: 203.0.113.9' -d '{}')
echo "$answer" | grep -qi "^X-Request-Id: $request_id" || fail "the balancer did not keep the client's X-Request-Id"
sleep 1  # the instances' log writers
compose logs --no-color instance-a instance-b | grep -F "\"request_id\":\"$request_id\"" | grep -qF '"client":"203.0.113.9"' \
    || fail "the instance did not log the client nginx forwarded (X-Forwarded-For)"
# An export is NDJSON: one line of 2 MiB that is not one, which the server refuses (4xx problem+json).
python3 -c 'print("{\"export\": \"" + "a" * 2 * 1024 * 1024 + "\"}")' >"$work/large.ndjson"
large=$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' -X POST "$base/v1/sessions/import" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/x-ndjson' --data-binary "@$work/large.ndjson")
case "$large" in
    413*|*text/html*) fail "a 2 MiB import stopped at the balancer: $large" ;;
    *application/problem+json*) ;;
    *) fail "a 2 MiB import: $large" ;;
esac
echo "X-Request-Id kept, X-Forwarded-For logged as the client, a 2 MiB import reaches the server ($large)"
# HTTPS terminated by nginx: a session written through the balancer read back over it.
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" -H "Authorization: Bearer $token" \
    "https://localhost:$balancer_tls_port/v1/sessions/${ids[0]}")
[ "$code" = 200 ] || { compose logs balancer >&2; fail "over HTTPS through the balancer: $code"; }
echo "HTTPS through nginx: session ${ids[0]} read back ($code)"
compose kill instance-a >/dev/null 2>&1
[ "$(docker inspect -f '{{.State.Running}}' "${compose_project}_instance-a_1")" = false ] || fail "instance-a still runs"
for round in 1 2; do
    for id in "${ids[@]}"; do
        code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $token" "$base/v1/sessions/$id")
        [ "$code" = 200 ] || { compose logs >&2; fail "session $id: $code after instance-a was killed (round $round)"; }
    done
done
echo "every session served by instance-b alone"
step "docker-compose: an instance killed, every session still served"

compose down -v >"$work/compose-down.log" 2>&1 || { cat "$work/compose-down.log" >&2; fail "docker-compose down failed"; }
compose_project=""
step "docker-compose down -v"

echo "check-docker: timings"
printf '%s\n' "${timings[@]}"
echo "check-docker: ok in $((SECONDS - started))s"
