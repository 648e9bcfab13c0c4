#!/bin/bash
# Runs two builds of ErrandBenchmarks in alternating rounds, each Errand benchmark in a fresh
# process beside its bare-libcurl baseline, so that a before/after comparison shares one
# machine state and every ratio comes from one process.
#
#   Benchmarks/alternate.sh ROUNDS BEFORE_BINARY AFTER_BINARY
#
# Prints one line per benchmark and round, `before|after rN <the harness's row>`, and the
# Errand ÷ bare libcurl summary line of each pair; take the medians over the rounds.
set -euo pipefail
rounds=${1:?rounds}
before=${2:?binary before the change}
after=${3:?binary after the change}
pairs=(
    "loopback.errand-curl-async.c1 loopback.bare-curl-easy.c1"
    "loopback.errand-curl.c1 loopback.bare-curl-easy.c1"
    "loopback.errand-curl-async.c16 loopback.bare-curl-multi.c16"
    "loopback.errand-curl.c16 loopback.bare-curl-multi.c16"
)
for round in $(seq 1 "$rounds"); do
    for which in before after; do
        binary=$before
        [ "$which" = after ] && binary=$after
        for pair in "${pairs[@]}"; do
            read -r errand bare <<<"$pair"
            output=$("$binary" --only "$errand" --only "$bare" 2>&1)
            grep -E '^loopback' <<<"$output" | sed "s/^/$which r$round /"
            grep -oE '(errand-curl(-async)?) ÷ bare-curl-(easy|multi) [0-9.]+× req/s, [0-9.]+× cpu/op' <<<"$output" \
                | head -1 | sed "s/^/$which r$round ratio /"
        done
    done
done
