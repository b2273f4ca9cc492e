#!/usr/bin/env bash
# Fuzz the API from its own OpenAPI document with Schemathesis (../shared/tools/schemathesis-wheels/),
# the service in a network namespace of its own that has only loopback (fuzzed webhook URLs and mail
# hosts must not reach anything outside), on a fresh PostgreSQL database reached through its Unix
# socket. Needs root (ip netns), PostgreSQL's socket and Schemathesis (`FUZZ`, by default the
# virtualenv `.ci/run` sets up: scripts/fuzz-setup.sh).
#
#   scripts/fuzz-api.sh [max-examples] [schemathesis args...]     as an API key with every scope
#   AUTH=token scripts/fuzz-api.sh [max-examples] [args...]          as a person's session
#
# Settings: FUZZ_SEED (42), FUZZ_SECONDS (wall-clock bound on Schemathesis, 150: at
# the bound it stops and what ran counts), FUZZ_KEEP=1
# keeps the run's directory (service log, Schemathesis output, reports).
# Exit status 0 only when Schemathesis found no failure (server errors,
# responses outside their documented status codes and schemas, ...) and the service logged no
# error (level 50); 1 when it found something; 2 when the run could not be set up. The last line
# is `fuzz <auth>: ok|FAILED (...)`.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
FUZZ=${FUZZ:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-fuzz/venv/bin/schemathesis}
AUTH=${AUTH:-key}
SEED=${FUZZ_SEED:-42}
LIMIT=${FUZZ_SECONDS:-150}
N=${1:-20}; shift || true
PGHOST_DIR=${FUZZ_PGHOST:-/var/run/postgresql}
NS="svcfz$$"            # our own namespace and database: runs side by side never meet
DB="svc_fuzz_$$"
PORT=3999
DIR=$(mktemp -d /tmp/svc-fuzz-XXXXXX)
SVC=

say() { printf '%s\n' "$*"; }
cleanup() {
  [ -n "$SVC" ] && kill "$SVC" 2>/dev/null
  # Whatever still runs in our namespace is ours (the service, a stuck Schemathesis).
  if ip netns list 2>/dev/null | grep -qw "$NS"; then
    for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$NS" 2>/dev/null
  fi
  psql -h "$PGHOST_DIR" -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
  if [ "${FUZZ_KEEP:-}" = 1 ]; then say "kept: $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { say "fuzz $AUTH: FAILED (setup: $*)"; exit 2; }
in_ns() { ip netns exec "$NS" "$@"; }
api() { in_ns curl -s --max-time 20 "http://127.0.0.1:$PORT$1" "${@:2}"; }
field() { node -e 'try { const v = JSON.parse(process.argv[1])[process.argv[2]]; if (v) console.log(v); } catch {}' "$1" "$2"; }

[ -x "$FUZZ" ] || die "no Schemathesis at $FUZZ (scripts/fuzz-setup.sh installs it)"
[ "$(id -u)" = 0 ] || die "needs root for ip netns"
ip netns add "$NS" || die "ip netns add $NS"
in_ns ip link set lo up || die "no loopback in $NS"
psql -h "$PGHOST_DIR" -U postgres -d postgres -qc "CREATE DATABASE $DB" || die "could not create database $DB"

in_ns env PORT=$PORT DATA_DIR="$DIR/data" DATABASE_URL="postgres://postgres@localhost/$DB?host=$PGHOST_DIR" \
  RATE_LIMIT_PER_MINUTE=10000000 LOG_LEVEL=warn node --import tsx src/main.ts > "$DIR/service.log" 2>&1 &
SVC=$!
up=
for _ in $(seq 1 240); do
  kill -0 "$SVC" 2>/dev/null || break
  api /healthz -o /dev/null -f && { up=1; break; }
  sleep 0.25
done
[ -n "$up" ] || { tail -20 "$DIR/service.log"; die "the service did not start"; }

# A person, their workspace, and an API key with every scope the document lists.
reg=$(api /v1/auth/register -H 'content-type: application/json' \
  -d '{"email":"fuzz@example.com","password":"a long password for fuzzing","name":"Fuzz"}')
TOKEN=$(field "$reg" access_token); [ -n "$TOKEN" ] || die "register: $reg"
# A name the fuzzer will not type: DELETE /v1/workspace needs it as confirm_name.
ws=$(api /v1/workspaces -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  -d '{"name":"Fuzz workspace 5e1b9c"}')
WS=$(field "$ws" id); [ -n "$WS" ] || die "workspace: $ws"
api /v1/openapi.json -o "$DIR/openapi.json" -f || die "no /v1/openapi.json"
scopes=$(node -e '
  const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const m = /Scopes: ([^.]+)\./.exec(d.components.securitySchemes.apiKey.description ?? "");
  if (m) console.log(JSON.stringify(m[1].split(", ")));' "$DIR/openapi.json")
[ -n "$scopes" ] || die "no scopes in the document"
key=$(api /v1/api-keys -H "authorization: Bearer $TOKEN" -H "svc-workspace: $WS" -H 'content-type: application/json' \
  -d "{\"name\":\"fuzz\",\"scopes\":$scopes}")
KEY=$(field "$key" key); [ -n "$KEY" ] || die "api key: $key"

# Operations that would end the run's own credential are left out (every later request would
# answer 401): signing out, changing the password (ends every session) and revoking a session for
# the person; revoking an API key for the key (the key lists itself in GET /v1/api-keys, and the
# stateful phase follows that id to DELETE).
if [ "$AUTH" = token ]; then
  HDRS=(-H "Authorization: Bearer $TOKEN" -H "SVC-Workspace: $WS")
  SKIP=(--exclude-operation-id postAuthLogout --exclude-operation-id postMePassword --exclude-operation-id deleteMeSessionsById)
else
  HDRS=(-H "Authorization: Bearer $KEY")
  SKIP=(--exclude-operation-id deleteApiKeysById)
fi
# Left out for both: POST /v1/inbound/email takes a raw message/rfc822 body, which Schemathesis
# cannot generate ("Serialization not possible"; test/modules/email covers it), and the mailbox
# OAuth callback, which only redirects a browser to the app's page: Schemathesis follows the
# redirect and judges the page (text/html) by the operation's JSON responses.
say "fuzz $AUTH: seed $SEED, $N examples per operation, at most $LIMIT s"
started=$SECONDS
# In the run's directory: Schemathesis keeps a cache of the failures it found (.schemathesis/)
# and replays them in later runs from the same directory; each run starts clean.
# At the time bound Schemathesis gets SIGINT, stops and prints its summary of what ran.
(cd "$DIR" && timeout -s INT -k 15 "$LIMIT" ip netns exec "$NS" "$FUZZ" --config-file "$ROOT/scripts/fuzz-api.toml" \
  run "http://127.0.0.1:$PORT/v1/openapi.json" \
  "${HDRS[@]}" --checks all --max-examples "$N" --seed "$SEED" --generation-database none --generation-with-security-parameters false \
  --exclude-operation-id postInboundEmail --exclude-operation-id getMailboxesOauthByProviderCallback "${SKIP[@]}" \
  --request-timeout 20 --no-color --report junit --report-junit-path "$DIR/junit.xml" "$@" \
  > "$DIR/fuzz.txt" 2>&1)
st=$?
took=$((SECONDS - started))
# The failures and errors, then the summary (not the progress lines nor the warnings).
awk '/^=+ (FAILURES|ERRORS) =+$/{p=1} /^=+ WARNINGS =+$/{p=0} /^=+ SUMMARY =+$/{p=1} p' "$DIR/fuzz.txt" | head -400
final=$(grep -E '^=+ .* in [0-9.]+s =+$' "$DIR/fuzz.txt" | tail -1)
[ -n "$final" ] || tail -40 "$DIR/fuzz.txt"

# The credential must still work at the end, or the run tested mostly 401s.
cred=$(api /v1/tickets?limit=1 -o /dev/null -w '%{http_code}' "${HDRS[@]}")
died=
if kill -0 "$SVC" 2>/dev/null; then kill "$SVC"; wait "$SVC" 2>/dev/null; else wait "$SVC"; died=$?; fi
SVC=
errors=$(grep -c '"level":50' "$DIR/service.log")
if [ "$errors" -gt 0 ]; then
  say "service log, error lines (level 50):"
  grep '"level":50' "$DIR/service.log" | cut -c1-600 | head -20
fi

why=()
note=
case $st in
  0) ;;
  124)
    # Stopped at the time bound: what ran counts, when Schemathesis summed it up without a failure.
    if [ -n "$final" ] && ! grep -qE 'failure|error' <<<"$final"; then note=", stopped at the $LIMIT s bound"
    elif [ -n "$final" ]; then why+=("Schemathesis found failures (stopped at the $LIMIT s bound)")
    else why+=("Schemathesis did not finish within $LIMIT s"); fi ;;
  137) why+=("Schemathesis did not stop at the $LIMIT s bound and was killed") ;;
  1) why+=("Schemathesis found failures") ;;
  *) why+=("Schemathesis exited with $st") ;;
esac
[ -n "$died" ] && why+=("the service exited during the run with status $died")
[ "$cred" = 200 ] || why+=("the run's credential answers $cred at the end: something in the run revoked it")
[ "$errors" -gt 0 ] && why+=("$errors error lines in the service log")
if [ ${#why[@]} -eq 0 ]; then
  say "fuzz $AUTH: ok (${took} s$note)"
  exit 0
fi
say "fuzz $AUTH: FAILED ($(IFS=';'; echo "${why[*]}"); ${took} s)"
exit 1
