#!/usr/bin/env bash
# `npm test`: bring up the servers, then every suite, in order of cost:
#   lint, typecheck, unit, contract (real servers), integration (real servers),
#   chaos (faults injected into servers of its own), build, e2e (Playwright in Debian's
#   Chromium against `next start`).
# Every stage runs even when an earlier one failed, so one run shows every failure;
# the exit status is non-zero when any stage failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

export NEXT_TELEMETRY_DISABLED=1
export CI=${CI:-1}   # vitest and playwright: no watch mode, no interactive reporters

declare -a results=()
failed=0
stage() { # name command...
  local name=$1
  shift
  local started=$SECONDS
  printf '\n==> %s: %s\n' "$name" "$*"
  # Each stage's output is kept too, so that the summary at the end can name what failed
  # (a CI log is often read from its tail).
  if "$@" 2>&1 | tee "$LOGS/$name.log"; then
    results+=("$(printf '  ok    %-12s %4d s' "$name" $((SECONDS - started)))")
  else
    results+=("$(printf '  FAIL  %-12s %4d s' "$name" $((SECONDS - started)))")
    failed=1
  fi
}

total_started=$SECONDS
LOGS="$ROOT/.leasehold/test-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"

# The lines of a stage's log that name a failed test (vitest: 'FAIL  file > test' and '×';
# Playwright: '✘' and the numbered '1) [project] › file' headings), colours stripped.
failures() {
  sed -e 's/\x1b\[[0-9;]*m//g' "$LOGS/$1.log" 2>/dev/null |
    grep -E '^\s*(FAIL\s|×\s|✘\s|[0-9]+\) \[)|(Error|error) TS[0-9]+:|^\s*[0-9]+:[0-9]+\s+error\s' | sort -u | head -40
}

# Without the servers nothing below can run meaningfully: stop here if they cannot start.
# What this run starts (not what was running already) is stopped when it ends, however it
# ends; LEASEHOLD_KEEP_SERVICES=1 keeps them up for the next run.
PIDS="${LEASEHOLD_SERVICES_DIR:-$ROOT/.leasehold/services}/pids"
recorded() { (cd "$PIDS" 2>/dev/null && grep -H . -- *.pid 2>/dev/null) | sort || true; }
before=$(recorded)
started=()
stop_started() {
  if [[ ${#started[@]} -gt 0 && ${LEASEHOLD_KEEP_SERVICES:-} != 1 ]]; then
    printf '\n==> services: stopping what this run started: %s\n' "${started[*]}"
    bash scripts/services.sh down "${started[@]}" || true
  fi
}
trap stop_started EXIT
printf "==> services: scripts/services.sh up --etcd-cluster\n"
up_ok=1
bash scripts/services.sh up --etcd-cluster || up_ok=0
while IFS= read -r line; do
  [[ -n $line ]] && started+=("${line%%.pid:*}")
done < <(comm -13 <(printf '%s\n' "$before") <(recorded))
if [[ $up_ok -eq 0 ]]; then
  echo "npm test: the test services could not be started (see above)" >&2
  exit 1
fi

stage lint npx eslint --max-warnings 0 .
stage typecheck npx tsc --noEmit -p tsconfig.json
stage unit npx vitest run --project unit
stage contract npx vitest run --project contract
stage integration npx vitest run --project integration
# Faults injected into servers of the suite's own (docs/reliability.md); each fault's counts
# are printed as a table after it.
rm -f .leasehold/chaos/results.jsonl
stage chaos npx vitest run --project chaos
node scripts/chaos-table.mjs || true
stage build npm run -s build
if [[ ${results[-1]} == *FAIL* ]]; then
  # A failed build would leave e2e testing an older build, or none: do not pretend.
  results+=("$(printf '  FAIL  %-12s %4s   (not run: the build failed)' e2e -)")
else
  stage e2e npx playwright test
fi

printf '\n==> summary (%d s in all)\n' $((SECONDS - total_started))
printf '%s\n' "${results[@]}"
for line in "${results[@]}"; do
  if [[ $line == *FAIL* && $line != *'not run'* ]]; then
    name=$(awk '{print $2}' <<<"$line")
    printf '\n==> what failed in %s (the whole output: .leasehold/test-logs/%s.log)\n' "$name" "$name"
    failures "$name" || true
  fi
done
if [[ $failed -ne 0 ]]; then
  echo "npm test: FAILED" >&2
  exit 1
fi
echo "npm test: all suites passed"
