#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Random verb sequences over live objects, checked against verbs.py.

  run.py --seed N [--steps M] [--invalid PERCENT] [--trace] [--device NAME]

The seed alone decides the sequence. Every call's result (success, or the
errno) is compared with what the model says; each divergence is printed
with the calls that led to it. Exit 1 on any divergence. Runs on one
context, so RC QPs are connected to themselves (loopback).
"""
import argparse
import errno as E
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verbs as M  # noqa: E402
from raw import Raw  # noqa: E402

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


class Run:
    def __init__(self, seed, invalid, dev, trace=False):
        self.trace = trace
        self.rng = random.Random(seed)
        self.invalid = invalid / 100.0
        self.log = []
        self.divergences = 0
        self.ctx = d.Context(name=dev)
        self.attr = self.ctx.query_device()
        self.gid_index = int(os.environ.get("DROCE_GID_INDEX", "1"))
        self.gid = self.ctx.query_gid(1, self.gid_index)
        self.raw = Raw(dev)
        self.pds, self.cqs, self.qps, self.mrs, self.mws = [], [], [], [], []
        self.raw_qps = []        # [ptr, qp_type, set of groups]
        self.raw_mrs = []

    # -- checking -------------------------------------------------------
    def call(self, text, fn, want):
        """Run FN (a verb returning an errno, 0, or raising), compare with WANT
        (0, an errno, ANY or EITHER). Returns None when the call failed, else its
        result (True for a verb that returns nothing)."""
        self.log.append(text)
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
        if self.trace:
            print(f"{len(self.log):5} {text}: {self.name(got)}")
        if not ok:
            self.divergences += 1
            print(f"DIVERGENCE at call {len(self.log)}: {text}: "
                  f"want {self.name(want)}, got {self.name(got)}")
            for i, t in enumerate(self.log, 1):
                print(f"    {i:4} {t}")
        if got != 0:
            return None
        return True if res is None else res

    @staticmethod
    def name(code):
        if code == 0:
            return "success"
        if code in (ANY, EITHER):
            return code
        return E.errorcode.get(code, str(code))

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
                                                   + self.mws))
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
                       lambda: self.raw.reg_mr_iova(4096, iova, acc), want)
        if mr:
            self.raw_mrs.append(mr)

    def dereg_mr(self):
        if self.raw_mrs and self.rng.random() < 0.3:
            mr = self.raw_mrs.pop()
            self.call("ibv_dereg_mr(iova mr)", lambda: self.raw.dereg_mr(mr), 0)
            return
        m = self.pick(self.mrs)
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

    def wr_batch(self):
        q = self.pick(self.qps, lambda q: q["ex"] and q["state"] == M.RTS)
        if not q:
            return
        x = q["qp"]
        m = self.pick(self.mrs, lambda m: m["pd"] is q["pd"] and m["access"] & M.REMOTE_WRITE)
        how = self.rng.choice(("abort", "empty", "bad-op") + ("write",) * (3 if m else 0))
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

    # -- the walk -------------------------------------------------------
    def step(self):
        # (action, weight): creation and use outweigh destruction, so
        # objects live long enough to meet (a bind needs QP, MR and MW of a PD).
        acts = [(self.alloc_pd, 2 * (len(self.pds) < 2)), (self.dealloc_pd, 1),
                (self.create_cq, 2 * (len(self.cqs) < 2)), (self.destroy_cq, 1),
                (self.create_qp, 3 * (len(self.qps) < MAX)), (self.modify_qp, 8),
                (self.destroy_qp, 1), (self.reg_mr, 3 * (len(self.mrs) < MAX)),
                (self.reg_mr_iova, len(self.raw_mrs) < MAX), (self.dereg_mr, 2),
                (self.alloc_mw, 3 * (len(self.mws) < MAX)), (self.dealloc_mw, 2),
                (self.bind_mw, 6), (self.wr_batch, 6), (self.mcast, 3)]
        act, = self.rng.choices([a for a, _ in acts], [w for _, w in acts])
        act()

    def teardown(self):
        for qp, _, groups in self.raw_qps:
            for g in groups:
                self.call(f"ibv_detach_mcast(group {g}) [teardown]",
                          lambda: self.raw.detach_mcast(qp, MCAST_GIDS[g]), 0)
            self.call("ibv_destroy_qp(raw qp) [teardown]", lambda: self.raw.destroy_qp(qp), 0)
        for mr in self.raw_mrs:
            self.call("ibv_dereg_mr(iova mr) [teardown]", lambda: self.raw.dereg_mr(mr), 0)
        self.raw.close()
        for w in self.mws:      # windows before their MRs, so dereg succeeds
            self.call("ibv_dealloc_mw(mw) [teardown]", w["mw"].close, 0)
        self.ctx.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--invalid", type=int, default=20, help="percent of invalid calls")
    ap.add_argument("--trace", action="store_true", help="print every call")
    ap.add_argument("--device", default=os.environ.get("DROCE_DEV"))
    o = ap.parse_args()
    dev = o.device or d.get_device_list()[0].name.decode()
    r = Run(o.seed, o.invalid, dev, o.trace)
    for _ in range(o.steps):
        r.step()
    r.teardown()
    print(f"seed {o.seed}: {len(r.log)} calls, {r.divergences} divergences")
    return 1 if r.divergences else 0


if __name__ == "__main__":
    sys.exit(main())
