#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# mpich.sh BUILD_DIR: Debian's MPICH 4.0 (ch4:ucx), unmodified, over UCX on
# droce: two ranks, rank 0 in side A's namespace, rank 1 in side B's, each
# through its side's droce-run. Two programs of tests/mpi built with
# mpicc.mpich: mpich_check (a ping-pong of 1 B .. 4 MiB with every byte
# checked, allreduces with every element checked) and mpich_coll_rma
# (bcasts and alltoalls, and MPI-3 RMA: Put, Get, Accumulate,
# Fetch_and_op and Compare_and_swap in fence, post/start/complete/wait,
# lock/unlock and lock_all/flush epochs, every byte of both windows
# checked), each with UCX_TLS=rc_v,self and ud_v,self (the ping-pong to
# 1 MiB only over UD).
#
# mpiexec (hydra) runs in A through droce-run and forks rank 0 there; its
# rsh launcher starts the proxy for 10.99.0.2 through `netns-pair rsh`,
# which runs it in B through B's droce-run, and that proxy forks rank 1.
# -genvnone: by default hydra gives every rank mpiexec's environment,
# DROCE_SOCKET included, and rank 1 then talks to A's daemon through that
# socket's path (the namespaces share the file system): MPI's messages
# never reach the wire, they are A's loopback.
# Each run passes only if mpiexec exits 0 (the programs exit 1 on any
# mismatch), UCX reports every endpoint to the other rank on the asked
# verbs transport of droce0:1 only, and each daemon's port received at
# least the bytes the other rank sent it (the view's port_rcv_data).
# Skips (77) only without root or without MPICH (mpich, libmpich-dev: the
# build then has no mpich_check).
set -u

. "$(dirname "$0")/../integration/common.sh"

mpi_dir=$1/tests/mpi
command -v mpiexec.mpich >/dev/null 2>&1 ||
	{ echo "MPICH is not installed (mpiexec.mpich: apt-get install mpich libmpich-dev)"; exit 77; }
[ -x "$mpi_dir/mpich_check" ] && [ -x "$mpi_dir/mpich_coll_rma" ] ||
	{ echo "MPICH was not installed at build time (no $mpi_dir/mpich_check: apt-get install libmpich-dev, then meson setup --reconfigure)"; exit 77; }
pair_up "$1"
work=$(mktemp -d)
trap 'rc=$?; rm -rf "$work"; (exit $rc); pair_down' EXIT
fails=0

export DROCE_NETNS_TAG="$DROCE_TAG"	# for netns-pair rsh, which mpiexec starts
# hydra's -launcher-exec is one program, not a command line
printf '#!/bin/sh\nexec "%s/scripts/netns-pair" rsh "$@"\n' "$top" >"$work/rsh"
chmod +x "$work/rsh"

rcv_words() {	# SIDE: its port's port_rcv_data (4-byte words), from the view's tree
	cat "$DROCE_STATE/$1.sock.sysfs/class/infiniband/$DROCE_DEV/ports/1/counters/port_rcv_data"
}

for tls in rc_v ud_v; do
	# UD moves 1 MiB at a tenth of RC's rate here: its ping-pong stops there
	case $tls in rc_v) tl=rc_verbs max=4194304 ;; ud_v) tl=ud_verbs max=1048576 ;; esac
	for prog in mpich_check mpich_coll_rma; do
		name="$prog, UCX_TLS=$tls,self"
		arg=''
		[ $prog = mpich_check ] && arg=$max
		log=$DROCE_STATE/$prog-$tls.log
		a0=$(rcv_words A) b0=$(rcv_words B)
		timeout 300 $DROCE_RUN_A mpiexec.mpich -n 2 -hosts "$DROCE_IP_A,$DROCE_IP_B" \
			-launcher rsh -launcher-exec "$work/rsh" -genvnone \
			-genv UCX_TLS "$tls,self" -genv UCX_NET_DEVICES "$DROCE_DEV:1" \
			-genv UCX_LOG_LEVEL info "$mpi_dir/$prog" $arg \
			>"$log" 2>&1
		rc=$?
		if [ $rc = 0 ] && grep -q '^mpi_[a-z_]*: 0 errors$' "$log"; then
			case $prog in
			mpich_check) what=$(awk '$1 == 8 || $1 == 1048576 { printf "%s B %s us %s MB/s  ", $1, $3, $4 }' "$log") ;;
			*) what=$(grep -c '^rma, .* checked$' "$log")" kinds of RMA epoch checked" ;;
			esac
			ok "$name: mpiexec exit 0, no errors; $what"
		else
			fail "$name: mpiexec exit $rc"
			{ grep '^FAIL rank' "$log"; grep -v '^ *[0-9]\|^FAIL rank' "$log" | tail -n 12; } |
				sed 's/^/    /'
		fi
		# each rank's endpoint to the other: "ep_cfg[N]: tag(LANE LANE ...)"
		# (the one to itself has self/memory); only the asked transport on droce
		lanes=$(sed -n 's/.*ep_cfg\[[0-9]*\]: tag(\([^)]*\)).*/\1/p' "$log" | grep -v 'self/')
		n=$(echo "$lanes" | grep -c .)
		other=$(echo "$lanes" | tr ' ' '\n' | grep . | grep -v "^$tl/$DROCE_DEV:1\$" | sort -u | tr '\n' ' ')
		[ "$n" = 2 ] && [ -z "$other" ] && ok "$name: both ranks reach the other over $tl/$DROCE_DEV:1 only" ||
			fail "$name: endpoints to the other rank: $n, other lanes '$other'"
		# the bytes went through both daemons' ports
		sleep 1.5	# droced refreshes the view once a second
		case $prog in
		mpich_check) bytes=$(awk '$1 == "pingpong:" { print $2 }' "$log") ;;
		*) bytes=$(awk '$1 == "rma:" { print $2 + $5 }' "$log") ;;	# Puts in, Gets back
		esac
		da=$((4 * ($(rcv_words A) - a0))) db=$((4 * ($(rcv_words B) - b0)))
		[ -n "$bytes" ] && [ "$bytes" -gt 0 ] && [ $da -ge "$bytes" ] && [ $db -ge "$bytes" ] &&
			ok "$name: $bytes bytes each way; A's port received $da bytes, B's $db" ||
			fail "$name: '$bytes' bytes each way, but A's port received $da, B's $db"
	done
done

[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all MPICH checks passed"
