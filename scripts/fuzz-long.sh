#!/usr/bin/env bash
# The nightly-style campaign: every fuzz target in BUILD for SECONDS each
# (default 600), JOBS targets at a time (default 1: each target gets a core
# to itself). Unlike fuzz-smoke.sh the inputs each target finds are kept
# between runs in BUILD/long-corpus/<name>/, so every campaign starts where
# the last one stopped. An input that fails (crash, leak, timeout, a broken
# promise) is kept twice: in fuzz/artifacts/ (ignored by git) to reproduce
# it, and in fuzz/corpus/<name>/ as a seed, so that the short runs
# (`make fuzz`) fail on it until it is fixed and then keep checking it;
# commit it with the fix. Exits 1 if any target failed.
# The work is fuzz-smoke.sh's, with FUZZ_KEEP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_KEEP=1 JOBS=${JOBS:-1} exec "$here/scripts/fuzz-smoke.sh" "${1:-build-fuzz}" "${2:-600}"
