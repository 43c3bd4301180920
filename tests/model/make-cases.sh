#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# (Re)make the regression cases of tests/model/cases/: for each, the first
# seed whose sequence makes calls matching its expressions, shrunk to a
# minimal sequence (run.py --shrink --keep). A case is a list of steps with
# their own seeds, so a change to the generator can leave it showing
# nothing: the model test then says "stale", and this script remakes them.
#   tests/model/make-cases.sh BUILD_DIR
set -u
. "$(dirname "$0")/../integration/common.sh"
pair_up "$1" --single
cases="$top/tests/model/cases"
mkdir -p "$cases"
fail=0

# case NAME REGEX...: the calls the case must show
case_of() {
	name=$1
	shift
	keeps=
	for k in "$@"; do keeps="$keeps --keep $(printf '%s' "$k" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"; done
	for seed in $(seq 1 120); do
		if eval "$DROCE_RUN_A /usr/bin/python3 '$top/tests/model/run.py' --seed $seed \
			--steps 400 --shrink --save '$cases/$name.json' $keeps" >/dev/null 2>&1; then
			echo "$name: seed $seed"
			return
		fi
	done
	echo "$name: no seed in 1..120 shows it"
	fail=1
}

case_of window-invalidated '\[window invalidated\]'
case_of window-access '\[access the MR does not grant\]'
case_of send-longer-than-receive '\[send longer than the receive\]'
case_of atomic-misaligned '\[atomic address not 8-aligned\]'
case_of bind-window-of-another-pd '\[window of another PD\]'
case_of bind-access-beyond-mr '\[access beyond the MR.s\]'
case_of uc-write-imm-dropped 'ibv_wr_rdma_write_imm\(uc.*\[' 'UC: a 0-byte WRITE_WITH_IMM behind it'
case_of send-with-invalidate 'ibv_wr_send_inv'
case_of flush-after-error 'ibv_wr_send on the QP in ERR'
case_of ud-send-imm 'ibv_wr_send_imm\(ud'
case_of multicast-send 'ibv_wr_send\(ud, [0-9]+ bytes to group'
case_of rkey-of-deregistered-mr '\[rkey of a deregistered MR\]'
case_of ud-send-to-destroyed-qp "\[a destroyed QP's number\]"
# droce bug (fixed): a UC or UD send error left the QP in ERR, not SQE
case_of ud-send-error-sqe 'pair of ud' 'ibv_wr_send\(ud.*\[lkey of a deregistered MR\]'
case_of uc-bind-error-sqe 'pair of uc' 'ibv_wr_bind_mw.*\[access beyond the MR.s\]'
case_of sqe-to-rts 'ibv_modify_qp\(SQE -> RTS\)'
# droce bug (fixed): rdma_disconnect on an id never connected gave ENOTCONN, Linux EINVAL
case_of rdma-disconnect-unconnected 'rdma_disconnect on an id idle'
# droce bug (fixed): rdma_listen succeeded on an id that had resolved an address
case_of rdma-listen-after-resolve 'rdma_listen on an id (addr|route) resolved'
# an RC connection through rdma_cm, released from both sides (cmconn.py)
case_of rdma-cm-connection 'rdma_establish' 'after its DISCONNECTED'
# droce bugs (fixed): rdma_connect on a connected id gave EISCONN, Linux EINVAL;
# rdma_resolve_route on a connected passive id succeeded
case_of rdma-connect-connected 'rdma_connect on a connected id'
case_of rdma-resolve-route-connected 'rdma_resolve_route on a connected id'
# IBV_EVENT_SRQ_LIMIT_REACHED: once below the limit, then disarmed (queues.py)
case_of srq-limit-event 'IBV_EVENT_SRQ_LIMIT_REACHED'
exit $fail
