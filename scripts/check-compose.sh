#!/usr/bin/env bash
# What can be checked of docker-compose.yml without a Docker engine (scripts/check-docker.sh runs
# it): the YAML parses and has the services it promises, every instance reads its database from
# NAVIGATION_VALUES_DB as a postgres:// URL and its admin token from a secret's file, and
# deploy/nginx.conf passes `nginx -t` (its upstream names resolved to
# 127.0.0.1 for the check, as Docker's DNS would resolve them to the instances).
#
#   scripts/check-compose.sh [PYTHON]     (a Python with PyYAML; default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}

"$python" - <<'PY'
import yaml
with open("docker-compose.yml") as f:
    compose = yaml.safe_load(f)
services = compose["services"]
assert set(services) == {"postgres", "instance-a", "instance-b", "balancer"}, sorted(services)
for name in ("instance-a", "instance-b"):
    environment = services[name]["environment"]
    assert environment["NAVIGATION_VALUES_DB"].startswith("postgres://"), name
    assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy", name
    # The admin token comes from a secret's file, never from a value in the file or the environment.
    assert environment["NAVIGATION_VALUES_ADMIN_TOKEN_FILE"] == "/run/secrets/admin-token", name
    assert "NAVIGATION_VALUES_ADMIN_TOKEN" not in environment, name
    assert services[name]["secrets"] == ["admin-token"], name
assert "file" in compose["secrets"]["admin-token"]
assert services["balancer"]["ports"] == ["${BALANCER_PORT:-8080}:8080", "${BALANCER_TLS_PORT:-8443}:8443"]
assert "${NAVIGATION_VALUES_TLS_DIR:-./secrets/tls}:/etc/nginx/tls:ro" in services["balancer"]["volumes"]
print("docker-compose.yml: services", ", ".join(sorted(services)))
PY

command -v nginx >/dev/null 2>&1 || { echo "check-compose: nginx is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A throwaway pair where the compose file mounts the real one (nginx -t loads it).
scripts/make-test-ca.sh "$work"
sed -e 's/server instance-[ab]:8080/server 127.0.0.1:8080/' -e "s|^worker_processes auto;|worker_processes auto;\npid $work/nginx.pid;|" \
    -e "s|/etc/nginx/tls/|$work/|" deploy/nginx.conf >"$work/nginx.conf"
nginx -t -q -c "$work/nginx.conf" -e "$work/error.log" -g "error_log $work/error.log;"
echo "deploy/nginx.conf: nginx -t passed"
