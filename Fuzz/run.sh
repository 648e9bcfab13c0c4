#!/usr/bin/env bash
# Builds the libFuzzer targets (AddressSanitizer on) into .build-fuzz and runs them one after another.
#
#   Fuzz/run.sh [--seconds N | --runs N] [TARGET...]   fuzz each target (default: all) for N seconds
#                                                      (default 20) or N executions
#   Fuzz/run.sh --replay [TARGET...]                   replay the seed corpora through a plain build
#
# Each target starts from Fuzz/Corpus/<target>/ and writes the inputs it adds to .fuzz-work/<target>/
# (git-ignored), which later runs start from too. A crash, leak, timeout (10 s for one input) or an
# input needing more than 2 GiB is written to .fuzz-work/<target>-*, and the script exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=20)
replay=false
selected=()
while (($#)); do
  case "$1" in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    --replay) replay=true; shift ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) selected+=("$1"); shift ;;
  esac
done

if $replay; then
  swift build --scratch-path .build --product ErrandFuzz
  binary=.build/debug/ErrandFuzz
  ((${#selected[@]})) || mapfile -t selected < <("$binary" list)
  for target in "${selected[@]}"; do "$binary" "$target" "Fuzz/Corpus/$target"; done
  exit 0
fi

swift build --scratch-path .build-fuzz -c release --product ErrandFuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -DERRAND_FUZZING
binary=.build-fuzz/release/ErrandFuzz
((${#selected[@]})) || mapfile -t selected < <(ERRAND_FUZZ_TARGET=list "$binary")

# The Swift runtime's crash handler and AddressSanitizer's do not mix; libFuzzer reports crashes itself.
export SWIFT_BACKTRACE=enable=no
status=0
printf '%-20s %14s %10s  %s\n' target executions "exec/s" result
for target in "${selected[@]}"; do
  work=.fuzz-work/$target
  mkdir -p "$work"
  start=$SECONDS
  if ERRAND_FUZZ_TARGET=$target "$binary" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work-" "$work" "Fuzz/Corpus/$target" >"$work.log" 2>&1; then
    result="ok"
  else
    result="FAILED: $(grep -m1 -E 'Fatal error|ERROR:' "$work.log" || echo "see $work.log")"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work.log")
  printf '%-20s %14s %10s  %s (%ss)\n' "$target" "${runs:-?}" "${rate:-?}" "$result" $((SECONDS - start))
done
exit $status
