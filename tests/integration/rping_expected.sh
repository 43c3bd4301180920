#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# The lines rping -v prints for COUNT pings of the default 64 bytes, each
# prefixed with PREFIX: "rdma-ping-N: " then letters from 'A' + N on,
# cycling 'A'..'z', up to byte 63 (rping_test_client's pattern). Shared by
# rdmacm.sh and the interop suite, which compare rping's output with it.
#   rping_expected.sh PREFIX COUNT
awk -v prefix="$1" -v n="$2" 'BEGIN {
	start = 65
	for (p = 0; p < n; p++) {
		s = "rdma-ping-" p ": "
		c = start
		for (i = length(s); i < 63; i++) {
			s = s sprintf("%c", c)
			if (++c > 122) c = 65
		}
		print prefix s
		if (++start > 122) start = 65
	}
}'
