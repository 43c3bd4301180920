#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# rack.sh BUILD_DIR: droce past two hosts. scripts/netns-rack puts 16
# hosts, each its own namespace and droced (--idle wait), on one Linux
# bridge; then:
#   1. RC between every pair of hosts: Debian's ibv_rc_pingpong (-c: the
#      receiver checks every byte, -e: completion events, no busy poll), all
#      120 pairs in 15 rounds of 8 pairs at once (the circle method: host 16
#      stays, the others turn), each pair exiting 0 with its iterations done;
#   2. an 8-rank Open MPI job over UCX rc_verbs, one rank per host
#      (tests/mpi/mpi_rack: allreduce, alltoall and a ring, every element
#      checked), whose endpoints to other ranks take rc_verbs on droce0 only;
# and at the end every daemon must still run, hold no client object and
# exit 0 on SIGTERM (netns-rack down --check). Skips (77) without root; the
# MPI part is skipped (and said so) without Open MPI.
set -u
build=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/integration/common.sh"	# ok, fail
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
export DROCE_BUILD="$build"
R=$top/scripts/netns-rack
N=16
fails=0
log=$(mktemp -d)
trap '"$R" down --check || fails=$((fails + 1)); rm -rf "$log"
	[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }; exit 0' EXIT
"$R" up $N || exit 1

# round r of the circle method: the pairs (a, b), one per line
round() {
	k=0
	while [ $k -lt $((N / 2)) ]; do
		if [ $k = 0 ]; then
			a=$N b=$((r % (N - 1) + 1))
		else
			a=$(((r + k) % (N - 1) + 1)) b=$(((r - k + N - 1) % (N - 1) + 1))
		fi
		echo "$a $b"
		k=$((k + 1))
	done
}

r=0 pairs=0 bad=0
while [ $r -lt $((N - 1)) ]; do
	port=$((20000 + r))
	round | {
		while read -r a b; do
			"$R" run "$b" timeout 60 ibv_rc_pingpong -g 1 -e -c -n 20 -p $port \
				>"$log/s.$a.$b" 2>&1 &
		done
		wait
	} &
	spid=$!
	# each server listens on its TCP port first: the client tries only once
	round | while read -r a b; do
		k=0
		until ip netns exec "droce${DROCE_NETNS_TAG:-}h$b" ss -Hltn "sport = :$port" | grep -q .; do
			[ $k -ge 200 ] && break
			sleep 0.05
			k=$((k + 1))
		done
	done
	round | {
		while read -r a b; do
			{
				"$R" run "$a" timeout 60 ibv_rc_pingpong -g 1 -e -c -n 20 -p $port \
					"$("$R" ip "$b")" >"$log/c.$a.$b" 2>&1
				echo $? >"$log/rc.$a.$b"
			} &
		done
		wait
	}
	wait $spid
	for f in "$log"/rc.*; do
		p=${f#"$log"/rc.}
		pairs=$((pairs + 1))
		if [ "$(cat "$f")" != 0 ] || ! grep -q "20 iters" "$log/c.$p" ||
			! grep -q "20 iters" "$log/s.$p"; then
			bad=$((bad + 1))
			[ $bad -le 3 ] && { echo "    pair $p: client exit $(cat "$f")"; tail -n 3 "$log/c.$p" "$log/s.$p" |
				sed 's/^/    /'; }
		fi
		rm -f "$f"
	done
	r=$((r + 1))
done
[ $pairs = $((N * (N - 1) / 2)) ] && [ $bad = 0 ] &&
	ok "RC between every two of $N hosts: $pairs pairs, 20 checked round trips each" ||
	fail "RC between every two of $N hosts: $bad of $pairs pairs failed"

mpi_rack=$build/tests/mpi/mpi_rack
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$mpi_rack" ]; then
	echo "skipped: Open MPI over 8 hosts (no mpirun or no $mpi_rack: openmpi-bin, libopenmpi-dev)"
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# the ranks' hosts share this machine's /tmp: PMIx's shared-memory store
# would be one file for all (its "dstore" errors); its hash store is not
export PMIX_MCA_gds=hash
hosts=$(i=1; while [ $i -le 8 ]; do printf '%s,' "$("$R" ip $i)"; i=$((i + 1)); done)
timeout 300 "$R" run 1 mpirun -np 8 --host "${hosts%,}" --mca plm_rsh_agent "$R rsh" \
	--mca pml ucx --mca btl self -x PMIX_MCA_gds -x DROCE_NETNS_TAG -x DROCE_BUILD \
	-x UCX_TLS=rc_v,self -x UCX_NET_DEVICES=droce0:1 -x UCX_LOG_LEVEL=info \
	"$mpi_rack" >"$log/mpi" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^mpi_rack: 8 ranks, 0 errors' "$log/mpi" &&
	ok "Open MPI, 8 ranks on 8 hosts over UCX rc_verbs: $(grep '^mpi_rack:' "$log/mpi")" ||
	{ fail "Open MPI, 8 ranks on 8 hosts: mpirun exit $rc"; grep -v 'UCX  INFO' "$log/mpi" |
		tail -n 12 | sed 's/^/    /'; }
# every endpoint's lanes: rc_verbs on droce0 (and self, to the rank itself)
other=$(sed -n 's/.*ep_cfg\[[0-9]*\]: tag(\(.*\))$/\1/p' "$log/mpi" | tr ' ' '\n' | grep . |
	grep -v '^rc_verbs/droce0:1$' | grep -v '^self/' | sort -u | tr '\n' ' ')
lanes=$(grep -c 'ep_cfg' "$log/mpi")
[ "$lanes" -gt 0 ] && [ -z "$other" ] && ok "every rank's endpoints on rc_verbs/droce0:1 only" ||
	fail "endpoints: $lanes configurations, other lanes '$other'"
