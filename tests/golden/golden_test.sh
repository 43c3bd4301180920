#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Golden test: every frame of the Linux Soft-RoCE captures in this folder
# must decode, pass its ICRC and rebuild byte for byte with droce-pcap.
# The expected counts come from an independent reader, tshark: frames in
# the file, frames it decodes as InfiniBand (RoCEv2), frames cut short by
# the snap length; a droce-pcap that skipped or invented frames fails.
# Exceptions, each asserted exactly:
#   host_ud_pingpong.pcap frame 1 carries a deliberately wrong ICRC (its
#     payload reads "bad icrc!!!"): it must be reported as BAD_ICRC.
#   bulk_write_bw_headers.pcap was captured with a 96-byte snap length: its
#     19200 data frames are checked as headers only, its 300 ACKs in full.
#   foreign_mix.pcap (make_foreign_mix.py): 6 frames that are not RoCEv2.
# usage: golden_test.sh DROCE_PCAP GOLDEN_DIR   (exit 77 without tshark)
set -u
tool=$1
dir=$2
fail=0
command -v tshark >/dev/null || { echo "tshark missing (it counts the frames)"; exit 77; }

# verdict FILE BAD: droce-pcap's summary line for FILE with BAD bad frames,
# from tshark's frames: all, decoded as InfiniBand, cut by the snap length
verdict() {
	tshark -r "$dir/$1" -T fields -e frame.cap_len -e frame.len -e frame.protocols \
		2>/dev/null | awk -v bad="$2" -v file="$1" '
		{ total++; if ($3 ~ /:infiniband(:|$)/) roce++; if ($1 < $2) short++ }
		END {
			if (total == 0)
				print "(tshark read no frame of " file ")"
			printf "%d frames, %d ok, %d bad (%d not RoCEv2, %d checked as headers only)\n",
				total, roce - bad, bad, total - roce, short
		}'
}

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
	expect "$name" 0 "$(verdict "$name" 0)"
done

expect host_ud_pingpong.pcap 1 "$dir/host_ud_pingpong.pcap:1: BAD_ICRC: invariant CRC mismatch
$(verdict host_ud_pingpong.pcap 1)"
expect bulk_write_bw_headers.pcap 0 "$(verdict bulk_write_bw_headers.pcap 0)"
expect foreign_mix.pcap 0 "$(verdict foreign_mix.pcap 0)"

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
