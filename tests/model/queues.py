# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The random tester's steps for shared receive queues and for
ibv_post_send's list of work requests (run.py's Run takes them in).

SRQs (ibv_create_srq(3), ibv_modify_srq(3), ibv_query_srq(3),
ibv_post_srq_recv(3)): created plain or through ibv_create_srq_ex, limits
set and read back, receives posted up to max_wr, RC QPs created on one,
destroyed when no QP uses them. Traffic through an SRQ is traffic.py's: a
pair's responder may take its receives from one (Side.srq).

ibv_post_send(3) with a chain of WRs: a list of 2 to 4 SENDs on a pair,
every one checked at the responder; or (invalid) one WR in the chain with
more SGEs than the QP's max_send_sge: the call fails, *bad_wr is that WR,
the WRs before it are posted and complete, it and those after it are not."""
import errno as E

import verbs as M
import traffic as T

import pyverbs.enums as e
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.wr import RecvWR, SGE

ANY = "any errno"


class QueueSteps:
    # -- SRQs -----------------------------------------------------------
    def create_srq(self):
        pd = self.pick(self.pds)
        if not pd:
            return
        ex = self.rng.random() < 0.5
        n = self.rng.randint(1, 64)
        why, want = "", 0
        if self.bad():
            n, why, want = self.attr.max_srq_wr + 1, " [max_wr above max_srq_wr]", E.EINVAL
        if ex:
            def make():
                a = SrqInitAttrEx(max_wr=n, max_sge=1)
                a.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD
                a.srq_type, a.pd = e.IBV_SRQT_BASIC, pd
                return SRQ(self.ctx, a)
        else:
            def make():
                return SRQ(pd, SrqInitAttr(SrqAttr(max_wr=n, max_sge=1)))
        srq = self.call(f"ibv_create_srq{'_ex' if ex else ''}(max_wr={n}){why}", make, want)
        if srq:
            self.srqs.append({"srq": srq, "pd": pd, "max_wr": n, "posted": 0, "qps": 0})

    def srq_op(self):
        s = self.pick(self.srqs)
        if not s:
            return
        srq = s["srq"]
        op = self.rng.choice(("modify", "query", "post", "post", "qp", "destroy"))
        if op == "modify":
            bad = self.bad()
            # from the size asked, not the one granted: the draws must not
            # depend on the device (the differential run)
            limit = srq.query().max_wr + 1 if bad else self.rng.randint(0, s["max_wr"])
            why = " [limit above max_wr]" if bad else ""
            if self.call(f"ibv_modify_srq(IBV_SRQ_LIMIT={limit}){why}",
                         lambda: srq.modify(SrqAttr(srq_limit=limit), e.IBV_SRQ_LIMIT),
                         E.EINVAL if bad else 0):
                s["limit"], s["below"] = limit, s["posted"] < limit
        elif op == "query":
            a = srq.query()
            self.same("ibv_query_srq: max_wr at least as asked, max_sge at least 1",
                      (a.max_wr >= s["max_wr"], a.max_sge >= 1), (True, True))
            if "limit" in s and s["below"] is False:
                # armed above what is posted, and nothing consumes: not fired
                self.same("  srq_limit as set", a.srq_limit, s["limit"])
            elif "limit" in s and s["below"]:
                # armed below what was posted: ibv_modify_srq(3) does not say
                # whether that fires at once (droce) or at the next receive
                # taken (rxe); it reads the limit or 0
                self.same("  srq_limit as set, or 0 (fired)", a.srq_limit in (s["limit"], 0),
                          True)
        elif op == "post":
            buf = self.srq_buffer(s)
            full = False
            if s["posted"] >= s["max_wr"]:
                # beyond the size asked: a failure once the granted size
                # is reached too (devices may grant more: not compared)
                if self.avoid("srq granted size") or s["posted"] < srq.query().max_wr:
                    return
                full = True
            wid = self.rng.getrandbits(32)
            wr = RecvWR(wid, 1, [SGE(buf.buf, 64, buf.lkey)])
            if self.call("ibv_post_srq_recv" + (" [the SRQ is full]" if full else ""),
                         lambda: srq.post_recv(wr), ANY if full else 0):
                s["posted"] += 1
                if "limit" in s and s["posted"] >= s["limit"] and s["below"]:
                    s["below"] = None      # may have fired already: unknown
        elif op == "qp":
            self.create_qp_on_srq(s)
        elif s["qps"] == 0:
            if self.call("ibv_destroy_srq", srq.close, 0):
                self.srqs.remove(s)
                if "mr" in s:
                    s["mr"].close()

    def srq_buffer(self, s):
        """An MR of the SRQ's PD for its receives."""
        if "mr" not in s:
            from pyverbs.mr import MR
            s["mr"] = MR(s["pd"], 64, M.LOCAL_WRITE)
        return s["mr"]

    def create_qp_on_srq(self, s):
        """An RC QP taking its receives from the SRQ: created, moved to
        INIT, destroyed (the SRQ's count of users goes up and down)."""
        cq = self.pick(self.cqs)
        if not cq:
            return
        cap = QPCap(max_send_wr=4, max_recv_wr=0, max_send_sge=1, max_recv_sge=0)
        qp = self.call("ibv_create_qp(rc, on an SRQ)", lambda: QP(s["pd"], QPInitAttr(
            qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=s["srq"], cap=cap)), 0)
        if not qp:
            return
        s["qps"] += 1      # (ibv_destroy_srq now: pyverbs would destroy the QP first)
        self.call("  ibv_query_qp: init_attr.srq is set", lambda: 0 if qp.query(
            e.IBV_QP_STATE)[0].qp_state == M.RESET else E.EIO, 0)
        if self.call("  ibv_destroy_qp(qp on the SRQ)", qp.close, 0):
            s["qps"] -= 1

    # -- the SRQ limit event ------------------------------------------------
    def pair_srq_limit(self):
        """IBV_EVENT_SRQ_LIMIT_REACHED (ibv_modify_srq(3)) on a working pair
        whose responder (b) takes its receives from an SRQ, a plain pair or
        an rdma_cm connection's: K receives posted, the limit armed at L <= K
        (not below what is posted, where when it fires is not said: above),
        then K SENDs, each checked at b: no event while L or more are left,
        exactly one once fewer are, the limit then reads 0 (disarmed), and no
        other event after the last."""
        pairs = self.pairs + [c["pair"] for c in self.cm_conns if c["pair"]]
        p = self.pick(pairs, lambda p: not p.broken and p.b.srq is not None and not p.b.recvs)
        if not p:
            return
        a, b = p.a, p.b
        b.lib.async_events(b.ctx, 0)       # what earlier errors raised: not this step's
        k = self.rng.randint(1, 8)
        lim = self.rng.randint(1, k)
        grh = M.GRH_BYTES if p.qpt == M.QPT_UD else 0
        sends = []
        for _ in range(k):
            n = self.rng.randint(0, 256)
            rlen = n + grh + self.rng.randint(0, 64)
            roff = self.rng.randint(0, T.SIZE - rlen)
            p.post_recv(b, roff, rlen)
            sends.append((n, roff))
        if not self.call(f"ibv_modify_srq(IBV_SRQ_LIMIT={lim}) with {k} receives posted",
                         lambda: b.srq.modify(b.lib.SrqAttr(srq_limit=lim), e.IBV_SRQ_LIMIT), 0):
            return
        for i, (n, roff) in enumerate(sends):
            soff = self.rng.randint(0, T.SIZE - n)
            data = self.fill(a, soff, n)

            def build(x, soff=soff, n=n):
                x.wr_send()
                if p.qpt == M.QPT_UD:
                    x.wr_set_ud_addr(a.ah, b.qp.qp_num, T.QKEY)
                x.wr_set_sge(a.lib.SGE(a.mr.buf + soff, n, a.mr.lkey))
            st = self.post(p, a, build, f"ibv_wr_send({T.NAMES[p.qpt]}, {n} bytes) into"
                           f" receive {i + 1} of {k} from the SRQ", (0, M.WC_SEND), n)
            if st != 0:
                return self.error(p, a, st) if st is not None else None
            if self.recv_check(p, b, n, None):
                b.shadow[roff + grh:roff + grh + n] = data
            left = k - i - 1
            if left >= lim:
                self.same(f"  {left} left, limit {lim}: no async event",
                          b.lib.async_events(b.ctx, 0), [])
            elif left == lim - 1:
                self.same(f"  {left} left, below the limit {lim}: IBV_EVENT_SRQ_LIMIT_REACHED",
                          b.lib.async_events(b.ctx, 20), [e.IBV_EVENT_SRQ_LIMIT_REACHED])
                self.same("  ibv_query_srq: srq_limit 0 (disarmed)", b.srq.query().srq_limit, 0)
        self.same("  no other async event", b.lib.async_events(b.ctx, 0), [])
        for s in (a, b):
            self.same(f"  the {T.SIZE} bytes of {'a' if s is a else 'b'}'s MR match the model",
                      s.mr.read(T.SIZE, 0) == bytes(s.shadow), True)

    # -- ibv_post_send with a list of WRs --------------------------------
    def post_send_list(self, p, src, dst):
        """2 to 4 SENDs in one ibv_post_send; invalid: one of them with too
        many SGEs, which fails the call at it (*bad_wr)."""
        k = self.rng.randint(2, 4)
        bad_at = self.rng.randrange(k) if self.bad() else None
        lib = src.lib
        mtu = 1024 if p.qpt == M.QPT_UD else 2048
        grh = M.GRH_BYTES if p.qpt == M.QPT_UD else 0
        max_sge = src.qp.query(e.IBV_QP_CAP)[1].cap.max_send_sge
        wrs, sends = [], []
        for i in range(k):
            n = self.rng.choice((0, 1, self.rng.randint(1, mtu // 4)))
            soff = self.rng.randint(0, T.SIZE - n)
            self.fill(src, soff, n)
            wid = p.next_id()
            if i == bad_at:      # one SGE more than the QP was granted
                sges = [lib.SGE(src.mr.buf + soff, 0, src.mr.lkey)] * (max_sge + 1)
                wr = lib.SendWR(wr_id=wid, opcode=e.IBV_WR_SEND, num_sge=max_sge + 1, sg=sges,
                                send_flags=e.IBV_SEND_SIGNALED)
            else:
                wr = lib.SendWR(wr_id=wid, opcode=e.IBV_WR_SEND, num_sge=1,
                                sg=[lib.SGE(src.mr.buf + soff, n, src.mr.lkey)],
                                send_flags=e.IBV_SEND_SIGNALED)
            if p.qpt == M.QPT_UD:
                wr.set_wr_ud(src.ah, dst.qp.qp_num, T.QKEY)
            wrs.append(wr)
            sends.append((wid, n, soff))
        # what each sends: the source as it is once every WR's bytes are in
        sends = [(wid, n, bytes(src.shadow[o:o + n])) for wid, n, o in sends]
        for a, b in zip(wrs, wrs[1:]):
            a.next_wr = b
        posted = k if bad_at is None else bad_at
        roffs = []
        for wid, n, _ in sends[:posted]:     # receives only for what will be posted
            rlen = n + grh + self.rng.randint(0, 64)
            roff = self.rng.randint(0, T.SIZE - rlen)
            p.post_recv(dst, roff, rlen)
            roffs.append(roff)
        bad = lib.SendWR(num_sge=1, sg=[lib.SGE(0, 0, 0)])     # *bad_wr lands here
        text = (f"ibv_post_send({T.NAMES[p.qpt]}, a list of {k} SENDs)"
                + (f" [WR {bad_at + 1} has {max_sge + 1} SGEs, above max_send_sge]"
                   if bad_at is not None else ""))
        self.call(text, lambda: src.qp.post_send(wrs[0], bad), 0 if bad_at is None else ANY)
        if bad_at is not None:
            self.same("  *bad_wr is that WR (its wr_id)", bad.wr_id, sends[bad_at][0])
        wcs = p.poll(src.cq, posted) if posted else []
        self.same("  requester completions (wr_id, status) of the WRs before it",
                  [(w.wr_id, w.status) for w in wcs], [(w, 0) for w, _, _ in sends[:posted]])
        for (wid, n, data), roff in zip(sends[:posted], roffs):
            if self.recv_check(p, dst, n, None):
                dst.shadow[roff + grh:roff + grh + n] = data
        self.same("  nothing more completes", len(p.drain(src.cq)) + len(p.drain(dst.cq)), 0)
