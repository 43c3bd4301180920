# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The random tester's rdma_cm steps (run.py's Run takes them in), through
pyverbs.cmid over the librdmacm the process loads (droce's under
droce-run). Ids on one event channel walk the states of verbs.py's rdma_cm
descriptions: created, bound to the device's own address, address and
route resolved to it, or listening; rdma_set_option(ACK_TIMEOUT) in any
state. Calls made in a state that does not allow them must fail with
EINVAL, as Linux's cma answers them (their pages promise a failure):
rdma_resolve_route and rdma_connect before the route, rdma_accept and
rdma_reject on an id no connect request made, rdma_bind_addr twice,
rdma_listen after resolving, rdma_resolve_addr on a listener,
rdma_disconnect before a connection; an option of the wrong size."""
import errno as E
import ipaddress

import verbs as M

import pyverbs.cm_enums as ce
from pyverbs.cmid import AddrInfo, CMEvent, CMEventChannel, CMID

# what each state allows next, and the state it leaves
NEXT = {M.CM_IDLE: ("bind_addr", "resolve_addr"), M.CM_BOUND: ("resolve_addr", "listen"),
        M.CM_ADDR: ("resolve_route",), M.CM_ROUTE: (), M.CM_LISTEN: ()}
ANY_STATE = (M.CM_IDLE, M.CM_BOUND, M.CM_ADDR, M.CM_ROUTE, M.CM_LISTEN)
# calls refused in a state, with their errno
WRONG = {"resolve_route": ((M.CM_IDLE, M.CM_BOUND, M.CM_LISTEN), E.EINVAL),
         "connect": ((M.CM_IDLE, M.CM_BOUND, M.CM_ADDR, M.CM_LISTEN), E.EINVAL),
         "resolve_addr": ((M.CM_LISTEN,), E.EINVAL),
         "listen": ((M.CM_ADDR, M.CM_ROUTE), E.EINVAL),
         "reject": (ANY_STATE, E.EINVAL),
         # rdma_disconnect(3) promises only a failure; Linux's cma, and droce
         # since the differential run showed its ENOTCONN: EINVAL
         # (a listener: not tried; droce gives ENOTCONN, Linux's answer unchecked)
         "disconnect": ((M.CM_IDLE, M.CM_BOUND, M.CM_ADDR, M.CM_ROUTE), E.EINVAL),
         "accept": (ANY_STATE, E.EINVAL),
         "bind_addr": ((M.CM_BOUND, M.CM_ADDR, M.CM_ROUTE, M.CM_LISTEN), E.EINVAL)}
EVENT_OF = {"resolve_addr": ce.RDMA_CM_EVENT_ADDR_RESOLVED,
            "resolve_route": ce.RDMA_CM_EVENT_ROUTE_RESOLVED}


class CmSteps:
    def cm_ip(self):
        """The device's own IPv4 address: its RoCEv2 GID (::ffff:a.b.c.d)."""
        return str(ipaddress.IPv6Address(self.gid.gid).ipv4_mapped)

    def cm_create(self):
        if self.cm_channel is None:
            self.cm_channel = CMEventChannel()
        ch = self.cm_channel
        cid = self.call("rdma_create_id(channel, RDMA_PS_TCP)",
                        lambda: CMID(creator=ch, port_space=ce.RDMA_PS_TCP), 0)
        if cid:
            self.cm_ids.append({"id": cid, "state": M.CM_IDLE})

    def cm_op(self):
        c = self.pick(self.cm_ids)
        if not c:
            return
        cid, st = c["id"], c["state"]
        if self.rng.random() < 0.15:
            if self.call("rdma_destroy_id", cid.close, 0):
                self.cm_ids.remove(c)
            return
        if self.bad():
            wrong = [n for n, (states, _) in WRONG.items() if st in states
                     and not (n in ("resolve_route", "accept")
                              and self.avoid("rdma_cm preconditions"))]
            if wrong:
                n = self.rng.choice(wrong)
                self.call(f"rdma_{n} on an id {st} [not allowed there]",
                          lambda: self.cm_call(cid, n), WRONG[n][1] or "any errno")
                return
        if self.rng.random() < 0.15:      # rdma_set_option(ACK_TIMEOUT), any state
            bad = self.bad()
            size = 3 if bad else 1
            self.call(f"rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT, optlen={size})"
                      + (" [not a u8]" if bad else ""),
                      lambda: cid.set_option(ce.RDMA_OPTION_ID, ce.RDMA_OPTION_ID_ACK_TIMEOUT,
                                             14, size), E.EINVAL if bad else 0)
            return
        if not NEXT[st]:
            return
        n = self.rng.choice(NEXT[st])
        if self.call(f"rdma_{n} (id {st})", lambda: self.cm_call(cid, n), 0) is None:
            return
        if n in EVENT_OF:
            ev = CMEvent(self.cm_channel)
            got = ev.event_type
            ev.ack_cm_event()
            if not self.same(f"  the event of rdma_{n}", got, EVENT_OF[n]):
                self.cm_ids.remove(c)       # its state is unknown now: leave it be
                self.cm_lost.append(cid)
                return
        c["state"] = {"bind_addr": M.CM_BOUND, "resolve_addr": M.CM_ADDR,
                      "resolve_route": M.CM_ROUTE, "listen": M.CM_LISTEN}[n]

    def cm_call(self, cid, n):
        ip = self.cm_ip()
        if n == "bind_addr":
            return cid.bind_addr(AddrInfo(src=ip, port_space=ce.RDMA_PS_TCP,
                                          flags=ce.RAI_PASSIVE))
        if n == "resolve_addr":
            return cid.resolve_addr(AddrInfo(dst=ip, dst_service="7471",
                                             port_space=ce.RDMA_PS_TCP), 2000)
        if n == "resolve_route":
            return cid.resolve_route(2000)
        if n == "connect":
            return cid.connect()
        if n == "disconnect":
            return cid.disconnect()
        if n == "accept":
            return cid.accept()
        if n == "listen":
            return cid.listen(4)
        if n == "reject":
            return cid.reject()
        raise ValueError(n)

    def cm_teardown(self):
        for c in self.cm_ids:
            self.call("rdma_destroy_id [teardown]", c["id"].close, 0)
        for cid in self.cm_lost:
            cid.close()
        if self.cm_channel is not None:
            self.cm_channel.close()
