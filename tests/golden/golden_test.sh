#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Golden test: every frame of the Linux Soft-RoCE captures in this folder
# must decode, pass its ICRC and rebuild byte for byte with droce-pcap.
# Exceptions, each asserted exactly:
#   host_ud_pingpong.pcap frame 1 carries a deliberately wrong ICRC (its
#     payload reads "bad icrc!!!"): it must be reported as BAD_ICRC.
#   bulk_write_bw_headers.pcap was captured with a 96-byte snap length: its
#     19200 data frames are checked as headers only, its 300 ACKs in full.
#   foreign_mix.pcap (make_foreign_mix.py): 6 frames that are not RoCEv2.
# usage: golden_test.sh DROCE_PCAP GOLDEN_DIR
set -u
tool=$1
dir=$2
fail=0

expect() {	# file, expected exit status, expected output (exact)
	out=$("$tool" verify "$dir/$1")
	rc=$?
	if [ "$rc" -ne "$2" ] || [ "$out" != "$3" ]; then
		echo "FAIL $1: exit $rc, output:"
		echo "$out" | sed 's/^/    /'
		echo "  expected exit $2, output:"
		echo "$3" | sed 's/^/    /'
		fail=1
	else
		echo "ok   $1: $(echo "$out" | tail -n 1)"
	fi
}

for f in "$dir"/*.pcap; do
	name=$(basename "$f")
	case "$name" in
	host_ud_pingpong.pcap|bulk_write_bw_headers.pcap|foreign_mix.pcap) continue ;;
	esac
	n=$("$tool" show "$f" | wc -l)
	expect "$name" 0 "$n frames, $n ok, 0 bad (0 not RoCEv2, 0 checked as headers only)"
done

expect host_ud_pingpong.pcap 1 "$dir/host_ud_pingpong.pcap:1: BAD_ICRC: invariant CRC mismatch
7 frames, 6 ok, 1 bad (0 not RoCEv2, 0 checked as headers only)"
expect bulk_write_bw_headers.pcap 0 \
	"19500 frames, 19500 ok, 0 bad (0 not RoCEv2, 19200 checked as headers only)"
expect foreign_mix.pcap 0 "7 frames, 1 ok, 0 bad (6 not RoCEv2, 0 checked as headers only)"

# A corrupted copy must fail: flip one payload byte of a full frame.
tmp=$(mktemp)
cp "$dir/rc_write_only.pcap" "$tmp"
printf '\125' | dd of="$tmp" bs=1 seek=150 conv=notrunc 2>/dev/null
if "$tool" verify "$tmp" >/dev/null; then
	echo "FAIL corrupted capture passed verify"
	fail=1
else
	echo "ok   corrupted capture rejected"
fi
rm -f "$tmp"
exit $fail
