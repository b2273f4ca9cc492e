#!/usr/bin/env bash
# Fuzz the API from its own OpenAPI document with Schemathesis, the service in a network namespace
# that has only loopback (fuzzed webhook URLs and mail hosts must not reach anything outside), on
# a fresh PostgreSQL database reached through its Unix socket. Needs root (ip netns) and
# Schemathesis in /work/.venv-fuzz (../shared/tools/schemathesis-wheels/README.md).
#   scripts/fuzz-api.sh [max-examples] [schemathesis args...]        as an API key with every scope
#   AUTH=token scripts/fuzz-api.sh 100 --exclude-path-regex '^/v1/(auth/logout|me/password)'
# Prints Schemathesis' summary and the number of error lines (level 50) in the service's log.
set -u
FUZZ=${FUZZ:-/work/.venv-fuzz/bin/schemathesis}
cd "$(dirname "$0")/.."
N=${1:-20}; shift || true
ip netns add fz 2>/dev/null; ip netns exec fz ip link set lo up
psql -h /var/run/postgresql -U postgres -qc "DROP DATABASE IF EXISTS svc_fuzz WITH (FORCE)" -qc "CREATE DATABASE svc_fuzz"
DIR=$(mktemp -d /tmp/svc-fuzz-XXXX)
ip netns exec fz env PORT=3999 DATA_DIR=$DIR DATABASE_URL='postgres://postgres@localhost/svc_fuzz?host=/var/run/postgresql' \
  RATE_LIMIT_PER_MINUTE=10000000 LOG_LEVEL=warn node --import tsx src/main.ts > $DIR/service.log 2>&1 &
SVC=$!
for i in $(seq 1 120); do ip netns exec fz curl -s -o /dev/null http://127.0.0.1:3999/healthz && break; sleep 0.5; done
reg=$(ip netns exec fz curl -s http://127.0.0.1:3999/v1/auth/register -H 'content-type: application/json' -d '{"email":"fuzz@example.com","password":"a long password","name":"Fuzz"}')
TOKEN=$(node -e 'console.log(JSON.parse(process.argv[1]).access_token)' "$reg")
ws=$(ip netns exec fz curl -s http://127.0.0.1:3999/v1/workspaces -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"Fuzz"}')
WS=$(node -e 'console.log(JSON.parse(process.argv[1]).id)' "$ws")
scopes=$(ip netns exec fz curl -s http://127.0.0.1:3999/v1/openapi.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const d=JSON.parse(s);const m=/Scopes: ([^.]+)\./.exec(d.components.securitySchemes.apiKey.description);console.log(JSON.stringify(m[1].split(", ")))})')
key=$(ip netns exec fz curl -s http://127.0.0.1:3999/v1/api-keys -H "authorization: Bearer $TOKEN" -H "svc-workspace: $WS" -H 'content-type: application/json' -d "{\"name\":\"fuzz\",\"scopes\":$scopes}")
KEY=$(node -e 'console.log(JSON.parse(process.argv[1]).key)' "$key")
echo "token ok: ${TOKEN:0:10} ws $WS key ${KEY:0:14}"
if [ "${AUTH:-key}" = token ]; then HDRS=(-H "Authorization: Bearer $TOKEN" -H "SVC-Workspace: $WS"); else HDRS=(-H "Authorization: Bearer $KEY"); fi
ip netns exec fz "$FUZZ" run http://127.0.0.1:3999/v1/openapi.json \
  "${HDRS[@]}" --checks all --max-examples "$N" --seed 42 "$@" 2>&1 | tee $DIR/fuzz.txt | tail -120
kill $SVC; wait $SVC 2>/dev/null
echo "service log: $DIR/service.log"; grep -c '"level":50' $DIR/service.log
