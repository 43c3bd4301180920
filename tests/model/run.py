#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Random verb sequences over live objects, checked against verbs.py.

  run.py --seed N [--steps M] [--invalid PERCENT] [--trace] [--device NAME]
         [--peer COMMAND] [--shrink [--keep REGEX]... [--save FILE]]
  run.py --replay FILE [--trace]

The seed alone decides the sequence: it draws each step (an action and the
step's own seed). Every call's result (success, or the errno), every
completion and every byte the traffic moves (traffic.py) is compared with
what the model says; each divergence is printed with the calls that led
to it. --shrink reduces a failing sequence to a minimal one (ddmin over
its steps) and saves it for --replay. Exit 1 on any divergence. RC QPs of
the object walk are connected to themselves; the traffic's pairs use one
context or two: both here, or (--peer, the droce-run command of another
daemon) the second one in a child process on that daemon (peer.py).
"""
import argparse
import errno as E
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verbs as M  # noqa: E402
from raw import Raw, set_mw_rkey  # noqa: E402
import traffic as T  # noqa: E402
from traffic import SIZE  # noqa: E402
from peer import Peer  # noqa: E402
from ddmin import ddmin  # noqa: E402
from queues import QueueSteps  # noqa: E402
from cm import CmSteps  # noqa: E402
from cmconn import CmConnSteps  # noqa: E402

import pyverbs.device as d  # noqa: E402
import pyverbs.enums as e  # noqa: E402
from pyverbs.addr import AHAttr, GlobalRoute  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.mr import MR, MW, MWBind, MWBindInfo  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402
from pyverbs.wr import SGE  # noqa: E402
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx  # noqa: E402

ANY = "any errno"        # the model only promises a failure
EITHER = "either"        # success or failure: a later step decides
WC_STATUS = {v: n for n, v in vars(e).items()
             if n.startswith("IBV_WC_") and (n.endswith("_ERR") or n == "IBV_WC_SUCCESS")}
MAX = 4                  # live objects per kind, to keep sequences dense
MCAST_GIDS = [bytes(10) + b"\xff\xff" + bytes([239, 1, 0, n]) for n in (1, 2)]


class Divergence(Exception):
    pass


class Run(QueueSteps, CmSteps, CmConnSteps):
    def __init__(self, seed, invalid, dev, trace=False, quiet=False, peer=None,
                 common=False):
        self.trace, self.quiet = trace, quiet
        self.master = random.Random(seed)   # picks the steps
        self.rng = None                     # one per step, from the step's own seed
        self.steps = []                     # (action, step seed): what --replay runs
        self.first = None                   # (step number, text) of the first divergence
        self.invalid = invalid / 100.0
        self.log, self.log_step = [], []    # every call, and the step that made it
        self.results = []                   # what each call gave (--record)
        self.divergences = 0
        self.ctx = d.Context(name=dev)
        self.attr = self.ctx.query_device()
        self.gid_index = int(os.environ.get("DROCE_GID_INDEX", "1"))
        self.gid = self.ctx.query_gid(1, self.gid_index)
        self.raw = Raw(dev)
        self.pds, self.cqs, self.qps, self.mrs, self.mws = [], [], [], [], []
        self.srqs = []
        self.cm_channel, self.cm_ids, self.cm_lost = None, [], []    # rdma_cm (cm.py)
        self.cm_conns, self.cm_ports = [], 0     # its connections (cmconn.py)
        self.raw_qps = []        # [ptr, qp_type, set of groups]
        self.raw_mrs = []
        self.dev, self.ctx2, self.pairs = dev, None, []
        # PEER (a droce-run command for the other daemon): a pair's second
        # context is there, in a child process (peer.py), not here
        self.peer = Peer(peer) if peer else None
        self.common = common     # leave out verbs.NOT_COMMON (the differential run)

    # -- checking -------------------------------------------------------
    def call(self, text, fn, want):
        """Run FN (a verb returning an errno, 0, or raising), compare with WANT
        (0, an errno, ANY or EITHER). Returns None when the call failed, else its
        result (True for a verb that returns nothing)."""
        self.log.append(text)
        self.log_step.append(len(self.steps))
        got, res = 0, None
        try:
            res = fn()
            if isinstance(res, tuple):          # raw pointer verbs: (ptr, errno)
                res, got = res
            elif isinstance(res, int) and not isinstance(res, bool):
                got, res = res, None
        except PyverbsRDMAError as x:
            got = x.error_code if x.error_code > 0 else -1
        ok = got == want or (want == ANY and got != 0) or want == EITHER
        self.results.append(self.name(got))
        if self.trace:
            print(f"{len(self.log):5} {text}: {self.name(got)}")
        if not ok:
            self.diverge(f"{text}: want {self.name(want)}, got {self.name(got)}")
        if got != 0:
            return None
        return True if res is None else res

    def diverge(self, what):
        self.divergences += 1
        if self.first is None:
            self.first = (len(self.steps), what)
        if self.quiet:
            return
        print(f"DIVERGENCE |{kind(what)}| at call {len(self.log)}: {what}")
        for i, t in list(enumerate(self.log, 1))[-30:]:   # --shrink finds the rest
            print(f"    {i:4} {t}")

    @staticmethod
    def name(code):
        if code == 0:
            return "success"
        if code in (ANY, EITHER):
            return code
        return E.errorcode.get(code, str(code))

    def avoid(self, what):
        """Whether to leave WHAT (a key of verbs.NOT_COMMON) out."""
        assert what in M.NOT_COMMON
        return self.common

    def bad(self):
        return self.rng.random() < self.invalid

    def pick(self, lst, cond=lambda o: True):
        c = [o for o in lst if cond(o)]
        return self.rng.choice(c) if c else None

    # -- PD, CQ ---------------------------------------------------------
    def alloc_pd(self):
        pd = self.call("ibv_alloc_pd(ctx)", lambda: PD(self.ctx), 0)
        if pd:
            self.pds.append(pd)

    def dealloc_pd(self):
        # pyverbs closes a PD's children first, so only idle PDs are freed.
        pd = self.pick(self.pds, lambda p: not any(o["pd"] is p for o in self.qps + self.mrs
                                                   + self.mws + self.srqs))
        if pd and self.call("ibv_dealloc_pd(pd)", pd.close, 0):
            self.pds.remove(pd)

    def create_cq(self):
        if self.bad():
            n = self.attr.max_cqe + 1
            self.call(f"ibv_create_cq(cqe={n}) [cqe above max_cqe]",
                      lambda: CQ(self.ctx, n), E.EINVAL)
            return
        n = self.rng.randint(1, 256)
        cq = self.call(f"ibv_create_cq(cqe={n})", lambda: CQ(self.ctx, n), 0)
        if cq:
            self.cqs.append(cq)

    def destroy_cq(self):
        cq = self.pick(self.cqs, lambda c: not any(q["cq"] is c for q in self.qps))
        if cq and self.call("ibv_destroy_cq(cq)", cq.close, 0):
            self.cqs.remove(cq)

    # -- QP -------------------------------------------------------------
    def create_qp(self):
        pd, cq = self.pick(self.pds), self.pick(self.cqs)
        if not (pd and cq):
            return
        kind = self.rng.choice(("rc", "ud", "rc-ex"))
        qpt = e.IBV_QPT_UD if kind == "ud" else e.IBV_QPT_RC
        wr, why, want = 8, "", 0
        if self.bad():
            wr, why, want = self.attr.max_qp_wr + 1, " [max_send_wr above max_qp_wr]", E.EINVAL
        cap = QPCap(max_send_wr=wr, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
        if kind == "rc-ex":
            ops = e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_SEND
            ia = QPInitAttrEx(qp_type=qpt, scq=cq, rcq=cq, cap=cap, pd=pd,
                              comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                              send_ops_flags=ops)
            fn = lambda: QPEx(self.ctx, ia)  # noqa: E731
        else:
            fn = lambda: QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap))  # noqa: E731
        qp = self.call(f"ibv_create_qp({kind}, max_send_wr={wr}){why}", fn, want)
        if qp:
            self.qps.append({"qp": qp, "pd": pd, "cq": cq, "type": qpt, "ex": kind == "rc-ex",
                             "state": M.RESET})

    def qp_attr(self, q, state):
        a = QPAttr(qp_state=state)
        a.port_num, a.pkey_index = 1, 0
        if q["type"] == e.IBV_QPT_UD:
            a.qkey = 0x11111111
        else:
            a.qp_access_flags = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
                                 | e.IBV_ACCESS_LOCAL_WRITE)
            a.dest_qp_num = q["qp"].qp_num     # loopback: connected to itself
            a.ah_attr = AHAttr(gr=GlobalRoute(dgid=self.gid, sgid_index=self.gid_index),
                               is_global=1, port_num=1)
            a.path_mtu, a.max_dest_rd_atomic, a.min_rnr_timer = e.IBV_MTU_1024, 1, 12
            a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic = 14, 7, 7, 1
        return a

    def modify_qp(self):
        q = self.pick(self.qps)
        if not q:
            return
        s = q["state"]
        names = {M.RESET: "RESET", M.INIT: "INIT", M.RTR: "RTR", M.RTS: "RTS", M.ERR: "ERR"}
        if self.bad():
            wrong = [t for t in (M.RTR, M.RTS) if t not in M.QP_TRANSITIONS[s]]
            if wrong:
                t = self.rng.choice(wrong)
                self.call(f"ibv_modify_qp({names[s]} -> {names[t]}) [not a transition]",
                          lambda: q["qp"].modify(QPAttr(qp_state=t), e.IBV_QP_STATE), E.EINVAL)
                return
        fwd = {M.RESET: M.INIT, M.INIT: M.RTR, M.RTR: M.RTS}.get(s)
        t = fwd if fwd is not None and self.rng.random() < 0.8 else \
            self.rng.choice(M.QP_TRANSITIONS[s])
        a = self.qp_attr(q, t)
        fn = {M.INIT: q["qp"].to_init, M.RTR: q["qp"].to_rtr, M.RTS: q["qp"].to_rts}.get(t)
        if fn is None or s == t:   # RESET, ERR, and X -> X take the state alone
            fn = lambda a: q["qp"].modify(QPAttr(qp_state=t), e.IBV_QP_STATE)  # noqa: E731
        if fn == q["qp"].to_rtr and s == M.RTR:
            return
        if self.call(f"ibv_modify_qp({names[s]} -> {names[t]})", lambda: fn(a), 0):
            q["state"] = t

    def destroy_qp(self):
        q = self.pick(self.qps)
        if q and self.call("ibv_destroy_qp(qp)", q["qp"].close, 0):
            self.qps.remove(q)

    # -- MR, MW ---------------------------------------------------------
    def reg_mr(self):
        pd = self.pick(self.pds)
        if not pd:
            return
        if self.bad():
            why, (acc, want) = self.rng.choice(list(M.MR_ACCESS.invalid.items()))
            self.call(f"ibv_reg_mr(access={acc:#x}) [{why}]", lambda: MR(pd, 4096, acc), want)
            return
        acc = self.rng.choice(M.VALID_ACCESS)
        n = self.rng.choice((1, 64, 4096, 65536))
        mr = self.call(f"ibv_reg_mr(length={n}, access={acc:#x})", lambda: MR(pd, n, acc), 0)
        if mr:
            self.mrs.append({"mr": mr, "pd": pd, "access": acc, "len": n, "windows": 0})

    def reg_mr_iova(self):
        bad = self.bad()
        acc, want, why = M.LOCAL_WRITE | M.REMOTE_READ, 0, ""
        if bad:
            why, (acc, want) = self.rng.choice(list(M.MR_ACCESS.invalid.items()))
            why = f" [{why}]"
        iova = self.rng.choice((0, 0x1000, 1 << 40))
        mr = self.call(f"ibv_reg_mr_iova(iova={iova:#x}, access={acc:#x}){why}",
                       lambda: self.raw.reg_mr_iova(4096, iova, acc,
                                                    self.avoid("iova page offset")), want)
        if mr:
            self.raw_mrs.append(mr)

    def dereg_mr(self):
        if self.raw_mrs and self.rng.random() < 0.3:
            mr = self.raw_mrs.pop()
            self.call("ibv_dereg_mr(iova mr)", lambda: self.raw.dereg_mr(mr), 0)
            return
        m = self.pick(self.mrs, lambda m: not (m["windows"] and self.avoid("dereg_mr errno")))
        if not m:
            return
        want = ANY if m["windows"] else 0
        why = " [a window is bound]" if m["windows"] else ""
        if self.call(f"ibv_dereg_mr(mr){why}", m["mr"].close, want) and want == 0:
            self.mrs.remove(m)

    def alloc_mw(self):
        pd = self.pick(self.pds)
        if not pd:
            return
        if self.bad():
            why, (t, want) = self.rng.choice(list(M.VERBS["ibv_alloc_mw"].args["type"]
                                                  .invalid.items()))
            self.call(f"ibv_alloc_mw(type={t}) [{why}]", lambda: MW(pd, t), want)
            return
        t = self.rng.choice((M.MW_TYPE_1, M.MW_TYPE_2))
        mw = self.call(f"ibv_alloc_mw(type={t})", lambda: MW(pd, t), 0)
        if mw:
            self.mws.append({"mw": mw, "pd": pd, "type": t, "mr": None})

    def dealloc_mw(self):
        w = self.pick(self.mws)
        if w and self.call("ibv_dealloc_mw(mw)", w["mw"].close, 0):
            self.mws.remove(w)
            if w["mr"]:
                w["mr"]["windows"] -= 1

    def completion(self, q):
        """The status of the one completion a signalled post made."""
        for _ in range(200000):
            n, wcs = q["cq"].poll(1)
            if n:
                return wcs[0].status
        raise Divergence("no completion")

    def bind_mw(self):
        q = self.pick(self.qps, lambda q: q["type"] == e.IBV_QPT_RC and q["state"] == M.RTS)
        if not q:
            return
        w = self.pick(self.mws, lambda w: w["pd"] is q["pd"] and w["type"] == M.MW_TYPE_1
                      and w["mr"] is None)
        bad = self.bad()
        case = self.rng.choice(("MR without MW_BIND", "one byte past the MR")) if bad else ""
        nobind = case == "MR without MW_BIND"
        m = self.pick(self.mrs, lambda m: m["pd"] is q["pd"]
                      and bool(m["access"] & M.MW_BIND) != nobind)
        if not (w and m):
            return
        acc = e.IBV_ACCESS_REMOTE_READ
        off = self.rng.randrange(m["len"])
        n = self.rng.randint(1, m["len"] - off)
        if case == "one byte past the MR":
            n = m["len"] - off + 1
        info = MWBindInfo(m["mr"], m["mr"].buf + off, n, acc)
        text = (f"ibv_bind_mw(rc qp, type 1 mw, mr+{off}, length={n}, access={acc:#x})"
                + (f" [{case}]" if bad else ""))
        # ibv_bind_mw(3): a bad bind fails here or in its completion, which
        # then leaves the RC QP in ERR.
        old = w["mw"].rkey
        if not self.call(text, lambda: q["qp"].bind_mw(w["mw"], MWBind(info, e.IBV_SEND_SIGNALED)),
                         EITHER if bad else 0):
            return
        st = self.completion(q)
        self.call(f"  completion of the bind: {WC_STATUS.get(st, st)}",
                  lambda: 0 if st == 0 else E.EIO, ANY if bad else 0)
        if st == 0:
            w["mr"] = m
            m["windows"] += 1
        else:
            q["state"] = M.ERR
            # ibv_bind_mw(3)'s NOTES: the new R_Key is in mw->rkey once
            # posted; after a failed completion the caller puts the old one
            # back (rxe checks the next bind's key against the window's,
            # droce finds the window by its handle: interop.md, seed 14)
            set_mw_rkey(w["mw"], old)

    def wr_batch(self):
        q = self.pick(self.qps, lambda q: q["ex"] and q["state"] == M.RTS)
        if not q:
            return
        x = q["qp"]
        m = self.pick(self.mrs, lambda m: m["pd"] is q["pd"] and m["access"] & M.REMOTE_WRITE)
        bad_op = () if self.avoid("builder outside send_ops_flags") else ("bad-op",)
        how = self.rng.choice(("abort", "empty") + bad_op + ("write",) * (3 if m else 0))
        x.wr_start()
        if how == "abort":     # cannot fail: logged, nothing to check
            x.wr_abort()
            self.call("ibv_wr_start; ibv_wr_abort", lambda: 0, 0)
            return
        want, text = 0, "ibv_wr_start; ibv_wr_complete"
        half, data = 0, b""
        if how == "write":     # the MR's second half onto its first, through its rkey
            half = m["len"] // 2
            data = self.rng.randbytes(half)
            if half:
                m["mr"].write(data, half, half)
            x.wr_id, x.wr_flags = 7, e.IBV_SEND_SIGNALED
            x.wr_rdma_write(m["mr"].rkey, m["mr"].buf)
            x.wr_set_sge(SGE(m["mr"].buf + m["len"] // 2, m["len"] // 2, m["mr"].lkey))
            text = (f"ibv_wr_start; ibv_wr_rdma_write(rkey, buf); ibv_wr_set_sge(len="
                    f"{m['len'] // 2}); ibv_wr_complete")
        elif how == "bad-op":    # not in the QP's send_ops_flags
            x.wr_id, x.wr_flags = 8, e.IBV_SEND_SIGNALED
            x.wr_atomic_fetch_add(0, 0, 1)
            x.wr_set_sge(SGE(0, 8, 0))
            want, text = ANY, ("ibv_wr_start; ibv_wr_atomic_fetch_add; ibv_wr_complete"
                               " [operation not in send_ops_flags]")
        if self.call(text, x.wr_complete, want) and how == "write":
            st = self.completion(q)
            self.call(f"  completion of the write: {WC_STATUS.get(st, st)}",
                      lambda: 0 if st == 0 else E.EIO, 0)
            if st != 0:
                q["state"] = M.ERR
            elif half:
                same = m["mr"].read(half, 0) == data
                self.call(f"  the {half} bytes written", lambda: 0 if same else E.EIO, 0)

    # -- multicast ------------------------------------------------------
    def mcast(self):
        if len(self.raw_qps) < 2 and self.rng.random() < 0.3:
            qpt = self.rng.choice((M.QPT_UD, M.QPT_UD, M.QPT_RC))
            qp = self.call(f"ibv_create_qp({'ud' if qpt == M.QPT_UD else 'rc'}) [raw]",
                           lambda: self.raw.create_qp(qpt), 0)
            if qp:
                self.raw_qps.append([qp, qpt, set()])
            return
        if not self.raw_qps:
            return
        r = self.rng.choice(self.raw_qps)
        qp, qpt, groups = r
        g = self.rng.randrange(len(MCAST_GIDS))
        gid = MCAST_GIDS[g]
        op = self.rng.choice(("attach", "detach", "destroy"))
        if qpt != M.QPT_UD and op == "attach":
            self.call(f"ibv_attach_mcast(rc qp, group {g}) [not UD]",
                      lambda: self.raw.attach_mcast(qp, gid), ANY)
        elif op == "attach":
            twice = " (again)" if g in groups else ""
            if self.call(f"ibv_attach_mcast(ud qp, group {g}){twice}",
                         lambda: self.raw.attach_mcast(qp, gid), 0):
                groups.add(g)
        elif op == "detach" and (g in groups or self.bad()):
            want = 0 if g in groups else ANY
            why = "" if g in groups else " [not attached]"
            if self.call(f"ibv_detach_mcast(ud qp, group {g}){why}",
                         lambda: self.raw.detach_mcast(qp, gid), want):
                groups.discard(g)
        elif op == "destroy" and not groups:
            if self.call("ibv_destroy_qp(raw qp)", lambda: self.raw.destroy_qp(qp), 0):
                self.raw_qps.remove(r)

    # -- traffic between two QPs (traffic.py) ---------------------------
    def same(self, text, got, want):
        """Log a value the model predicts; a mismatch is a divergence."""
        self.log.append(text)
        self.log_step.append(len(self.steps))
        self.results.append(repr(got))
        if self.trace:
            print(f"{len(self.log):5} {text}: {got}")
        if got != want:
            self.diverge(f"{text}: want {want}, got {got}")
        return got == want

    def pair_up(self):
        qpt = self.rng.choice((M.QPT_RC, M.QPT_RC, M.QPT_UC, M.QPT_UD))
        two = self.rng.random() < 0.5
        lib = self.peer.lib if self.peer else T.LIB
        if two and self.ctx2 is None:
            self.ctx2 = lib.Context(name=self.dev)
        where = ("two daemons" if self.peer else "two contexts") if two else "loopback"
        srq = self.rng.random() < 0.3        # side b takes its receives from an SRQ
        where += ", b on an SRQ" if srq else ""
        ops = None
        if qpt == M.QPT_UC and self.avoid("uc local_inv"):
            ops = T.SEND_OPS[qpt] & ~e.IBV_QP_EX_WITH_LOCAL_INV
        p = self.call(f"pair of {T.NAMES[qpt]} QPs ({where}):"
                      " ibv_alloc_pd, ibv_create_cq, ibv_create_qp_ex, ibv_reg_mr,"
                      " ibv_modify_qp to RTS on each side",
                      lambda: T.Pair(self.ctx, self.ctx2 if two else self.ctx, qpt,
                                     self.gid_index, lib if two else T.LIB, ops, srq), 0)
        if p:
            self.pairs.append(p)

    def pair_list(self, p=None):
        """ibv_post_send with a list of WRs on a working pair (queues.py):
        one of self.pairs, or P (an rdma_cm connection's, cmconn.py)."""
        p = p or self.pick(self.pairs, lambda p: not p.broken)
        if p:
            src, dst = (p.a, p.b) if self.rng.random() < 0.5 else (p.b, p.a)
            self.post_send_list(p, src, dst)
            for s in (p.a, p.b):
                self.same(f"  the {SIZE} bytes of {'a' if s is p.a else 'b'}'s MR match the model",
                          s.mr.read(SIZE, 0) == bytes(s.shadow), True)

    def pair_down(self):
        p = self.pick(self.pairs)
        if p and self.call(f"destroy the {T.NAMES[p.qpt]} pair", p.close, 0):
            self.pairs.remove(p)

    def fill(self, s, off, n):
        # pyverbs' MR.write does not check bounds: a slip here corrupts the heap
        assert 0 <= off and off + n <= SIZE, (off, n)
        data = self.rng.randbytes(n)
        if n:
            s.mr.write(data, n, off)
        s.shadow[off:off + n] = data
        return data

    def pair_op(self, p=None):
        """One operation on a pair: one of self.pairs, or P (an rdma_cm
        connection's, never broken here: cmconn.py ends those)."""
        p = p or self.pick(self.pairs)
        if not p:
            return
        src, dst = (p.a, p.b) if self.rng.random() < 0.5 else (p.b, p.a)
        if p.broken:     # an error ended it: see a flush now and then, else replace it
            if p.err_side and self.rng.random() < 0.3:
                return self.flushed(p)
            if p.err_side and p.qpt != M.QPT_RC and not self.avoid("SQE") \
                    and self.rng.random() < 0.5:
                return self.sqe_to_rts(p)
            if self.call(f"destroy the {T.NAMES[p.qpt]} pair (after an error)", p.close, 0):
                self.pairs.remove(p)
            return
        if p.qpt == M.QPT_UD and self.rng.random() < 0.3:
            if self.avoid("multicast"):
                return
            return self.mcast_send(p, src, dst)
        if self.rng.random() < 0.1 and not self.avoid("lkey of a deregistered MR") \
                and self.bad():
            return self.local_error(p, src)
        op = self.rng.choice([n for n, o in M.OPS.items() if p.qpt in o.qp_types
                              and not (n == "local_inv" and p.qpt == M.QPT_UC
                                       and self.avoid("uc local_inv"))])
        OP_METHODS[op](self, p, src, dst, op)
        for s in (p.a, p.b):      # every byte of both MRs, after every operation
            self.same(f"  the {SIZE} bytes of {'a' if s is p.a else 'b'}'s MR match the model",
                      s.mr.read(SIZE, 0) == bytes(s.shadow), True)

    def sqe_to_rts(self, p):
        """A UC or UD QP in SQE goes back to RTS (ibv_modify_qp(3)) and the
        pair carries on: the send error touched nothing else."""
        x = p.err_side.qp
        if self.call("ibv_modify_qp(SQE -> RTS)", lambda: x.modify(
                p.err_side.lib.QPAttr(qp_state=M.RTS, cur_qp_state=M.SQE),
                e.IBV_QP_STATE | e.IBV_QP_CUR_STATE), 0):
            self.same("  QP state", x.query(e.IBV_QP_STATE)[0].qp_state, M.RTS)
            self.same("  nothing left in its CQ", len(p.drain(p.err_side.cq)), 0)
            p.broken, p.err_side = False, None

    def flushed(self, p):
        """A WR posted to the QP an error put in ERR flushes (ibv_poll_cq(3))."""
        s = p.err_side
        x = s.qp
        x.wr_start()
        x.wr_id, x.wr_flags = p.next_id(), e.IBV_SEND_SIGNALED
        x.wr_send()
        if p.qpt == M.QPT_UD:
            x.wr_set_ud_addr(s.ah, p.a.qp.qp_num, T.QKEY)
        x.wr_set_sge(s.lib.SGE(s.mr.buf, 1, s.mr.lkey))
        if self.call("ibv_wr_send on the QP in ERR", x.wr_complete, EITHER):
            wcs = p.poll(s.cq, 1)
            self.same("  its completion status", [w.status for w in wcs], [M.WC_WR_FLUSH_ERR])

    def post(self, p, src, build, text, want_wc, n, want_post=0):
        """Post one signalled WR (BUILD sets opcode and SGE), poll its
        completion and check it. Returns the status, or None if nothing was
        posted (WANT_POST EITHER: a failure at ibv_wr_complete is allowed)."""
        x = src.qp
        x.wr_start()
        wid = p.next_id()
        x.wr_id, x.wr_flags = wid, e.IBV_SEND_SIGNALED
        build(x)
        if not self.call(text, x.wr_complete, want_post):
            return None
        wcs = p.poll(src.cq, 1)
        if not self.same("  requester completion (wr_id, status)",
                         [(w.wr_id, WC_STATUS.get(w.status, w.status)) for w in wcs],
                         [(wid, WC_STATUS.get(want_wc[0], want_wc[0]))]):
            return wcs[0].status if wcs else None
        w = wcs[0]
        if w.status == 0:
            self.same("  requester completion opcode", w.opcode, want_wc[1])
            if want_wc[1] in (M.WC_RDMA_READ, M.WC_COMP_SWAP, M.WC_FETCH_ADD):
                self.same("  requester completion byte_len", w.byte_len, n)
        return w.status

    def state_after_error(self, p, src):
        """A send error's QP state: ERR on RC, SQE on UC and UD."""
        if p.qpt == M.QPT_RC or not self.avoid("SQE"):
            self.same("  QP state after the error", src.qp.query(e.IBV_QP_STATE)[0].qp_state,
                      M.STATE_AFTER_SEND_ERROR[p.qpt])

    def error(self, p, src, status):
        """An RC error: the requester's QP is in ERR, the pair is done."""
        if status not in (None, 0) and p.qpt == M.QPT_RC:
            p.broken, p.err_side = True, src
            self.same("  requester QP state after the error",
                      src.qp.query(e.IBV_QP_STATE)[0].qp_state, M.ERR)
            for s in (p.a, p.b):       # the responder's error completions: not modelled
                p.drain(s.cq)
            for s in (p.a, p.b):       # the receive buffers a failed send may have touched
                for _, off, n in s.recvs:
                    s.shadow[off:off + n] = s.mr.read(n, off) if n else b""

    def recv_check(self, p, dst, n, imm, flags=0):
        """The responder's receive completion for an N-byte message."""
        wcs = p.poll(dst.cq, 1)
        if not self.same("  responder completion count", len(wcs), 1):
            return
        w = wcs[0]
        wid, off, rlen = dst.recvs.pop(0)
        grh = M.GRH_BYTES if p.qpt == M.QPT_UD else 0
        self.same("  responder completion (wr_id, status, byte_len)",
                  (w.wr_id, WC_STATUS.get(w.status, w.status), w.byte_len),
                  (wid, "IBV_WC_SUCCESS", n + grh))
        mask = e.IBV_WC_WITH_IMM | (0 if self.avoid("WITH_INV flag") else e.IBV_WC_WITH_INV)
        want_flags = ((e.IBV_WC_WITH_IMM if imm is not None else 0) | flags) & mask
        self.same("  responder wc_flags (WITH_IMM, WITH_INV)", w.wc_flags & mask, want_flags)
        if imm is not None:   # pyverbs sends htobe32(imm) and returns the raw __be32
            self.same("  responder imm_data", w.imm_data, T.be32(imm))
        if grh:                        # the GRH bytes are the network's: take them
            dst.shadow[off:off + grh] = dst.mr.read(grh, off)
        return w

    def local_error(self, p, src):
        """Sometimes (an invalid case) a send whose SGE has the lkey of a
        deregistered MR: LOC_PROT_ERR, then the QP in ERR (UD: SQE)."""
        n = self.rng.randint(1, 256)

        def build(x):
            x.wr_send()
            if p.qpt == M.QPT_UD:
                x.wr_set_ud_addr(src.ah, (p.b if src is p.a else p.a).qp.qp_num, T.QKEY)
            x.wr_set_sge(src.lib.SGE(src.mr.buf, n, src.dead_lkey))
        case = "lkey of a deregistered MR"
        st = self.post(p, src, build, f"ibv_wr_send({T.NAMES[p.qpt]}, {n} bytes) [{case}]",
                       (M.LOCAL_ERRORS[case], M.WC_SEND), n)
        if st is None:
            return
        self.state_after_error(p, src)
        p.broken, p.err_side = True, src
        for s in (p.a, p.b):
            p.drain(s.cq)

    def lengths(self, p, cap=2048):
        n = self.rng.choice((0, 1, 8, self.rng.randint(1, cap), cap))
        return n, self.rng.randint(0, SIZE - n)

    def op_send(self, p, src, dst, op):
        mtu = 1024 if p.qpt == M.QPT_UD else 2048
        n, soff = self.lengths(p, mtu)
        grh = M.GRH_BYTES if p.qpt == M.QPT_UD else 0
        if p.qpt == M.QPT_UD and self.bad():
            return self.send_to_dead_qpn(p, src, n, soff)
        short = (p.qpt == M.QPT_RC and n > 0 and not self.avoid("send longer than the receive")
                 and self.bad())
        rlen = n - 1 if short else self.rng.randint(n + grh, min(SIZE, n + grh + 64))
        roff = self.rng.randint(0, SIZE - rlen)
        data = self.fill(src, soff, n)
        p.post_recv(dst, roff, rlen)
        imm = self.rng.getrandbits(32) if op == "send_imm" else None
        inv = None
        if op == "send_inv":
            inv = self.pick(dst.mws, lambda w: w["valid"])
            if inv is None:
                op = "send"

        def build(x):
            if imm is not None:
                x.wr_send_imm(imm)
            elif inv is not None:
                x.wr_send_inv(inv["rkey"])
            else:
                x.wr_send()
            if p.qpt == M.QPT_UD:
                x.wr_set_ud_addr(src.ah, dst.qp.qp_num, T.QKEY)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + soff, n, src.mr.lkey))
        want = (M.REMOTE_ERRORS["send longer than the receive"] if short else 0, M.WC_SEND)
        st = self.post(p, src, build, f"ibv_wr_{op}({T.NAMES[p.qpt]}, {n} bytes into a "
                       f"{rlen}-byte receive){' [send longer than the receive]' if short else ''}",
                       want, n)
        if st is None or st != 0:
            return self.error(p, src, st)
        if self.recv_check(p, dst, n, imm, e.IBV_WC_WITH_INV if inv else 0):
            dst.shadow[roff + grh:roff + grh + n] = data
            if inv:
                inv["valid"] = False

    def mcast_send(self, p, src, dst):
        """A UD SEND to a group DST's QP is attached to (attached here if
        not yet; SRC never is, so no copy comes back to the sender); then,
        now and then, DST leaves the group. Never a group another pair's QP
        is in: its copy would land in whichever receive that QP posts next,
        early or late (a copy handed to another worker arrives later than
        DST's), which no model of this order can predict."""
        others = {g for q in self.pairs if q is not p for s in (q.a, q.b) for g in s.groups}
        gids = [g for g in MCAST_GIDS if g not in src.groups and g not in others]
        if not gids:
            return
        g = self.rng.choice(gids)
        gi = MCAST_GIDS.index(g)
        if g not in dst.groups:
            if not self.call(f"ibv_attach_mcast(ud pair QP, group {gi})",
                             lambda: dst.lib.attach_mcast(dst.qp, g), 0):
                return
            dst.groups.add(g)
        n, soff = self.lengths(p, 1024)
        rlen = self.rng.randint(n + M.GRH_BYTES, min(SIZE, n + M.GRH_BYTES + 64))
        roff = self.rng.randint(0, SIZE - rlen)
        data = self.fill(src, soff, n)
        p.post_recv(dst, roff, rlen)
        ah = p.group_ah(src, g)

        def build(x):
            x.wr_send()
            x.wr_set_ud_addr(ah, M.MCAST_QPN, T.QKEY)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + soff, n, src.mr.lkey))
        st = self.post(p, src, build, f"ibv_wr_send(ud, {n} bytes to group {gi})",
                       (0, M.WC_SEND), n)
        if st == 0 and self.recv_check(p, dst, n, None):
            dst.shadow[roff + M.GRH_BYTES:roff + M.GRH_BYTES + n] = data
        if self.rng.random() < 0.3 and self.call(
                f"ibv_detach_mcast(ud pair QP, group {gi})",
                lambda: dst.lib.detach_mcast(dst.qp, g), 0):
            dst.groups.discard(g)

    def spot(self, off, length, n, align):
        """An offset for N bytes within [OFF, OFF+LENGTH), 8-aligned if
        ALIGN; None if there is none."""
        lo, hi = off, off + length - n
        if align:
            lo, hi = (lo + 7) & ~7, hi & ~7
        if hi < lo:
            return None
        return lo + (self.rng.randint(0, (hi - lo) // 8) * 8 if align
                     else self.rng.randint(0, hi - lo))

    def send_to_dead_qpn(self, p, src, n, soff):
        """A UD SEND to the number of a destroyed QP: sent (UD has no
        acknowledgement), delivered nowhere."""
        self.fill(src, soff, n)

        def build(x):
            x.wr_send()
            x.wr_set_ud_addr(src.ah, p.dead_qpn, T.QKEY)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + soff, n, src.mr.lkey))
        if self.post(p, src, build, f"ibv_wr_send(ud, {n} bytes) [a destroyed QP's number]",
                     (0, M.WC_SEND), n) == 0:
            self.same("  no receive completion anywhere",
                      len(p.drain(p.a.cq)) + len(p.drain(p.b.cq)), 0)

    def remote_key(self, p, dst, n, need, align=False, bad_ok=True):
        """An rkey and offset at DST for N bytes needing access NEED: the
        MR's, or a window's; or (an invalid case, N > 0: IBA 9.4.1.1 checks
        no key for a zero-length transfer) a bad one. Returns (rkey, offset,
        error case or '')."""
        def fits(w):
            return self.spot(w["off"], w["len"], n, align) is not None
        if n and bad_ok and self.bad():
            cases = ["rkey with a wrong key byte", "range past the end of the MR",
                     "rkey of a deregistered MR"]
            if any(w["valid"] and not w["access"] & need and fits(w) for w in dst.mws):
                cases.append("access the MR does not grant")
            if any(not w["valid"] and fits(w) for w in dst.mws):
                cases.append("window invalidated")
            case = self.rng.choice(cases)
            if case == "rkey with a wrong key byte":
                return dst.mr.rkey ^ (1 << self.rng.randrange(8)), 0, case
            if case == "rkey of a deregistered MR":
                return dst.dead_rkey, self.spot(0, SIZE, n, align), case
            if case == "range past the end of the MR":
                return dst.mr.rkey, SIZE if align else SIZE - n + self.rng.randint(1, n), case
            w = self.pick(dst.mws, (lambda w: w["valid"] and not w["access"] & need
                                    and fits(w)) if case.startswith("access")
                          else (lambda w: not w["valid"] and fits(w)))
            return w["rkey"], self.spot(w["off"], w["len"], n, align), case
        ws = [w for w in dst.mws if w["valid"] and w["access"] & need and fits(w)]
        if ws and self.rng.random() < 0.5:
            w = self.rng.choice(ws)
            return w["rkey"], self.spot(w["off"], w["len"], n, align), ""
        return dst.mr.rkey, self.spot(0, SIZE, n, align), ""

    def remote_outcome(self, p, case):
        """The requester status of a remote error on this QP type."""
        if not case or p.qpt == M.QPT_UC:
            return 0
        return M.REMOTE_ERRORS[case]

    def op_write(self, p, src, dst, op):
        n, soff = self.lengths(p)
        rkey, doff, case = self.remote_key(
            p, dst, n, M.REMOTE_WRITE, bad_ok=not (op == "rdma_write_imm" and p.qpt == M.QPT_UC
                                                   and self.avoid("uc write_imm refused")))
        data = self.fill(src, soff, n)
        imm = self.rng.getrandbits(32) if op == "rdma_write_imm" else None
        if imm is not None:
            p.post_recv(dst, 0, 0)

        def build(x):
            if imm is not None:
                x.wr_rdma_write_imm(rkey, dst.mr.buf + doff, imm)
            else:
                x.wr_rdma_write(rkey, dst.mr.buf + doff)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + soff, n, src.mr.lkey))
        st = self.post(p, src, build, f"ibv_wr_{op}({T.NAMES[p.qpt]}, {n} bytes at "
                       f"+{doff}){f' [{case}]' if case else ''}",
                       (self.remote_outcome(p, case), M.WC_RDMA_WRITE), n)
        if st is None or st != 0 or case:
            if st == 0 and p.qpt == M.QPT_UC:   # dropped: the sync's WRITE takes its receive
                self.uc_sync(p, src, dst)
                if imm is not None:
                    p.broken, p.err_side = True, None   # the sync's receive is left: retire
            return self.error(p, src, st)
        dst.shadow[doff:doff + n] = data
        if imm is not None:
            self.recv_check(p, dst, n, imm)
        elif p.qpt == M.QPT_UC:
            self.uc_sync(p, src, dst)

    def uc_sync(self, p, src, dst):
        """UC completes a WRITE once sent, not once placed: a 0-byte
        WRITE_WITH_IMM after it on the same QP is executed after it (IBA
        9.5: in order), so its receive completion says the WRITE is done
        at DST. After a dropped WRITE_WITH_IMM it takes that one's receive,
        which shows the dropped one took none."""
        imm = self.rng.getrandbits(32)
        p.post_recv(dst, 0, 0)

        def build(x):
            x.wr_rdma_write_imm(dst.mr.rkey, dst.mr.buf, imm)
            x.wr_set_sge(src.lib.SGE(src.mr.buf, 0, src.mr.lkey))
        if self.post(p, src, build, "  UC: a 0-byte WRITE_WITH_IMM behind it",
                     (0, M.WC_RDMA_WRITE), 0) == 0:
            self.recv_check(p, dst, 0, imm)

    def op_read(self, p, src, dst, op):
        n, loff = self.lengths(p)
        rkey, roff, case = self.remote_key(p, dst, n, M.REMOTE_READ)

        def build(x):
            x.wr_rdma_read(rkey, dst.mr.buf + roff)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + loff, n, src.mr.lkey))
        st = self.post(p, src, build, f"ibv_wr_rdma_read({n} bytes at +{roff})"
                       f"{f' [{case}]' if case else ''}",
                       (self.remote_outcome(p, case), M.WC_RDMA_READ), n)
        if st is None or st != 0 or case:
            return self.error(p, src, st)
        src.shadow[loff:loff + n] = dst.shadow[roff:roff + n]

    def op_atomic(self, p, src, dst, op):
        rkey, roff, case = self.remote_key(p, dst, 8, M.REMOTE_ATOMIC, align=True)
        if not case and self.bad():
            case = "atomic address not 8-aligned"
            rkey = dst.mr.rkey
            roff = self.rng.randrange(8, SIZE - 8, 8) + self.rng.randint(1, 7) - 8
        loff = self.rng.randrange(0, SIZE - 8, 8)
        if self.rng.random() < 0.5 and roff + 8 <= SIZE:    # a known value, so compare can match
            self.fill(dst, roff, 8)
        old = T.u64(dst.shadow[roff:roff + 8]) if roff + 8 <= SIZE else 0
        a, b = self.rng.choice((old, self.rng.getrandbits(64))), self.rng.getrandbits(64)

        def build(x):
            if op == "atomic_fetch_add":
                x.wr_atomic_fetch_add(rkey, dst.mr.buf + roff, a)
            else:
                x.wr_atomic_cmp_swp(rkey, dst.mr.buf + roff, a, b)
            x.wr_set_sge(src.lib.SGE(src.mr.buf + loff, 8, src.mr.lkey))
        wc = M.WC_FETCH_ADD if op == "atomic_fetch_add" else M.WC_COMP_SWAP
        st = self.post(p, src, build, f"ibv_wr_{op}(at +{roff}, {a:#x}, {b:#x})"
                       f"{f' [{case}]' if case else ''}",
                       (self.remote_outcome(p, case), wc), 8)
        if st is None or st != 0 or case:
            return self.error(p, src, st)
        src.shadow[loff:loff + 8] = T.p64(old)
        new = old + a if op == "atomic_fetch_add" else (b if old == a else old)
        dst.shadow[roff:roff + 8] = T.p64(new)

    def op_bind_mw(self, p, src, dst, op):
        """A type 2 bind on SRC's own QP, over its MR (the window's user is
        the peer). Invalid: a window of another PD, access the MR lacks,
        one byte past the MR."""
        if len(src.mws) >= 3:
            w = src.mws.pop(0)
            self.call("ibv_dealloc_mw(type 2)", w["mw"].close, 0)
        bad = self.bad()
        case = self.rng.choice(("window of another PD", "access beyond the MR's",
                                "one byte past the MR")) if bad else ""
        pd = src.pd2 if case == "window of another PD" else src.pd
        mw = self.call("ibv_alloc_mw(type 2)", lambda: src.lib.MW(pd, M.MW_TYPE_2), 0)
        if not mw:
            return
        mr = src.mr
        if case == "access beyond the MR's":
            mr = src.ro
        n = self.rng.randint(1, SIZE)
        off = self.rng.randint(0, SIZE - n)
        if case == "one byte past the MR":
            n = SIZE - off + 1
        acc = self.rng.choice((M.REMOTE_READ, M.REMOTE_WRITE, M.REMOTE_ATOMIC,
                               M.REMOTE_READ | M.REMOTE_WRITE | M.REMOTE_ATOMIC))
        if p.qpt != M.QPT_RC:
            acc &= ~M.REMOTE_ATOMIC & ~M.REMOTE_READ
            acc = acc or M.REMOTE_WRITE
        if case == "access beyond the MR's":   # IBA C10-75: needs the MR's local write
            acc = M.REMOTE_WRITE
        rkey = T.inc_rkey(mw.rkey)
        info = src.lib.MWBindInfo(mr, mr.buf + off, n, acc)
        want = (M.WC_MW_BIND_ERR if case else 0, M.WC_BIND_MW)
        st = self.post(p, src, lambda x: x.wr_bind_mw(mw, rkey, info),
                       f"ibv_wr_bind_mw(type 2, +{off}, {n} bytes, access={acc:#x})"
                       f"{f' [{case}]' if case else ''}", want, 0,
                       EITHER if case else 0)   # ibv_bind_mw(3): here or in the completion
        if st == 0 and not case:
            src.mws.append({"mw": mw, "rkey": rkey, "off": off, "len": n, "access": acc,
                            "valid": True})
        else:
            # a failed bind is a send error like any other: RC QP in ERR,
            # UC in SQE; the pair is done
            if st not in (None, 0):
                self.state_after_error(p, src)
                p.broken, p.err_side = True, src
                for s in (p.a, p.b):
                    p.drain(s.cq)
            self.call("ibv_dealloc_mw(type 2)", mw.close, 0)

    def op_local_inv(self, p, src, dst, op):
        w = self.pick(src.mws, lambda w: w["valid"])
        if not w:
            return
        st = self.post(p, src, lambda x: x.wr_local_inv(w["rkey"]),
                       "ibv_wr_local_inv(a bound type 2 window)", (0, M.WC_LOCAL_INV), 0)
        if st == 0:
            w["valid"] = False
        else:
            self.error(p, src, st)

    # -- the walk -------------------------------------------------------
    def step(self, name=None, sub=None):
        """One action: the generator's choice, or NAME with step seed SUB
        (a replay). The step's seed alone decides what the action does given
        the live objects, so a shorter sequence still replays."""
        if name is None:
            name, sub = self.choose(), self.master.getrandbits(32)
        self.steps.append((name, sub))
        self.rng = random.Random(sub)
        getattr(self, name)()

    def choose(self):
        # (action, weight): creation and use outweigh destruction, so
        # objects live long enough to meet (a bind needs QP, MR and MW of a PD).
        acts = [(self.alloc_pd, 2 * (len(self.pds) < 2)), (self.dealloc_pd, 1),
                (self.create_cq, 2 * (len(self.cqs) < 2)), (self.destroy_cq, 1),
                (self.create_qp, 3 * (len(self.qps) < MAX)), (self.modify_qp, 8),
                (self.destroy_qp, 1), (self.reg_mr, 3 * (len(self.mrs) < MAX)),
                (self.reg_mr_iova, len(self.raw_mrs) < MAX), (self.dereg_mr, 2),
                (self.alloc_mw, 3 * (len(self.mws) < MAX)), (self.dealloc_mw, 2),
                (self.bind_mw, 6), (self.wr_batch, 6), (self.mcast, 3),
                (self.pair_up, 2 * (len(self.pairs) < 2)), (self.pair_op, 12 * bool(self.pairs)),
                (self.pair_down, 1), (self.pair_list, 2 * bool(self.pairs)),
                (self.create_srq, 2 * (len(self.srqs) < 2)), (self.srq_op, 4 * bool(self.srqs)),
                (self.cm_create, len(self.cm_ids) < 2), (self.cm_op, 3 * bool(self.cm_ids)),
                (self.cm_conn_up, 0.5 * (not self.cm_conns)),
                (self.cm_conn_op, 4 * bool(self.cm_conns)),
                (self.pair_srq_limit, bool(self.pairs or self.cm_conns))]
        act, = self.master.choices([a for a, _ in acts], [w for _, w in acts])
        return act.__name__

    def teardown(self):
        for c in list(self.cm_conns):
            self.cm_conn_down(c, "teardown")
        self.cm_teardown()
        for qp, _, groups in self.raw_qps:
            for g in groups:
                self.call(f"ibv_detach_mcast(group {g}) [teardown]",
                          lambda: self.raw.detach_mcast(qp, MCAST_GIDS[g]), 0)
            self.call("ibv_destroy_qp(raw qp) [teardown]", lambda: self.raw.destroy_qp(qp), 0)
        for mr in self.raw_mrs:
            self.call("ibv_dereg_mr(iova mr) [teardown]", lambda: self.raw.dereg_mr(mr), 0)
        self.raw.close()
        for p in self.pairs:
            self.call("destroy the pair [teardown]", p.close, 0)
        if self.ctx2:
            self.ctx2.close()
        if self.peer:
            self.call("the peer process exits [teardown]", self.peer.close, 0)
        for w in self.mws:      # windows before their MRs, so dereg succeeds
            self.call("ibv_dealloc_mw(mw) [teardown]", w["mw"].close, 0)
        for s in self.srqs:
            self.call("ibv_destroy_srq [teardown]", s["srq"].close, 0)
        self.ctx.close()


OP_METHODS = {"send": Run.op_send, "send_imm": Run.op_send, "send_inv": Run.op_send,
              "rdma_write": Run.op_write, "rdma_write_imm": Run.op_write,
              "rdma_read": Run.op_read, "atomic_fetch_add": Run.op_atomic,
              "atomic_cmp_swp": Run.op_atomic, "bind_mw": Run.op_bind_mw,
              "local_inv": Run.op_local_inv}
assert set(OP_METHODS) == set(M.OPS)


def kind(what):
    """A divergence's kind: the verb or check it happened at, without the
    values (shrinking keeps a sequence only if it fails the same way)."""
    return re.sub(r"\(.*", "", what.split(": want")[0]).strip()


def play(o, dev, steps=None, trace=False, quiet=False):
    """Run one sequence: O.steps generated steps, or the recorded STEPS;
    stop at the first divergence when QUIET (a shrink attempt). A Python
    exception inside a step is a divergence too (the model's state is
    unknown after it, so the sequence ends there)."""
    r = Run(o.seed, o.invalid, dev, trace, quiet, o.peer, o.common)
    todo = steps if steps is not None else [(None, None)] * o.steps
    try:
        for name, sub in todo:
            r.step(name, sub)
            if quiet and r.first:
                break
    except Exception as x:  # noqa: BLE001: every failure is reported
        r.diverge(f"exception in {r.steps[-1][0]}: want none, got {type(x).__name__}: {x}")
    try:
        r.teardown()
    except Exception as x:  # noqa: BLE001
        r.diverge(f"exception in teardown: want none, got {type(x).__name__}: {x}")
    return r


def shown(r, keep):
    """The first step at which run R made a call matching each regular
    expression of KEEP, or None if one never matched."""
    at = [next((i for i, t in zip(r.log_step, r.log) if re.search(k, t)), None)
          for k in keep]
    return None if None in at else max(at)


def shows(r, keep):
    """Whether run R made calls matching every expression of KEEP (and no
    divergence)."""
    return r.first is None and shown(r, keep) is not None


def shrink(o, dev, steps, want=None, keep=None):
    """Delta debugging (Zeller's ddmin, complements only) over the recorded
    steps: the shortest sequence found that still fails with kind WANT, or
    (KEEP) still makes calls matching every expression of KEEP."""
    def fails(s):
        r = play(o, dev, s, quiet=True)
        if keep:
            return shows(r, keep)
        return r.first is not None and kind(r.first[1]) == want
    steps, tries, again = ddmin(steps, fails)
    if not again:
        print("the divergence does not reproduce on replay (a race?): not shrunk")
        return steps
    print(f"shrunk to {len(steps)} steps in {tries} replays")
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--invalid", type=int, default=20, help="percent of invalid calls")
    ap.add_argument("--trace", action="store_true", help="print every call")
    ap.add_argument("--device", default=os.environ.get("DROCE_DEV"))
    ap.add_argument("--peer", metavar="COMMAND", help="the droce-run command of a second"
                    " daemon: each pair's second context is there (in a child"
                    " process, peer.py) rather than on this one")
    ap.add_argument("--common", action="store_true", help="leave out what verbs.NOT_COMMON"
                    " lists (Soft-RoCE's deviations): the differential run")
    ap.add_argument("--record", metavar="FILE", help="write every call and its result"
                    " (JSON) for a differential run (differential.py)")
    ap.add_argument("--replay", metavar="FILE", help="run the steps a JSON file recorded")
    ap.add_argument("--shrink", action="store_true",
                    help="on a divergence, reduce the sequence to a minimal one that"
                         " fails the same way, print it and save it (--save)")
    ap.add_argument("--save", metavar="FILE", help="where --shrink writes the sequence"
                    " (default model-seed<N>.json)")
    ap.add_argument("--keep", metavar="REGEX", action="append",
                    help="with --shrink: reduce the sequence to a minimal one making"
                    " calls matching every REGEX given (a regression case for"
                    " tests/model/cases/, see make-cases.sh)")
    o = ap.parse_args()
    dev = o.device or d.get_device_list()[0].name.decode()
    steps = None
    if o.replay:
        with open(o.replay) as f:
            case = json.load(f)
        o.seed, o.invalid = case["seed"], case["invalid"]
        steps = [tuple(s) for s in case["steps"]]
    r = play(o, dev, steps, o.trace)
    if o.record:
        with open(o.record, "w") as f:
            json.dump({"seed": o.seed, "invalid": o.invalid, "steps": r.steps,
                       "calls": [[s, t, x] for s, t, x in zip(r.log_step, r.log, r.results)]},
                      f)
            f.write("\n")
    what = o.replay or f"seed {o.seed}"
    print(f"{what}: {len(r.steps)} steps, {len(r.log)} calls, {r.divergences} divergences")
    stale = o.replay and case.get("keep") and shown(r, case["keep"]) is None
    if stale:     # the generator changed under the case: run make-cases.sh
        print(f"{o.replay}: stale: its calls no longer match {case['keep']}")
    small = None
    if o.shrink and r.first:
        want = kind(r.first[1])
        small = shrink(o, dev, r.steps[:r.first[0]], want=want)
        note = {"kind": want}
    elif o.shrink and o.keep and shows(r, o.keep):
        small = shrink(o, dev, r.steps[:shown(r, o.keep)], keep=o.keep)
        note = {"keep": o.keep}
    elif o.keep:
        print(f"seed {o.seed}: no calls match {o.keep}")
    if small:
        save = o.save or f"model-seed{o.seed}.json"
        with open(save, "w") as f:
            json.dump({"seed": o.seed, "invalid": o.invalid, **note, "steps": small}, f)
            f.write("\n")
        print(f"minimal sequence ({note}), saved to {save} (run.py --replay {save}):")
        play(o, dev, small, trace=True, quiet=True)
    return 1 if r.divergences or stale or (o.keep and not small) else 0


if __name__ == "__main__":
    sys.exit(main())
