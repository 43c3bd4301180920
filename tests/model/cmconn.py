# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The random tester's RC connections through rdma_cm (run.py's Run takes
them in), between two contexts: the passive side here, the active side in
the peer process on the other daemon (run.py --peer) or here too.

A connection is made as rdma_cma(7) describes it for QPs the application
owns (no rdma_create_qp: the QPs are traffic.py's, so every operation and
check of the traffic runs over them unchanged): the listener is bound and
listens; the active id resolves the address and the route (each event
checked), its QP goes to INIT with rdma_init_qp_attr's attributes, and
rdma_connect names it (conn_param.qp_num); the passive side takes the
CONNECT_REQUEST's new id (pyverbs' CMID(creator=event, listen_id=...)),
moves its QP to INIT, RTR and RTS with rdma_init_qp_attr and accepts; the
active side sees CONNECT_RESPONSE (an id without a QP of librdmacm's),
moves its QP to INIT again (the access flags now that the READ depths are
agreed, as librdmacm does with its own QPs), RTR and RTS, and sends the
RTU with rdma_establish; the passive side sees ESTABLISHED. Then traffic (run.py's pair_op and
pair_list on the pair), the calls a connected id refuses (CONNECTED_WRONG
below), and the release rdma_disconnect(3) describes: one side
disconnects, the other sees DISCONNECTED and disconnects too (its DREP),
then the first sees DISCONNECTED; the ids and the pair are destroyed."""
import verbs as M
import traffic as T

import pyverbs.cm_enums as ce
import pyverbs.enums as e

# the calls a connected id refuses, and their errno: verbs.py's "a connected
# id" of each (Linux's cma's answers)
CONNECTED_WRONG = {n[5:]: v.args["id"].invalid["a connected id"][1]
                   for n, v in M.VERBS.items()
                   if "a connected id" in getattr(v.args.get("id"), "invalid", {})}
DRAW_ORDER = ("connect", "accept", "listen", "bind_addr", "resolve_addr", "resolve_route",
              "reject")      # the order the draws (and the cases' step seeds) assume
assert set(DRAW_ORDER) == set(CONNECTED_WRONG)


class CmConnSteps:
    def cm_conn_up(self):
        """A new RC connection through rdma_cm (the module's doc)."""
        lib = self.peer.lib if self.peer else T.LIB
        ip = self.cm_ip()
        port = str(20000 + self.cm_ports)
        self.cm_ports += 1
        where = "two daemons" if self.peer else "one daemon"
        c = {"lib": lib, "ids": [], "chans": [], "pair": None, "where": where}
        self.cm_conns.append(c)      # torn down at the end whatever happens here
        ok = self.cm_conn_make(c, lib, ip, port)
        if not ok:
            self.cm_conn_down(c, "after a failed connect")

    def cm_conn_make(self, c, lib, ip, port):
        call = self.call
        ch_s = call("rdma_create_event_channel [passive]", T.LIB.CMEventChannel, 0)
        ch_c = call("rdma_create_event_channel [active]", lib.CMEventChannel, 0)
        if not (ch_s and ch_c):
            return False
        c["chans"] += [ch_s, ch_c]
        lid = call("rdma_create_id [listener]", lambda: T.LIB.CMID(
            creator=ch_s, port_space=ce.RDMA_PS_TCP), 0)
        if not lid:
            return False
        c["ids"].append(lid)
        c["listen"] = lid
        if not call(f"rdma_bind_addr({ip}:{port}); rdma_listen", lambda: (
                lid.bind_addr(T.LIB.AddrInfo(src=ip, src_service=port,
                                             port_space=ce.RDMA_PS_TCP, flags=ce.RAI_PASSIVE)),
                lid.listen(1))[1], 0):
            return False
        cid = call(f"rdma_create_id [active, {c['where']}]", lambda: lib.CMID(
            creator=ch_c, port_space=ce.RDMA_PS_TCP), 0)
        if not cid:
            return False
        c["ids"].append(cid)
        c["active"] = cid
        if not (call(f"rdma_resolve_addr({ip}:{port})", lambda: cid.resolve_addr(
                lib.AddrInfo(dst=ip, dst_service=port, port_space=ce.RDMA_PS_TCP), 2000), 0)
                and self.cm_event(ch_c, ce.RDMA_CM_EVENT_ADDR_RESOLVED, lib)
                and call("rdma_resolve_route", lambda: cid.resolve_route(2000), 0)
                and self.cm_event(ch_c, ce.RDMA_CM_EVENT_ROUTE_RESOLVED, lib)):
            return False
        srq = self.rng.random() < 0.3
        b = call("the active side's PD, CQ, QP (ibv_create_qp_ex), MRs on the id's context"
                 + (", its receives from an SRQ" if srq else ""),
                 lambda: T.Side(cid.context, M.QPT_RC, self.gid_index, lib, srq=srq), 0)
        if not b:
            return False
        c["b"] = b
        if not self.cm_qp_move(cid, b, (M.INIT,)):
            return False
        param = lib.ConnParam()
        param.qpn = b.qp.qp_num
        if not call("rdma_connect(conn_param.qp_num: its QP)", lambda: cid.connect(param), 0):
            return False
        ev = self.cm_event(ch_s, ce.RDMA_CM_EVENT_CONNECT_REQUEST, T.LIB, keep=True)
        if not ev:
            return False
        # the request's own id: pyverbs takes it from the event, before the ack
        nid = T.LIB.CMID(creator=ev, listen_id=lid)
        ev.ack_cm_event()
        c["ids"].append(nid)
        c["passive"] = nid
        a = call("the passive side's PD, CQ, QP, MRs on the new id's context",
                 lambda: T.Side(nid.context, M.QPT_RC, self.gid_index), 0)
        if not a:
            return False
        c["a"] = a
        if not self.cm_qp_move(nid, a, (M.INIT, M.RTR, M.RTS)):
            return False
        param = T.LIB.ConnParam()
        param.qpn = a.qp.qp_num
        if not (call("rdma_accept(conn_param.qp_num: its QP)", lambda: nid.accept(param), 0)
                and self.cm_event(ch_c, ce.RDMA_CM_EVENT_CONNECT_RESPONSE, lib)
                and self.cm_qp_move(cid, b, (M.INIT, M.RTR, M.RTS))
                and call("rdma_establish", cid.establish, 0)
                and self.cm_event(ch_s, ce.RDMA_CM_EVENT_ESTABLISHED, T.LIB)):
            return False
        c["pair"] = T.Pair.of(M.QPT_RC, a, b, self.gid_index)
        return True

    def cm_event(self, ch, want, lib, keep=False):
        """The next event of channel CH must be WANT: acked and True, or
        (KEEP) returned unacked."""
        ev = lib.CMEvent(ch)
        got = ev.event_type
        names = {v: n for n, v in vars(ce).items() if n.startswith("RDMA_CM_EVENT_")}
        if not self.same(f"  the event: {names.get(want, want)}", names.get(got, got),
                         names.get(want, want)):
            ev.ack_cm_event()
            return None
        if keep:
            return ev
        ev.ack_cm_event()
        return True

    def cm_qp_move(self, cid, s, states):
        """S's QP to each of STATES with rdma_init_qp_attr's attributes."""
        names = {M.INIT: "INIT", M.RTR: "RTR", M.RTS: "RTS"}
        for st in states:
            if not self.call(f"rdma_init_qp_attr({names[st]}); ibv_modify_qp",
                             lambda: s.qp.modify(*cid.init_qp_attr(st)), 0):
                return False
        return True

    def cm_conn_op(self):
        c = self.pick(self.cm_conns)
        if not c:
            return
        p = c["pair"]
        r = self.rng.random()
        if r < 0.12 or p.broken:
            return self.cm_conn_down(c, "after an error" if p.broken else "")
        if r < 0.3 and self.bad():
            n = self.rng.choice(DRAW_ORDER)
            side = self.rng.choice(("active", "passive"))
            cid = c[side]
            self.call(f"rdma_{n} on a connected id ({side}) [not allowed there]",
                      lambda: self.cm_conn_call(c, cid, n), CONNECTED_WRONG[n])
            return
        if r < 0.4:
            return self.pair_list(p)
        return self.pair_op(p)

    def cm_conn_call(self, c, cid, n):
        """Call N on the connected id CID (its side's lib makes arguments)."""
        lib = c["lib"] if cid is c["active"] else T.LIB
        ip = self.cm_ip()
        if n == "connect":
            param = lib.ConnParam()
            param.qpn = (c["b"] if cid is c["active"] else c["a"]).qp.qp_num
            return cid.connect(param)
        if n == "accept":
            param = lib.ConnParam()
            param.qpn = (c["b"] if cid is c["active"] else c["a"]).qp.qp_num
            return cid.accept(param)
        if n == "bind_addr":
            return cid.bind_addr(lib.AddrInfo(src=ip, port_space=ce.RDMA_PS_TCP,
                                              flags=ce.RAI_PASSIVE))
        if n == "resolve_addr":
            return cid.resolve_addr(lib.AddrInfo(dst=ip, dst_service="7471",
                                                 port_space=ce.RDMA_PS_TCP), 2000)
        if n == "resolve_route":
            return cid.resolve_route(2000)
        if n == "listen":
            return cid.listen(1)
        if n == "reject":
            return cid.reject()
        raise ValueError(n)

    def cm_conn_down(self, c, why=""):
        """rdma_disconnect from a side (if connected), DISCONNECTED on both,
        then the QPs' sides and the ids destroyed."""
        self.cm_conns.remove(c)
        why = f" ({why})" if why else ""
        if c["pair"] is not None:
            side = self.rng.choice(("active", "passive"))
            ch_s, ch_c = c["chans"]
            other = "passive" if side == "active" else "active"
            chans = {"passive": (ch_s, T.LIB), "active": (ch_c, c["lib"])}
            qps = (c["a"].qp, c["b"].qp)
            before = [q.query(e.IBV_QP_STATE)[0].qp_state for q in qps]
            if self.call(f"rdma_disconnect({side}){why}", c[side].disconnect, 0) and \
               self.cm_event(chans[other][0], ce.RDMA_CM_EVENT_DISCONNECTED, chans[other][1]) \
               and self.call(f"rdma_disconnect({other}, after its DISCONNECTED)",
                             c[other].disconnect, 0):
                self.cm_event(chans[side][0], ce.RDMA_CM_EVENT_DISCONNECTED, chans[side][1])
                # rdma_disconnect(3) moves the id's own QP (id->qp) to ERR;
                # these are the application's, which it leaves as they were
                self.same("  both QPs' states as before the disconnect",
                          [q.query(e.IBV_QP_STATE)[0].qp_state for q in qps], before)
        for k in ("a", "b"):
            if k in c:
                self.call(f"destroy the {'passive' if k == 'a' else 'active'} side's QP,"
                          " MRs, CQ, PD", c[k].close, 0)
        for cid in reversed(c["ids"]):
            self.call("rdma_destroy_id", cid.close, 0)
        for ch in c["chans"]:
            self.call("rdma_destroy_event_channel", ch.close, 0)
