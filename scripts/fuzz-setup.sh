#!/usr/bin/env bash
# Sets up Schemathesis for scripts/fuzz-api.sh: a virtualenv in a cache directory
# (${XDG_CACHE_HOME:-~/.cache}/svc-fuzz/venv), from the wheels in ../shared/tools/schemathesis-wheels
# (Schemathesis and three small packages the machine's package index lacks) and the rest from pip's
# configured index. Reused while it works and the wheels and requirements are unchanged. Prints the
# path of the schemathesis program; exit status 1, with the reason, when it cannot be installed.
set -uo pipefail
cd "$(dirname "$0")/.."
WHEELS=${FUZZ_WHEELS:-}
if [ -z "$WHEELS" ]; then
  for d in ../shared/tools/schemathesis-wheels /work/shared/tools/schemathesis-wheels; do
    [ -d "$d" ] && { WHEELS=$d; break; }
  done
fi
[ -n "$WHEELS" ] && ls "$WHEELS"/*.whl >/dev/null 2>&1 || { echo "no Schemathesis wheels (../shared/tools/schemathesis-wheels)" >&2; exit 1; }
# ../shared/tools/schemathesis-wheels/README.md
REQS=('click>=8.0,<9' 'hypothesis>=6.130.12,<7' 'jsonschema_rs>=0.50.0,<0.59' 'pyrate-limiter>=4.0,<5.0'
  'pytest>=9,<10' 'PyYAML>=5.1,<7.0' 'requests>=2.22,<3' 'rich>=13.9.4' 'typing-extensions>=4.12.2'
  'werkzeug>=0.16.0,<4' 'graphql-core>=3.1.0,<3.3.0' 'starlette>=0.20.1')
VENV=${XDG_CACHE_HOME:-$HOME/.cache}/svc-fuzz/venv
STAMP=$( (sha256sum "$WHEELS"/*.whl | cut -c1-64; printf '%s\n' "${REQS[@]}") | sha256sum | cut -c1-16)
if [ -x "$VENV/bin/schemathesis" ] && [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$STAMP" ] &&
  "$VENV/bin/schemathesis" --version >/dev/null 2>&1; then
  echo "$VENV/bin/schemathesis"; exit 0
fi
command -v python3 >/dev/null || { echo "no python3: cannot install Schemathesis" >&2; exit 1; }
rm -rf "$VENV" && mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2 || { echo "python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
# --retries 0 and a short timeout: an index that cannot be reached fails in seconds, not minutes.
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check --retries 0 --timeout 20)
log=$(mktemp)
if ! timeout 600 "${PIP[@]}" --no-deps "$WHEELS"/*.whl >"$log" 2>&1 ||
  ! timeout 600 "${PIP[@]}" "${REQS[@]}" >>"$log" 2>&1 ||
  ! "$VENV/bin/schemathesis" --version >/dev/null 2>&1; then
  grep -v '^\s*$' "$log" | grep -iv 'retrying\|dependency resolver\|requires jsonschema-rs' | tail -15 >&2
  echo "could not install Schemathesis into $VENV: pip did not reach a package index with its requirements" >&2
  rm -f "$log"; rm -rf "$VENV"; exit 1
fi
rm -f "$log"
echo "$STAMP" > "$VENV/.stamp"
echo "$VENV/bin/schemathesis"
