#!/usr/bin/env bash
# Builds what the peer benchmarks need and runs them: Errand beside AsyncHTTPClient, URLSession,
# bare libcurl and a SwiftNIO WebSocket client, in one run (BENCHMARKS.md, "Errand beside its
# peers"). Arguments go to PeerBenchmarks: --only NAME (repeatable), --rounds N, --list, …
#
#   Benchmarks/peers.sh                       # everything, 3 rounds: about 6 minutes
#   Benchmarks/peers.sh --only scale.10000    # one benchmark
#
# The first build of Benchmarks/Peers takes 4–5 minutes (SwiftNIO, BoringSSL, AsyncHTTPClient).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product ErrandBenchmarks
cd Benchmarks/Peers
swift build -c release
exec .build/release/PeerBenchmarks "$@"
