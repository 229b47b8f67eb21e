#!/usr/bin/env bash
# Runs CI on clean clones of one commit N times in a row with a CPU-bound process beside it, the way
# issue 20 checks that the suite is steady on a loaded 2-core machine:
#   bash scripts/ci-loop.sh [commit (default HEAD)] [runs (default 10)]
# Each run: a fresh `git clone` of this checkout into $CI_LOOP_DIR (default .data/ci-loop), the commit
# checked out, `CI=true bash .ci/run` with `node -e 'for(;;){}'` running the whole time. One line per
# run (exit code, seconds, the tally line); each run's output is kept in $CI_LOOP_DIR.N.log. Stops at
# the first failing run unless CI_LOOP_KEEP_GOING=1.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
commit=$(git -C "$root" rev-parse "${1:-HEAD}")
runs=${2:-10}
dir=${CI_LOOP_DIR:-$root/.data/ci-loop}
node -e 'for(;;){}' &
burner=$!
trap 'kill $burner 2>/dev/null' EXIT
passed=0
for i in $(seq 1 "$runs"); do
  rm -rf "$dir" && git clone -q "$root" "$dir" && git -C "$dir" checkout -q "$commit"
  start=$(date +%s)
  (cd "$dir" && CI=true bash .ci/run >"$dir.$i.log" 2>&1)
  rc=$?
  echo "run $i of $runs ($(git -C "$root" rev-parse --short "$commit")): exit $rc, $(($(date +%s) - start)) s, $(tail -n1 "$dir.$i.log")"
  if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); elif [ "${CI_LOOP_KEEP_GOING:-0}" != 1 ]; then break; fi
done
echo "ci-loop: $passed of $runs consecutive runs passed beside a CPU burner"
[ "$passed" -eq "$runs" ]
