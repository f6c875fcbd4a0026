#!/usr/bin/env bash
# The compose stack as a front-end developer meets it: the example app at / and the service at /api/ on one
# port, through nginx. Run by .ci/run after docker/smoke.sh, whose local base, nginx and service images it
# reuses (localhost/plant-store-base, localhost/plant-store-nginx, localhost/plant-store:local). Needs podman,
# podman-compose and curl; every check fails loudly and the stack is torn down on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

# BASE_IMAGE (the stand-in smoke.sh built from the pinned Node), expect_services_running, remove_project,
# compose_down.
source docker/ci/common.sh
NGINX_IMAGE=localhost/plant-store-nginx:bookworm
PROXY_PORT="${SMOKE_PROXY_PORT:-39181}"
TOKEN="smoke-web-token-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export CONTAINERS_CONF="$PWD/docker/ci/containers.conf"
work=$(mktemp -d)
base="http://127.0.0.1:$PROXY_PORT"

compose() {
  BASE_IMAGE="$BASE_IMAGE" NGINX_IMAGE="$NGINX_IMAGE" PROXY_PORT="$PROXY_PORT" AUTH_TOKENS_SECRET_FILE=./auth_tokens.smoke-web \
    podman-compose -p plant-store-web -f docker/compose.yaml "$@"
}
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
cleanup() {
  if [ -f docker/.smoke-web-up ]; then
    compose down -v >/dev/null 2>&1 || true
    remove_project plant-store-web
    rm -f docker/.smoke-web-up
  fi
  rm -f docker/auth_tokens.smoke-web
  rm -rf "$work"
}
trap cleanup EXIT

step "images from docker/smoke.sh"
for image in "$BASE_IMAGE" "$NGINX_IMAGE" localhost/plant-store:local; do
  podman image exists "$image" || fail "$image is missing: run bash docker/smoke.sh first"
done

step "compose stack: the example app at /, the service at /api/ (the proxy image builds the app)"
# Tenants are on (TENANT_CLAIM: sub): the token line names its tenant, alice's, where the users' JWTs name theirs.
printf '%s tenant=alice\n' "$TOKEN" > docker/auth_tokens.smoke-web
touch docker/.smoke-web-up
started=$SECONDS
# Built here every run: podman-compose builds an image only when it is missing, and one left by an earlier run
# would hold an older app.
podman build -q --format docker --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg NGINX_IMAGE="$NGINX_IMAGE" \
  -f docker/web.Containerfile -t localhost/plant-store-web:local . >/dev/null || fail "the proxy image (docker/web.Containerfile) did not build"
compose_up_with_idp plant-store-web "$PROXY_PORT" compose >"$work/up.out" 2>&1 || { cat "$work/up.out" >&2; fail "podman-compose up failed"; }
expect_services_running plant-store-web docker/compose.yaml || { cat "$work/up.out" >&2; fail "the stack did not start"; }
ok=
for _ in $(seq 1 300); do
  status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base/api/healthz" 2>/dev/null) || true
  if [ "$status" = 200 ]; then ok=1; break; fi
  sleep 0.2
done
[ -n "$ok" ] || { compose logs >&2 || true; fail "/api/healthz did not answer 200 through port $PROXY_PORT (last $status)"; }
echo "stack up in $((SECONDS - started)) s"

step "GET / is the example app"
status=$(curl -sS -D "$work/index.headers" -o "$work/index.html" -w '%{http_code} %{content_type}' "$base/")
[ "$status" = "200 text/html" ] || fail "GET / answered $status"
grep -q '<title>Plant Store</title>' "$work/index.html" || fail "GET / is not the example app: $(head -c 300 "$work/index.html")"
# The page holds a bearer token: nginx serves it under a strict policy (docs/decisions/containers-and-the-proxy.md).
tr -d '\r' < "$work/index.headers" | grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" || fail "GET / has no strict Content-Security-Policy"
tr -d '\r' < "$work/index.headers" | grep -qi '^x-content-type-options: nosniff' || fail "GET / has no X-Content-Type-Options: nosniff"
script=$(sed -n 's/.*<script type="module" crossorigin src="\([^"]*\)".*/\1/p' "$work/index.html" | head -n 1)
[ -n "$script" ] || fail "no module script in the app's index.html"
status=$(curl -sS -o "$work/app.js" -w '%{http_code} %{content_type}' "$base$script")
[ "$status" = "200 text/javascript" ] || fail "GET $script answered $status (a module script needs a JavaScript type)"
echo "app: index.html and $script ($(wc -c < "$work/app.js") bytes)"

step "GET /api/plants with a token, an exact id past 2^53, and the Link under /api"
for id in 9007199254740993 9007199254740994; do
  status=$(curl -sS -o "$work/body" -w '%{http_code}' -X POST "$base/api/plants" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "{\"id\": $id, \"name\": \"Web smoke $id\"}")
  [ "$status" = 200 ] || fail "POST /api/plants $id answered $status: $(cat "$work/body")"
done
status=$(curl -sS -D "$work/headers" -o "$work/body" -w '%{http_code}' "$base/api/plants?limit=1" -H "Authorization: Bearer $TOKEN")
[ "$status" = 200 ] || fail "GET /api/plants answered $status: $(cat "$work/body")"
grep -q '"id":9007199254740993,' "$work/body" || fail "GET /api/plants did not answer the exact id: $(cat "$work/body")"
link=$(tr -d '\r' < "$work/headers" | sed -n 's/^[Ll]ink: <\([^>]*\)>.*/\1/p')
[ "$link" = "/api/plants?limit=1&after=9007199254740993" ] || fail "the next link is '$link', not under /api/"
status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base$link" -H "Authorization: Bearer $TOKEN")
[ "$status" = 200 ] && grep -q '"id":9007199254740994,' "$work/body" || fail "following the Link answered $status: $(cat "$work/body")"
status=$(curl -sS -o "$work/body" -w '%{http_code}' "$base/api/plants")
[ "$status" = 401 ] || fail "GET /api/plants without a token answered $status"
echo "through /api/: exact ids, Link followed verbatim, 401 without a token"

step "sign in with the demo identity provider at /idp/ (code flow with PKCE, as the app does), and the service takes its JWT"
grep -q '/idp' "$work/app.js" || fail "the app was not built to sign in at /idp (VITE_OIDC_ISSUER)"
# The provider's issuer is http://localhost:<port>/idp (docker/compose.yaml): asked under that name, on 127.0.0.1.
site="http://localhost:$PROXY_PORT"
# Prints the access token of a user signed in through the provider's page, as the app does (code flow, PKCE).
sign_in() {
  local user=$1 verifier challenge next status code
  local at=(--resolve "localhost:$PROXY_PORT:127.0.0.1" -c "$work/cookies.$user" -b "$work/cookies.$user")
  verifier=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
  challenge=$(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(process.argv[1]).digest("base64url"))' "$verifier")
  next=$(curl -sS "${at[@]}" -o /dev/null -w '%{redirect_url}' \
    "$site/idp/auth?client_id=plant-store-web&response_type=code&scope=openid%20plants%3Aread%20plants%3Awrite&redirect_uri=http%3A%2F%2Flocalhost%3A$PROXY_PORT%2F&state=smoke&code_challenge=$challenge&code_challenge_method=S256")
  case "$next" in "$site/idp/interaction/"*) ;; *) compose logs >&2 || true; fail "the authorization request led to '$next', not the provider's sign-in page" ;; esac
  status=$(curl -sS "${at[@]}" -D "$work/login.headers" -o "$work/login.html" -w '%{http_code}' "$next")
  [ "$status" = 200 ] && grep -q 'id="idp-login"' "$work/login.html" || fail "the sign-in page answered $status"
  tr -d '\r' < "$work/login.headers" | grep -qi "^content-security-policy: default-src 'none'; form-action 'self'" || fail "the sign-in page has no strict policy"
  next=$(curl -sS "${at[@]}" -o /dev/null -w '%{redirect_url}' -d "username=$user" -d password=plants "$next/login")
  next=$(curl -sS "${at[@]}" -o /dev/null -w '%{redirect_url}' "$next")
  code=$(printf '%s' "$next" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
  case "$next" in "$site/?"*) ;; *) code= ;; esac
  [ -n "$code" ] || fail "signing in as $user came back to '$next', not the app with a code"
  curl -sS "${at[@]}" -o "$work/tokens.$user.json" -d grant_type=authorization_code -d client_id=plant-store-web \
    --data-urlencode "redirect_uri=$site/" --data-urlencode "code=$code" -d "code_verifier=$verifier" "$site/idp/token"
  sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p' "$work/tokens.$user.json"
}
token=$(sign_in alice)
[ -n "$token" ] || fail "the token endpoint gave alice no access token: $(cat "$work/tokens.alice.json")"
status=$(curl -sS -o "$work/body" -w '%{http_code}' -X POST "$base/api/plants" \
  -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"id": 77, "name": "Signed-in fern"}')
[ "$status" = 200 ] || fail "POST /api/plants with alice's access token answered $status: $(cat "$work/body")"
echo "signed in as alice through /idp/; her JWT created plant 77 through /api/"

step "tenants (TENANT_CLAIM: sub): alice and bob each create plant 1 and each lists only their own"
bob=$(sign_in bob)
[ -n "$bob" ] || fail "the token endpoint gave bob no access token: $(cat "$work/tokens.bob.json")"
for user in alice bob; do
  if [ "$user" = alice ]; then jwt=$token; else jwt=$bob; fi
  status=$(curl -sS -o "$work/body" -w '%{http_code}' -X POST "$base/api/plants" \
    -H "Authorization: Bearer $jwt" -H 'Content-Type: application/json' -d "{\"id\": 1, \"name\": \"$user's fern\"}")
  [ "$status" = 200 ] || fail "POST /api/plants id 1 as $user answered $status: $(cat "$work/body")"
done
for user in alice bob; do
  if [ "$user" = alice ]; then jwt=$token; mine=alice; theirs=bob; else jwt=$bob; mine=bob; theirs=alice; fi
  status=$(curl -sS -o "$work/list.$user" -w '%{http_code}' "$base/api/plants?limit=100" -H "Authorization: Bearer $jwt")
  [ "$status" = 200 ] || fail "GET /api/plants as $user answered $status: $(cat "$work/list.$user")"
  grep -q '"id":1,' "$work/list.$user" && grep -q "$mine's fern" "$work/list.$user" || fail "$user's list lacks $user's plant 1: $(cat "$work/list.$user")"
  ! grep -q "$theirs's fern" "$work/list.$user" || fail "$user's list shows $theirs's plant: $(cat "$work/list.$user")"
done
# alice's tenant is TENANT_DEFAULT's and the static token's: her list holds the token's plants; bob's holds one.
grep -q '"id":9007199254740993,' "$work/list.alice" || fail "alice's list lacks the static token's plants (TENANT_DEFAULT: alice)"
[ "$(grep -o '"id":' "$work/list.bob" | wc -l)" = 1 ] || fail "bob's list holds more than his one plant: $(cat "$work/list.bob")"
echo "alice and bob each created plant 1; each list holds only its owner's (alice's also the static token's, her tenant)"

rm -f docker/.smoke-web-up
compose_down plant-store-web compose || fail "the stack left something behind"
printf '\nsmoke-web: the example app and the service answered through port %s\n' "$PROXY_PORT"
