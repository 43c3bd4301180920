#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# rpma.sh BUILD_DIR: Debian's librpma 1.2, unmodified, under a server and a
# client of the project's own (tests/apps/rpma_check.c) through droce-run
# across the namespace pair: the server on side B with its memory a
# MAP_SHARED mapping of a file on a disk file system (/tmp's) and then of one
# on tmpfs (/dev/shm), the client on side A. Each run: rpma_write, rpma_flush
# VISIBILITY and PERSISTENT, rpma_atomic_write, rpma_read, rpma_send,
# rpma_send_with_imm and rpma_write_with_imm with a separate receive CQ and
# then with a shared receive queue; every completion, immediate and byte is
# checked (rpma_check's "ok"/"FAIL" lines), and the 4 KiB and 64 KiB write +
# flush loops print their rate; no byte goes through on-demand paging. Then
# the file with a private page after it in one registration, which droce
# cannot share as one: librpma must fall back to IBV_ACCESS_ON_DEMAND (the
# daemons' ODP_COPIES rise). Then both sides as nobody without capabilities
# (setpriv): librpma's shared anonymous page registered directly, no ODP.
# Skips (77) without root or when librpma was not found at build time.
set -u

. "$(dirname "$0")/../integration/common.sh"

check="$1/tests/apps/rpma_check"
[ -x "$check" ] || { echo "rpma_check not built (apt-get install librpma-dev, meson setup --reconfigure)"; exit 77; }
pair_up "$1"
work=$(mktemp -d)
shm=$(mktemp -d /dev/shm/droce-rpma.XXXXXX)
# pair_down takes the script's status from $?: keep it past the cleanup
trap 'rc=$?; kill ${spid:-} 2>/dev/null; rm -rf "$work" "$shm"; (exit $rc); pair_down' EXIT
fails=0
port=7200

# the client's write + flush loop at LEN bytes: "N MiB/s, N us per write+flush"
rate() {	# LEN
	sed -n "s/.*rpma_write $1 B + rpma_flush VISIBILITY) in [0-9.]* s: //p" "$work/cli"
}

# copies both daemons made to or from on-demand paged memory so far
odp_copies() {
	n=0
	for side in A B; do
		eval "ns=\$DROCE_NS_$side"
		c=$(ip netns exec "$ns" "$build/app/ctl/droce-ctl" -p "droce$DROCE_TAG$side" stats |
			awk '$1 == "ODP_COPIES" { print $2 }')
		n=$((n + ${c:-0}))
	done
	echo $n
}

# one NAME FILE ODP [PREFIX...]: a server on FILE, a client, each run through
# PREFIX (setpriv) if given; both must exit 0, and the daemons must have
# reached on-demand paged memory (ODP yes: librpma fell back to it) or not
one() {
	name=$1 file=$2 odp=$3
	shift 3
	odp_before=$(odp_copies)
	port=$((port + 1))
	$DROCE_RUN_B "$@" timeout 60 "$check" server "$DROCE_IP_B" $port "$file" >"$work/srv" 2>&1 &
	spid=$!
	# the server is listening once it says so
	i=0
	while ! grep -q listening "$work/srv" && kill -0 $spid 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	$DROCE_RUN_A "$@" timeout 60 "$check" client "$DROCE_IP_B" $port 1 >"$work/cli" 2>&1
	crc=$?
	wait $spid
	src=$?
	spid=
	sed 's/^/    client: /' "$work/cli"
	sed 's/^/    server: /' "$work/srv"
	checks=$(cat "$work/cli" "$work/srv" | grep -c '^ok ')
	bad=$(cat "$work/cli" "$work/srv" | grep -c '^FAIL')
	odp_copied=$(($(odp_copies) - odp_before))
	if { [ $odp = yes ] && [ $odp_copied = 0 ]; } || { [ $odp = no ] && [ $odp_copied != 0 ]; }; then
		fail "$name: $odp_copied copies through on-demand paging (want ODP $odp)"
	elif [ $crc = 0 ] && [ $src = 0 ] && [ "$bad" = 0 ]; then
		ok "$name: $checks checks; write + flush $(rate 4096) at 4 KiB, $(rate 65536) at 64 KiB"
	else
		fail "$name: client exit $crc, server exit $src, $bad failed check(s)"
	fi
}

one "server memory a MAP_SHARED file on disk" "$work/pmem" no
one "server memory a MAP_SHARED file on tmpfs" "$shm/pmem" no
# the file and a private page in one registration cannot be shared as one
# (EOPNOTSUPP): librpma registers it again with IBV_ACCESS_ON_DEMAND
one "server memory a file and a private page: librpma falls back to ODP" "mixed:$shm/pmem" yes
# an ordinary user's: librpma's flush registers shared anonymous memory,
# whose file only droced can open for it (OPEN_MAPPING)
if command -v setpriv >/dev/null 2>&1; then
	chmod 711 "$work"
	mkdir "$work/nobody" && chown nobody "$work/nobody"
	one "both sides as nobody, no capabilities" "$work/nobody/pmem" no \
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		--bounding-set=-all
fi
[ "$fails" = 0 ]
