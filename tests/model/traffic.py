# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Traffic between two QPs for the random tester (run.py): a pair of RC, UC
or UD QPs (loopback on one context, or two contexts), each with a PD, a CQ
and a 4 KiB MR; one random operation at a time, every completion (status,
opcode, byte_len, imm, wr_id) and every byte of both MRs checked against a
shadow copy kept from verbs.OPS and verbs.REMOTE_ERRORS."""
import os
import select
import struct
import time
from types import SimpleNamespace

import verbs as M
from raw import Raw, async_fd, qp_pointer

import pyverbs.enums as e
import pyverbs.device as d
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID, ConnParam
from pyverbs.cq import CQ
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr, QPCap, QPEx, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.wr import RecvWR, SendWR, SGE

SIZE = 4096
FULL = (M.LOCAL_WRITE | M.REMOTE_WRITE | M.REMOTE_READ | M.REMOTE_ATOMIC | M.MW_BIND)
QKEY = 0x11111111
NAMES = {M.QPT_RC: "rc", M.QPT_UC: "uc", M.QPT_UD: "ud"}
SEND_OPS = {
    M.QPT_RC: (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM
               | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
               | e.IBV_QP_EX_WITH_RDMA_READ | e.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD
               | e.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | e.IBV_QP_EX_WITH_BIND_MW
               | e.IBV_QP_EX_WITH_LOCAL_INV | e.IBV_QP_EX_WITH_SEND_WITH_INV),
    M.QPT_UC: (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM
               | e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
               | e.IBV_QP_EX_WITH_BIND_MW | e.IBV_QP_EX_WITH_LOCAL_INV),
    M.QPT_UD: e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM,
}


def _attach(qp, gid):
    return Raw.attach_mcast(qp_pointer(qp), gid)


def _detach(qp, gid):
    return Raw.detach_mcast(qp_pointer(qp), gid)


def _async_events(ctx, wait):
    """The types of the async events pending on CTX, each acked
    (ibv_get_async_event(3), its fd in non-blocking mode as the page
    describes): WAIT seconds at most for the first (a guard against a hang
    when none comes, not a timed check), none for the rest. The fd may be
    readable with an event the library drops (droce's shim: one for an
    object destroyed since), which then reads as EAGAIN."""
    fd, got = async_fd(ctx), []
    os.set_blocking(fd, False)
    end = time.monotonic() + wait
    while select.select([fd], [], [], 0 if got else max(0.0, end - time.monotonic()))[0]:
        try:
            ev = ctx.get_async_event()
        except PyverbsRDMAError:
            if got or time.monotonic() >= end:
                break
            continue
        got.append(int(ev.event_type))
        ev.ack()
    return got


# What a side makes its objects with: here, or (peer.py) in the process
# on the other daemon, where Peer.lib.X runs LIB.X.
LIB = SimpleNamespace(
    Context=d.Context, PD=PD, CQ=CQ, QPEx=QPEx, QPInitAttrEx=QPInitAttrEx, QPCap=QPCap,
    QPAttr=QPAttr, MR=MR, MW=MW, MWBindInfo=MWBindInfo, SGE=SGE, RecvWR=RecvWR,
    SendWR=SendWR, AH=AH, AHAttr=AHAttr, GID=GID, GlobalRoute=GlobalRoute, SRQ=SRQ,
    SrqAttr=SrqAttr, SrqInitAttr=SrqInitAttr, SrqInitAttrEx=SrqInitAttrEx,
    attach_mcast=_attach, detach_mcast=_detach, CMEventChannel=CMEventChannel, CMID=CMID,
    CMEvent=CMEvent, AddrInfo=AddrInfo, ConnParam=ConnParam, async_events=_async_events)


def inc_rkey(k):
    """ibv_inc_rkey(): the next key byte, same index."""
    return (k & ~0xff) | ((k + 1) & 0xff)


class Side:
    """One end of a pair: PD, CQ, QP, its MR and the MR's shadow. LIB
    makes its objects: here, or in the peer process (peer.py)."""

    def __init__(self, ctx, qpt, gid_index, lib=LIB, ops=None, srq=False):
        self.ctx, self.lib = ctx, lib
        self.pd = lib.PD(ctx)
        self.pd2 = lib.PD(ctx)           # another PD of the context, for invalid binds
        self.cq = lib.CQ(ctx, 64)
        # SRQ: its receives come from a shared receive queue (ibv_create_srq(3))
        self.srq = lib.SRQ(self.pd, lib.SrqInitAttr(lib.SrqAttr(max_wr=16, max_sge=1))) \
            if srq else None
        cap = lib.QPCap(max_send_wr=16, max_recv_wr=0 if srq else 16, max_send_sge=1,
                        max_recv_sge=0 if srq else 1)
        ia = lib.QPInitAttrEx(qp_type=qpt, scq=self.cq, rcq=self.cq, cap=cap, pd=self.pd,
                              srq=self.srq,
                              comp_mask=e.IBV_QP_INIT_ATTR_PD
                              | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                              send_ops_flags=SEND_OPS[qpt] if ops is None else ops)
        self.qp = lib.QPEx(ctx, ia)
        self.mr = lib.MR(self.pd, SIZE, FULL)
        # binds only: a window granting remote write or atomic needs the MR's
        # local write (IBA C10-75), which this one lacks
        self.ro = lib.MR(self.pd, SIZE, M.REMOTE_READ | M.MW_BIND)
        self.shadow = bytearray(SIZE)
        dead = lib.MR(self.pd, SIZE, FULL)   # the keys of a destroyed MR, for invalid WRs
        self.dead_lkey, self.dead_rkey = dead.lkey, dead.rkey
        dead.close()
        self.mr.write(bytes(SIZE), SIZE, 0)
        self.gid = ctx.query_gid(1, gid_index).gid    # as text: usable on either side
        self.recvs = []              # posted receives: (wr_id, offset, length)
        self.mws = []                # type 2 windows: {"mw", "rkey", "off", "len", "valid"}
        self.groups = set()          # the multicast GIDs (bytes) its QP is attached to
        self.group_ahs = {}          # multicast GID -> AH to send to it

    def close(self):
        # pyverbs closes children with their PD and context; an explicit
        # order keeps the windows' MR and the QP's CQ alive long enough.
        for w in self.mws:
            w["mw"].close()
        for g in self.groups:        # groups are left before the QP goes
            err = self.lib.detach_mcast(self.qp, g)
            if err:
                raise OSError(err, "ibv_detach_mcast at teardown")
        self.qp.close()
        if self.srq:
            self.srq.close()
        self.mr.close()
        self.ro.close()
        self.cq.close()
        self.pd.close()
        self.pd2.close()


class Pair:
    """Side a on CTX_A, made here; side b on CTX_B, made with LIB_B (here,
    or in the peer process on the other daemon)."""

    def __init__(self, ctx_a, ctx_b, qpt, gid_index, lib_b=LIB, ops=None, srq=False):
        self.sides(qpt, Side(ctx_a, qpt, gid_index, ops=ops),
                   Side(ctx_b, qpt, gid_index, lib_b, ops, srq), gid_index)
        for s, peer in ((self.a, self.b), (self.b, self.a)):
            self.connect(s, peer)
        if qpt == M.QPT_UD:
            for s, peer in ((self.a, self.b), (self.b, self.a)):
                s.ah = s.lib.AH(s.pd, attr=self.ah_attr(s, peer.gid))
            lib = self.b.lib
            dead = lib.QPEx(ctx_b, lib.QPInitAttrEx(   # a destroyed QP's number, for invalid sends
                qp_type=qpt, scq=self.b.cq, rcq=self.b.cq, pd=self.b.pd,
                cap=lib.QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1),
                comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                send_ops_flags=SEND_OPS[qpt]))
            self.dead_qpn = dead.qp_num
            dead.close()

    def sides(self, qpt, a, b, gid_index):
        self.qpt, self.a, self.b, self.gid_index = qpt, a, b, gid_index
        self.broken = False          # an RC error put a QP in ERR: the pair is done
        self.err_side = None
        self.wr_id = 0

    @classmethod
    def of(cls, qpt, a, b, gid_index):
        """A pair of two sides whose QPs someone else connected (rdma_cm)."""
        p = cls.__new__(cls)
        p.sides(qpt, a, b, gid_index)
        return p

    def ah_attr(self, s, gid):
        """S's address attributes to the GID (text)."""
        lib = s.lib
        return lib.AHAttr(gr=lib.GlobalRoute(dgid=lib.GID(gid), sgid_index=self.gid_index),
                          is_global=1, port_num=1)

    def group_ah(self, s, gid):
        """SIDE's AH to the multicast group GID (16 bytes)."""
        if gid not in s.group_ahs:
            text = ":".join(gid[i:i + 2].hex() for i in range(0, 16, 2))
            s.group_ahs[gid] = s.lib.AH(s.pd, attr=self.ah_attr(s, text))
        return s.group_ahs[gid]

    def connect(self, s, peer):
        a = s.lib.QPAttr()
        a.port_num, a.pkey_index = 1, 0
        if self.qpt == M.QPT_UD:
            a.qkey = QKEY
        else:
            a.qp_access_flags = M.LOCAL_WRITE | M.REMOTE_WRITE | M.REMOTE_READ
            if self.qpt == M.QPT_RC:
                a.qp_access_flags |= M.REMOTE_ATOMIC
            a.dest_qp_num = peer.qp.qp_num
            a.ah_attr = self.ah_attr(s, peer.gid)
            a.path_mtu, a.max_dest_rd_atomic, a.min_rnr_timer = e.IBV_MTU_1024, 4, 12
            a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic = 14, 7, 7, 4
        s.qp.to_init(a)
        s.qp.to_rtr(a)
        s.qp.to_rts(a)

    def close(self):
        self.a.close()
        self.b.close()

    def next_id(self):
        self.wr_id += 1
        return self.wr_id

    def post_recv(self, s, off, n):
        wid = self.next_id()
        (s.srq or s.qp).post_recv(s.lib.RecvWR(wid, 1, [s.lib.SGE(s.mr.buf + off, n, s.mr.lkey)]))
        s.recvs.append((wid, off, n))

    @staticmethod
    def poll(cq, n):
        """N completions of CQ. Not a timed check but a guard against a
        hang (loopback completes in microseconds): none in 20 s ends the
        sequence as a divergence rather than stalling every later step."""
        got, end = [], time.monotonic() + 20
        while len(got) < n and time.monotonic() < end:
            k, wcs = cq.poll(n - len(got))
            got += wcs[:k]
        if len(got) < n:
            raise TimeoutError(f"{len(got)} of {n} completions in 20 s")
        return got

    @staticmethod
    def drain(cq):
        k, wcs = cq.poll(16)
        return wcs[:k]


def u64(b):
    return struct.unpack("<Q", bytes(b))[0]


def p64(v):
    return struct.pack("<Q", v & (2**64 - 1))


def be32(v):
    """The raw __be32 a little-endian host sees for V."""
    return struct.unpack("<I", struct.pack(">I", v))[0]
