#!/usr/bin/env bash
# Builds the image from the real Dockerfile and checks it as users run it, then the compose stack with nginx.
# Run by .ci/run and by `npm run test:container`. Needs root (apt-get, podman). Every check fails loudly.
#
# Machines here reach no container registry, so the base images are made locally: Debian bookworm by
# debootstrap plus the Node 24 binary the project pins (localhost/plant-store-base:node<version>-bookworm,
# docker/ci/common.sh), and nginx, PostgreSQL and Redis from Debian's packages on top. They are kept between
# runs where the machine keeps podman's storage; `podman rmi` removes them (docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/.."

MIRROR="${DEBIAN_MIRROR:-$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
# BASE_IMAGE, NODE_PACKAGE, NODE_VERSION, expect_services_running, remove_project, compose_down.
source docker/ci/common.sh
NGINX_IMAGE=localhost/plant-store-nginx:bookworm
POSTGRES_IMAGE=localhost/plant-store-postgres:bookworm
REDIS_IMAGE=localhost/plant-store-redis:bookworm
IMAGE=localhost/plant-store:smoke
PORT="${SMOKE_PORT:-39123}"
PROXY_PORT="${SMOKE_PROXY_PORT:-39180}"
TOKEN="smoke-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export CONTAINERS_CONF="$PWD/docker/ci/containers.conf"
work=$(mktemp -d)
container=plants-smoke
volume=plants-smoke-data
backups=plants-smoke-backups

# Projects of their own, so a run never touches a stack started by hand from the README (project plant-store).
# podman-compose 1.0 ignores the file's top-level name, so the project is always given with -p.
PROJECT=plant-store-smoke
REPLICAS_PROJECT=plant-store-replicas-smoke
compose() {
  BASE_IMAGE="$BASE_IMAGE" NGINX_IMAGE="$NGINX_IMAGE" PROXY_PORT="$PROXY_PORT" AUTH_TOKENS_SECRET_FILE=./auth_tokens.smoke \
    podman-compose -p "$PROJECT" -f docker/compose.yaml "$@"
}
compose_replicas() {
  BASE_IMAGE="$BASE_IMAGE" NGINX_IMAGE="$NGINX_IMAGE" POSTGRES_IMAGE="$POSTGRES_IMAGE" REDIS_IMAGE="$REDIS_IMAGE" \
    PROXY_PORT="$PROXY_PORT" AUTH_TOKENS_SECRET_FILE=./auth_tokens.smoke \
    podman-compose -p "$REPLICAS_PROJECT" -f docker/compose.replicas.yaml "$@"
}
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
cleanup() {
  podman rm -f -t 0 "$container" "$container-2" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" "$backups" >/dev/null 2>&1 || true
  podman secret rm plants-smoke-tokens >/dev/null 2>&1 || true
  if command -v podman >/dev/null 2>&1; then
    remove_project "$PROJECT"
    remove_project "$REPLICAS_PROJECT"
  fi
  rm -f docker/auth_tokens.smoke
  rm -rf "$work"
}
trap cleanup EXIT
# A signal ends the script through exit, so the EXIT trap removes what it made.
trap 'exit 130' INT
trap 'exit 143' TERM

step "tools"
export DEBIAN_FRONTEND=noninteractive
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
# A tool and the Debian package that brings it.
need=()
for pair in podman:podman buildah:buildah runc:runc debootstrap:debootstrap podman-compose:podman-compose curl:curl \
  iptables:iptables newuidmap:uidmap fuse-overlayfs:fuse-overlayfs; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
# catatonit: the init podman runs for --init and builds its pause image from.
[ -x /usr/libexec/podman/catatonit ] || command -v catatonit >/dev/null 2>&1 || need+=(catatonit)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  # netavark with podman, so a new install uses the netavark network stack rather than CNI.
  if [[ " ${need[*]} " == *" podman "* ]]; then need+=(netavark aardvark-dns); fi
  apt_install "${need[@]}"
fi
podman --version
podman-compose version 2>/dev/null | grep -i 'podman-compose' | head -n 1 || true

# Compose services find each other by name (nginx's upstream is `plants`) only through the network's DNS
# plugin: aardvark-dns under netavark, dnsname under CNI. Without it nginx cannot resolve `plants` and restarts
# in a loop. Checked whenever this runs, not only when podman was just installed.
helper_dirs=(/usr/local/libexec/podman /usr/local/lib/podman /usr/libexec/podman /usr/lib/podman)
cni_dirs=(/usr/local/libexec/cni /usr/libexec/cni /usr/local/lib/cni /usr/lib/cni /opt/cni/bin)
has_file() {
  local name=$1 dir; shift
  for dir in "$@"; do [ -x "$dir/$name" ] && return 0; done
  return 1
}
backend=$(podman info --format '{{.Host.NetworkBackend}}' 2>/dev/null || true)
backend=${backend:-cni}
need=()
if [ "$backend" = netavark ]; then
  has_file netavark "${helper_dirs[@]}" || need+=(netavark)
  has_file aardvark-dns "${helper_dirs[@]}" || need+=(aardvark-dns)
else
  has_file bridge "${cni_dirs[@]}" || need+=(containernetworking-plugins)
  has_file dnsname "${cni_dirs[@]}" || need+=(golang-github-containernetworking-plugin-dnsname)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "network backend $backend: installing ${need[*]}"
  apt_install "${need[@]}"
fi
echo "network backend: $backend, with its DNS plugin"
# A network made while the plugin was missing may keep DNS off: start from none of ours.
remove_project "$PROJECT"
remove_project "$REPLICAS_PROJECT"

step "base image $BASE_IMAGE"
if ! podman image exists "$BASE_IMAGE"; then
  started=$SECONDS
  if ! podman image exists localhost/debian-bookworm-minbase; then
    debootstrap --variant=minbase bookworm "$work/rootfs" "$MIRROR" >/dev/null
    # The downloaded .debs and package lists are not part of a base image.
    rm -rf "$work/rootfs"/var/cache/apt/archives/*.deb "$work/rootfs"/var/cache/apt/*.bin "$work/rootfs"/var/lib/apt/lists/*
    tar -C "$work/rootfs" -c . | podman import - localhost/debian-bookworm-minbase >/dev/null
    rm -rf "$work/rootfs"
  fi
  # The pinned binary: from node_modules when npm ci has put that version there, else from the npm registry.
  mkdir -p "$work/base"
  installed=node_modules/$NODE_PACKAGE
  if [ "$(sed -n 's/^ *"version": "\(.*\)".*/\1/p' "$installed/package.json" 2>/dev/null)" = "$NODE_VERSION" ]; then
    cp "$installed/bin/node" "$work/base/node"
  else
    (cd "$work" && npm pack -q "$NODE_PACKAGE@$NODE_VERSION" >/dev/null && tar -xzf "$NODE_PACKAGE-$NODE_VERSION.tgz")
    cp "$work/package/bin/node" "$work/base/node"
  fi
  # npm is not in the binary's package; the host's (npm 11, as Node 24 ships) runs on Node 24.
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  cp -r "$npm_dir" "$work/base/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$work/base/ca-certificates.crt"
  podman build -q --format docker -f docker/ci/base.Containerfile -t "$BASE_IMAGE" "$work/base" >/dev/null
  echo "base image built in $((SECONDS - started)) s"
fi

step "image from the Dockerfile"
started=$SECONDS
# --format docker: the OCI format has no HEALTHCHECK.
# --jobs 2: the deps and build stages are independent and run side by side.
podman build -q --format docker --jobs 2 --build-arg BASE_IMAGE="$BASE_IMAGE" -t "$IMAGE" . >/dev/null
echo "image built in $((SECONDS - started)) s"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "image size: $((size / 1000000)) MB ($size bytes)"

step "image contents"
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
[ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] || fail "the image runs as '$user', not a non-root user"
uid=$(podman run --rm --entrypoint id "$IMAGE" -u)
[ "$uid" != 0 ] || fail "the container runs as uid 0"
echo "runs as $user (uid $uid)"
dev_deps=$(node -e "console.log(Object.keys(require('./package.json').devDependencies).join(' '))")
podman run --rm --entrypoint sh -e DEV_DEPS="$dev_deps" "$IMAGE" -c '
  set -e
  for dep in $DEV_DEPS; do if [ -e "node_modules/$dep" ]; then echo "dev dependency in the image: $dep"; exit 1; fi; done
  found=$(find / -xdev \( -name "*.ts" ! -name "*.d.ts" -o -name ".env" -o -name "*.test.*" -o -name tests \) \
    ! -path "/proc/*" ! -path "/usr/local/lib/node_modules/npm/*" ! -path "/app/node_modules/*" 2>/dev/null || true)
  if [ -n "$found" ]; then echo "found in the image: $found"; exit 1; fi
  test -d /app/dist && test -f /app/migrations/sqlite/001-create-plants.sql && test -f /app/migrations/postgres/001-create-plants.sql
' || fail "the image holds files it should not (or lacks dist/ or migrations/)"
echo "no dev dependencies, TypeScript sources, .env or tests"

step "run with a token from a mounted secret"
printf '%s\n' "$TOKEN" | podman secret create plants-smoke-tokens - >/dev/null
run_container() {
  # --health-interval disable: no systemd here to run the timer; the check itself runs below by hand.
  podman run -d --name "$1" --health-interval disable -p "127.0.0.1:$PORT:3000" -v "$volume:/data" -v "$backups:/backups" \
    --secret plants-smoke-tokens,target=/run/secrets/auth_tokens -e AUTH_TOKENS_FILE=/run/secrets/auth_tokens \
    "$IMAGE" >/dev/null
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  podman logs "$1" >&2
  fail "/healthz did not answer through the published port"
}
post() {
  curl -sS -o "$work/body" -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/plants" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$1"
}
run_container "$container"
echo "/healthz: $(curl -fsS "http://127.0.0.1:$PORT/healthz")"
pid1=$(podman exec "$container" cat /proc/1/comm)
[ "$pid1" != node ] || fail "node is PID 1: no init to forward signals and reap children"
echo "PID 1: $pid1"
podman healthcheck run "$container" || fail "podman healthcheck run did not report healthy"
echo "healthcheck: healthy"
plant='{"id": 9007199254740993, "name": "Smoke test fern", "tag": "container"}'
status=$(post "$plant")
[ "$status" = 200 ] || fail "create answered $status: $(cat "$work/body")"
echo "created: $(cat "$work/body")"

step "plant-store in the image: an online backup beside the live service, an export with exact ids"
podman exec "$container" plant-store backup --to /backups/smoke.db >"$work/backup.out" 2>&1 \
  || { cat "$work/backup.out" >&2; fail "plant-store backup failed inside the running container"; }
cat "$work/backup.out"
podman exec "$container" sh -c 'ls /backups' | grep -qx 'smoke.db.meta.json' || fail "the backup has no sidecar beside it"
podman exec "$container" plant-store export >"$work/export.ndjson" 2>"$work/export.err" \
  || { cat "$work/export.err" >&2; fail "plant-store export failed inside the running container"; }
grep -q '"id":9007199254740993' "$work/export.ndjson" || fail "the export lost the exact id: $(head -c 300 "$work/export.ndjson")"
echo "export: $(wc -l <"$work/export.ndjson") line(s), id 9007199254740993 exact"

step "podman stop drains and exits 0 within 2 s"
started=$(date +%s%N)
podman stop "$container" >/dev/null
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
echo "stopped in ${elapsed_ms} ms with exit code $code"
[ "$elapsed_ms" -lt 2000 ] || fail "podman stop took ${elapsed_ms} ms: SIGTERM did not reach node (init missing?)"
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
# Into a file first: under pipefail, `podman logs | grep -q` fails whenever grep has matched and left before
# podman writes its next line (podman dies of SIGPIPE), which made this check fail now and then on a good log.
podman logs "$container" >"$work/stop.log" 2>&1
grep -q '"msg":"shutting down: readiness off, draining in-flight requests"' "$work/stop.log" \
  || { tail -n 20 "$work/stop.log" >&2; fail "the log does not show the drain"; }
grep -q '"msg":"stopped"' "$work/stop.log" || { tail -n 20 "$work/stop.log" >&2; fail "the log does not show the clean stop"; }

step "a new container on the same volume still has the plant"
podman rm "$container" >/dev/null
run_container "$container-2"
status=$(post "$plant")
[ "$status" = 200 ] || fail "the identical plant answered $status after the restart: $(cat "$work/body")"
status=$(post '{"id": 9007199254740993, "name": "Another fern"}')
grep -q '"error":40007' "$work/body" && [ "$status" = 400 ] || fail "the stored plant is gone: a conflicting create answered $status $(cat "$work/body")"
echo "survived: identical create 200, conflicting create 400 (40007)"
status=$(post '{"id": 7, "name": "Created after the backup"}')
[ "$status" = 200 ] || fail "create after the backup answered $status: $(cat "$work/body")"
podman stop "$container-2" >/dev/null
podman rm "$container-2" >/dev/null

step "plant-store restore in a one-off container on the stopped service's volumes"
one_off() { podman run --rm --entrypoint plant-store -v "$volume:/data" -v "$backups:/backups" "$IMAGE" "$@"; }
one_off restore --from /backups/smoke.db >"$work/restore.out" 2>&1 \
  || { cat "$work/restore.out" >&2; fail "plant-store restore failed"; }
cat "$work/restore.out"
grep -q 'kept the store that was at' "$work/restore.out" || fail "restore did not say where it kept the replaced store"
one_off export >"$work/restored.ndjson" 2>"$work/export.err" || { cat "$work/export.err" >&2; fail "export after restore failed"; }
grep -q '"id":9007199254740993' "$work/restored.ndjson" || fail "the restored store lacks the backed-up plant"
! grep -q '"id":7,' "$work/restored.ndjson" || fail "the restored store still has the plant created after the backup"
echo "restored: the backup's plants, without the one created after it"
podman volume rm "$volume" "$backups" >/dev/null

step "compose stack: nginx in front of the service"
if ! podman image exists "$NGINX_IMAGE"; then
  podman build -q --format docker --build-arg BASE_IMAGE="$BASE_IMAGE" -f docker/ci/nginx.Containerfile -t "$NGINX_IMAGE" docker/ci >/dev/null
fi
# Tenants are on in both stacks (TENANT_CLAIM): each token line names its tenant.
printf '%s tenant=alice\n' "$TOKEN" > docker/auth_tokens.smoke
# The image just checked is the one compose runs (its build section names the same Dockerfile).
podman tag "$IMAGE" localhost/plant-store:local
compose_up_with_idp "$PROJECT" "$PROXY_PORT" compose >"$work/compose.out" 2>&1 \
  || { cat "$work/compose.out" >&2; fail "podman-compose up failed"; }
expect_services_running "$PROJECT" docker/compose.yaml || { cat "$work/compose.out" >&2; fail "the stack did not start"; }
ok=
for _ in $(seq 1 150); do
  status=$(curl -sS -o "$work/body" -w '%{http_code}' -X POST "http://127.0.0.1:$PROXY_PORT/api/plants" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'X-Request-Id: smoke-through-nginx' \
    -d '{"id": 42, "name": "Proxied palm"}' 2>/dev/null) || true
  if [ "$status" = 200 ]; then ok=1; break; fi
  sleep 0.2
done
[ -n "$ok" ] || { compose logs >&2 || true; fail "no 200 through nginx (last status $status)"; }
echo "through nginx: $(cat "$work/body")"
service=$(podman ps --filter label=com.docker.compose.project=$PROJECT --filter label=com.docker.compose.service=plants --format '{{.Names}}' | head -n 1)
proxy=$(podman ps --filter label=com.docker.compose.project=$PROJECT --filter label=com.docker.compose.service=proxy --format '{{.Names}}' | head -n 1)
[ -n "$service" ] && [ -n "$proxy" ] || fail "compose containers not found (service '$service', proxy '$proxy')"
proxy_ip=$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$proxy")
# What nginx saw as the client (first field of its access log line), against what the service logged.
# At several workers (WORKERS=auto) a worker's line reaches the container's log through the supervisor's batched
# stdout, a moment after the answer: wait for both lines, up to 10 s.
seen_by_nginx='' line=''
for _ in $(seq 1 50); do
  seen_by_nginx=$(podman logs "$proxy" 2>/dev/null | grep '"POST /api/plants' | tail -n 1 | cut -d' ' -f1 || true)
  line=$(podman logs "$service" 2>&1 | grep '"reqId":"smoke-through-nginx"' | tail -n 1 || true)
  [ -n "$seen_by_nginx" ] && [ -n "$line" ] && break
  sleep 0.2
done
client_ip=$(printf '%s' "$line" | sed -n 's/.*"ip":"\([^"]*\)".*/\1/p')
echo "service log: ip $client_ip; nginx saw the client as $seen_by_nginx; nginx itself is $proxy_ip"
[ -n "$client_ip" ] || fail "no request line for the proxied request: $line"
[ "$client_ip" != "$proxy_ip" ] || fail "the service logged the proxy's address $proxy_ip, not the client's: TRUST_PROXY not applied"
[ "$client_ip" = "$seen_by_nginx" ] || fail "the service logged $client_ip, nginx saw the client as $seen_by_nginx"
compose_down "$PROJECT" compose || fail "the stack left something behind"

step "replicas: PostgreSQL, Redis, two replicas and nginx; one replica stopped and started under creates"
for kind in postgres redis; do
  image_var="$(printf '%s' "$kind" | tr a-z A-Z)_IMAGE"
  if ! podman image exists "${!image_var}"; then
    started=$SECONDS
    podman build -q --format docker --build-arg BASE_IMAGE="$BASE_IMAGE" -f "docker/ci/$kind.Containerfile" -t "${!image_var}" docker/ci >/dev/null
    echo "$kind image built in $((SECONDS - started)) s"
  fi
done
printf '%s tenant=alice\n' "$TOKEN" > docker/auth_tokens.smoke
compose_replicas up -d >"$work/replicas.out" 2>&1 \
  || { cat "$work/replicas.out" >&2; fail "podman-compose up of the replicas failed"; }
expect_services_running "$REPLICAS_PROJECT" docker/compose.replicas.yaml \
  || { cat "$work/replicas.out" >&2; fail "the replicas stack did not start"; }
replica() {
  podman ps -a --filter label=com.docker.compose.project=$REPLICAS_PROJECT --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | head -n 1
}
replica1=$(replica plants-1)
replica2=$(replica plants-2)
db=$(replica postgres)
[ -n "$replica1" ] && [ -n "$replica2" ] && [ -n "$db" ] || fail "replica stack containers not found"
create() {
  curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PROXY_PORT/plants" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "{\"id\": $1, \"name\": \"Replica fern $1\"}" 2>/dev/null || true
}
ok=
for _ in $(seq 1 300); do
  [ "$(create 1)" = 200 ] && { ok=1; break; }
  sleep 0.2
done
[ -n "$ok" ] || { compose_replicas logs >&2 || true; fail "no 200 through nginx in front of the replicas"; }
: > "$work/created"
others=0
burst() {
  for id in $(seq "$1" "$2"); do
    status=$(create "$id")
    if [ "$status" = 200 ]; then echo "$id" >> "$work/created"; else others=$((others + 1)); fi
  done
}
burst 1000 1049
podman stop "$replica1" >/dev/null &
stopping=$!
burst 1050 1149
wait "$stopping"
[ "$(podman inspect --format '{{.State.Running}}' "$replica1")" = false ] || fail "$replica1 did not stop"
burst 1150 1199
podman start "$replica1" >/dev/null
burst 1200 1299
created=$(wc -l < "$work/created")
echo "creates through nginx: $created answered 200, $others other answers, one replica stopped and started in between"
[ "$created" -ge 200 ] || fail "only $created of 300 creates answered 200 while one replica was stopped and started"
ids=$(paste -sd, "$work/created")
stored=$(podman exec "$db" psql -U plants -d plants -tAc "SELECT count(*) FROM plants WHERE id IN ($ids)")
[ "$stored" = "$created" ] || fail "$created creates answered 200 but $stored of them are in PostgreSQL"
for id in $(shuf -n 20 "$work/created"); do
  [ "$(create "$id")" = 200 ] || fail "plant $id answered 200 once but its identical retry did not"
done
for name in "$replica1" "$replica2"; do
  served=$(podman logs "$name" 2>&1 | grep -c '"msg":"request"' || true)
  echo "$name logged $served requests"
  [ "$served" -gt 0 ] || fail "$name served no request: nginx does not balance"
done
echo "every 200 is in PostgreSQL and its retry answers 200 through either replica"
compose_down "$REPLICAS_PROJECT" compose_replicas || fail "the replicas stack left something behind"

printf '\nsmoke: all container checks passed (image %s MB)\n' "$((size / 1000000))"
