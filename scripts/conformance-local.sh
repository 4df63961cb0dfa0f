#!/usr/bin/env bash
# Runs the conformance suite against this repository's bridge, started as a separate process (as npm start does) with the
# test clock on, over real sockets: the protocol profile, the bridge profile (our own decisions too), the resume
# profile (the resume extension, R1-R8) and the cancel profile (the cancel extension, S1-S9), then the robustness
# mode in the protocol and bridge profiles (SKIP_ROBUSTNESS=1 leaves it out). PROFILES (space-separated) runs fewer profiles. Reports go to
# test-output/conformance-<profile>.{json,xml,html}. Extra arguments go to every run. With BRIDGE_URLS (URLs
# separated by commas) it starts nothing and checks those nodes of one bridge instead; REPORT_NAME (conformance)
# names the reports. Exit code: 0 when every profile
# conforms, else the first non-zero exit of the suite (1 a MUST failed, 2 could not start, 3 incomplete).
set -euo pipefail
cd "$(dirname "$0")/.."

out=test-output
name=${REPORT_NAME:-conformance}
mkdir -p "$out"
export ADMIN_TOKEN=${ADMIN_TOKEN:-conformance-local-admin-token}

if [ -n "${BRIDGE_URLS:-}" ]; then
  # Nodes someone else started (several nodes of one bridge, comma-separated, e.g. by scripts/cluster-local.sh):
  # nothing to start here; they must share ADMIN_TOKEN and have the test clock on.
  urls=$BRIDGE_URLS
else
  data=$(mktemp -d)
  port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  export PORT=$port HOST=127.0.0.1 DATABASE_URL="sqlite:$data/bridge.sqlite" BRIDGE_TEST_CLOCK=1 LOG_LEVEL=warn
  urls="ws://127.0.0.1:$port/v1"

  # What `npm start` runs, started directly so that $! is the bridge itself and stopping it stops it.
  node bin/bridge.js serve > "$out/bridge.log" 2>&1 &
  bridge=$!
  trap 'kill $bridge 2>/dev/null || true; wait $bridge 2>/dev/null || true; rm -rf "$data"' EXIT

  node -e "
    const url = 'http://127.0.0.1:$port/healthz';
    const until = Date.now() + 30000;
    (async function wait() {
      try { if ((await fetch(url)).ok) return; } catch {}
      if (Date.now() > until) { console.error('the bridge did not start; see $out/bridge.log'); process.exit(1); }
      setTimeout(wait, 200);
    })();
  "
fi

status=0
for profile in ${PROFILES:-protocol bridge resume cancel}; do
  started=$(date +%s)
  set +e
  node bin/bridge-conformance.js server --profile "$profile" --url "$urls" --admin-token "$ADMIN_TOKEN" \
    --report-json "$out/$name-$profile.json" --junit "$out/$name-$profile.xml" --html "$out/$name-$profile.html" "$@"
  code=$?
  set -e
  echo "conformance suite, $profile profile: exit $code, $(( $(date +%s) - started )) s; reports in $out/$name-$profile.{json,xml,html}"
  [ "$status" -ne 0 ] || status=$code
done

# The robustness mode: every generated hostile-input case, in the protocol and bridge profiles, each followed by the
# canary of another organization (the full list is the same for every seed); the resource cases at --scale quick
# once, with the protocol profile (they judge nothing a profile changes).
if [ -z "${SKIP_ROBUSTNESS:-}" ]; then
  for profile in protocol bridge; do
    started=$(date +%s)
    exclude=()
    [ "$profile" = protocol ] || exclude=(--exclude '^resource\.')
    set +e
    node bin/bridge-conformance.js robustness --profile "$profile" --url "$urls" --admin-token "$ADMIN_TOKEN" --seed 1 "${exclude[@]}" \
      --report-json "$out/$name-robustness-$profile.json" --junit "$out/$name-robustness-$profile.xml" \
      --html "$out/$name-robustness-$profile.html" > "$out/$name-robustness-$profile.log" 2>&1
    code=$?
    set -e
    grep -E '^(FAIL|ERR |requirement|blocked|verdict)|^(ok  |skip) resource\.|^ {7}info:' "$out/$name-robustness-$profile.log" || true
    echo "robustness mode, $profile profile: exit $code, $(( $(date +%s) - started )) s; reports in $out/$name-robustness-$profile.{json,xml,html}"
    [ "$status" -ne 0 ] || status=$code
  done
fi
exit $status
