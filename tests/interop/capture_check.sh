#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# Check one interop capture with two independent decoders: droce-pcap
# verify (ICRC, byte-for-byte rebuild) and tshark (every frame dissects as
# InfiniBand/RoCEv2 with a BTH opcode, nothing malformed, no expert item of
# severity error). With MAXBAD > 0 (a run through droce's fault port, which
# corrupts some frames droce sends on purpose) up to MAXBAD frames may fail,
# but only frames whose Ethernet source is DROCE_MAC: the fault port never
# touches the Ethernet header, and rxe must never send a bad frame.
#   capture_check.sh BUILD_DIR PCAP [MAXBAD DROCE_MAC]
# Prints one summary line; exit 1 on failure.
set -u
build=$1
pcap=$2
maxbad=${3:-0}
mac=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# droce-pcap names each bad frame as "FILE:N: REASON ..."
"$build/app/pcap/droce-pcap" verify "$pcap" >"$tmp/verify" 2>&1
summary=$(tail -n 1 "$tmp/verify")
sed -n "s|^$pcap:\([0-9]*\):.*|\1|p" "$tmp/verify" >"$tmp/bad"

# tshark: no personal preferences, and InfiniBand's heuristic payload
# dissectors off (the payload is test bytes: RPC-over-RDMA calls a short
# SEND malformed, see tests/tshark/tshark_agree.py, and the "ethertype" one
# reads ib_write_lat's 2-byte payload 0x0061 as a malformed CRTP header)
export WIRESHARK_CONFIG_DIR="$tmp/ws"
mkdir -p "$WIRESHARK_CONFIG_DIR"
heur=$(tshark -G heuristic-decodes 2>/dev/null |
	awk -F'\t' '$1 == "infiniband.payload" && $2 != "ethertype" { printf "--disable-protocol %s ", $2 }')
# (the ethertype one only as a heuristic: Ethernet itself needs ethertype)
heur="$heur --disable-heuristic eth_over_ib"
# shellcheck disable=SC2086
tshark -n -r "$pcap" $heur -o ip.check_checksum:TRUE -T fields -E separator=/t \
	-e frame.number -e eth.src -e infiniband.bth.opcode -e _ws.expert.severity \
	-e _ws.malformed >"$tmp/fields" 2>"$tmp/tshark.err" || { cat "$tmp/tshark.err"; exit 1; }
# 8388608 is PI_ERROR (epan/proto.h)
awk -F'\t' '$3 == "" || $5 != "" { print $1; next }
	{ n = split($4, s, ","); for (i = 1; i <= n; i++) if (s[i] + 0 >= 8388608) { print $1; next } }' \
	"$tmp/fields" >"$tmp/tbad"
frames=$(wc -l <"$tmp/fields")
tbad=$(wc -l <"$tmp/tbad")

sort -nu "$tmp/bad" "$tmp/tbad" >"$tmp/all"
nbad=$(wc -l <"$tmp/all")
foreign=0
if [ "$nbad" -gt 0 ]; then
	# Ethernet source of each bad frame
	foreign=$(awk -F'\t' -v m="$mac" 'NR == FNR { bad[$1] = 1; next }
		($1 in bad) && tolower($2) != tolower(m) { n++ } END { print n + 0 }' \
		"$tmp/all" "$tmp/fields")
fi
if [ "$frames" -eq 0 ]; then
	echo "FAIL capture $pcap is empty"
	exit 1
fi
if [ "$nbad" -gt "$maxbad" ] || [ "$foreign" -gt 0 ]; then
	echo "FAIL capture $pcap: $nbad bad frames (allowed $maxbad, $foreign not from droce);" \
		"droce-pcap: $summary; tshark flags $tbad"
	head -n 5 "$tmp/verify"
	awk -F'\t' 'NR == FNR { bad[$1] = 1; next } ($1 in bad)' "$tmp/all" "$tmp/fields" | head -n 5
	exit 1
fi
extra=
[ "$maxbad" -gt 0 ] && extra=" ($nbad bad, all sent by droce through its fault port; at most $maxbad allowed)"
echo "$frames frames; droce-pcap: $summary; tshark: $((frames - tbad)) decode as RoCEv2 cleanly$extra"
