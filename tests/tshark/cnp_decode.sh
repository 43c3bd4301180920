#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The CNP droced's engine sends for a CE-marked packet (tests/unit/verbs/
# test_verbs_cc writes it to a pcap), read by tshark: RoCEv2 on UDP 4791,
# DSCP 48 and not ECN-capable, BTH opcode 129 (CNP), BECN set, the peer's
# QPN, P_Key 0xffff, then the 16 reserved bytes (zero) and the ICRC.
# tshark 4.0 names opcode 129 "Unknown" and shows the rest as vendor data;
# a tshark that knows the CNP names it. Skips (77) without tshark.
#   cnp_decode.sh TEST_VERBS_CC
set -u
command -v tshark >/dev/null 2>&1 || { echo "no tshark"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
DROCE_CNP_PCAP=$dir/cnp.pcap CK_RUN_CASE=ecn "$1" >/dev/null || { echo "FAIL test_verbs_cc"; exit 1; }
fields=$(tshark -r "$dir/cnp.pcap" -d udp.port==4791,infiniband -T fields -E separator=' ' \
	-e udp.dstport -e ip.dsfield.dscp -e ip.dsfield.ecn -e infiniband.bth.opcode \
	-e infiniband.bth.destqp -e infiniband.bth.p_key 2>/dev/null)
want="4791 48 0 129 0x123456 65535"
[ "$fields" = "$want" ] || { echo "FAIL fields: '$fields', want '$want'"; exit 1; }
echo "ok   UDP port, DSCP, ECN, opcode, destination QP, P_Key: $fields"
# the frame starts at 40 (pcap headers), the BTH 42 bytes later: its byte 4
# is FECN, BECN, resv6; 16 zero bytes follow the BTH
pad=$(od -A n -t x1 -j $((40 + 42 + 12)) -N 16 "$dir/cnp.pcap" | tr -d ' \n')
[ "$pad" = "00000000000000000000000000000000" ] || { echo "FAIL reserved bytes: $pad"; exit 1; }
becn=$(od -A n -t x1 -j $((40 + 42 + 4)) -N 1 "$dir/cnp.pcap" | tr -d ' \n')
[ "$becn" = "40" ] || { echo "FAIL BTH byte 4 (FECN, BECN): $becn"; exit 1; }
echo "ok   BECN set, 16 reserved bytes zero"
name=$(tshark -r "$dir/cnp.pcap" -d udp.port==4791,infiniband -V 2>/dev/null | grep -m1 'Opcode:')
echo "   tshark: $name"
exit 0
