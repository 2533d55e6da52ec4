#!/usr/bin/env bash
# Runs the suite as CI does, several times in a row, with CPU-bound processes beside it: the check that
# the suite holds on a busy machine (docs/developing.md, "The tests"). It clones the last commit (not the work
# tree) into a temporary directory and runs `.ci/run` there, so it measures what would land.
#
#   bash scripts/test-under-load.sh [runs=3] [busy=4]
#
# Prints one line per run (exit code, seconds) and where the logs are; exits non-zero if any run failed.
# A run took 20-24 minutes on 2 cores with 4 busy processes, about 16 alone.
set -uo pipefail

runs=${1:-3}
busy=${2:-4}
if ! [[ $runs =~ ^[1-9][0-9]*$ && $busy =~ ^[0-9]+$ ]]; then
  echo "usage: bash scripts/test-under-load.sh [runs >= 1] [busy >= 0], got runs=$runs busy=$busy" >&2
  exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
git clone -q "$root" "$work/repo" || exit 2
echo "commit $(git -C "$work/repo" rev-parse --short HEAD), logs in $work"

pids=()
stop_busy() { if ((${#pids[@]})); then kill "${pids[@]}" 2>/dev/null; fi; }
trap stop_busy EXIT
for ((i = 0; i < busy; i++)); do
  node -e 'for (;;) {}' &
  pids+=($!)
done

failed=0
for ((n = 1; n <= runs; n++)); do
  started=$(date +%s)
  (cd "$work/repo" && CI=true bash .ci/run) > "$work/run-$n.log" 2>&1
  code=$?
  echo "run $n: exit $code, $(($(date +%s) - started)) s"
  if ((code != 0)); then failed=$((failed + 1)); fi
done
echo "$failed of $runs runs failed"
((failed == 0))
