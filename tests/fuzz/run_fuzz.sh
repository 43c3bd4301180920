#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Run a libFuzzer target for a bounded time (Meson test `fuzz-*`).
#
#   run_fuzz.sh FUZZER PYTHON MAKE_CORPUS WORKDIR [GEN_FRAMES] [DICT]
#
# Seeds WORKDIR/seeds/ with every frame of the golden captures (make_corpus.py)
# and, if GEN_FRAMES is given, with one frame of every opcode it builds (IPv6
# and VLAN variants included, which the captures lack). libFuzzer keeps what
# it finds in WORKDIR/corpus/, which persists between runs, and writes a
# crashing input to WORKDIR/artifacts/. FUZZ_SECONDS (default 60) bounds the
# run. Reproduce a crash with: FUZZER WORKDIR/artifacts/crash-<sha1>
set -eu

fuzzer=$1
python=$2
make_corpus=$3
work=$4
gen_frames=${5:-}
dict=${6:-}
secs=${FUZZ_SECONDS:-60}
# undefined behaviour fails the run too, not just a printed warning
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS

mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts"
extra=
if [ -n "$gen_frames" ]; then
	"$gen_frames" "$work/gen_frames.pcap" "$work/gen_frames.manifest" >/dev/null
	extra=$work/gen_frames.pcap
fi
# shellcheck disable=SC2086  # $extra is one path or nothing
"$python" "$make_corpus" "$work/seeds" $extra

# libFuzzer exits 77 on a crash by default, which Meson would call "skipped"
set -- -max_total_time="$secs" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 \
	-print_final_stats=1 \
	-artifact_prefix="$work/artifacts/"
if [ -n "$dict" ]; then
	set -- "$@" -dict="$dict"
fi
exec "$fuzzer" "$@" "$work/corpus" "$work/seeds"
