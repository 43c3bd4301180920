# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""A declarative model of the libibverbs verbs droce offers (issue 16).

One entry per verb, readable against its man page: the C signature, each
argument's domain (valid values, and invalid values worth trying with the
errno they must give), the objects consumed and produced, the state required
and left, and the return contract. No test logic here: tests/model/run.py
walks it.

Return contracts: "ptr" returns an object or NULL with errno set; "errno"
returns 0 or a positive errno; "void" cannot fail. An errno of None in an
invalid case means the man page only promises a failure, not which errno.
"""
from dataclasses import dataclass, field
from errno import EINVAL

# enum ibv_access_flags (ibv_reg_mr(3)).
LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC, MW_BIND = 1, 2, 4, 8, 16
ZERO_BASED, ON_DEMAND, HUGETLB, RELAXED_ORDERING = 32, 64, 128, 1 << 20
# enum ibv_mw_type, enum ibv_qp_type, enum ibv_qp_state.
MW_TYPE_1, MW_TYPE_2 = 1, 2
QPT_RC, QPT_UC, QPT_UD = 2, 3, 4
RESET, INIT, RTR, RTS, SQD, SQE, ERR = range(7)


@dataclass(frozen=True)
class Arg:
    """One argument: C type, what is valid, and invalid values to try."""
    ctype: str
    valid: object = None              # a rule, a tuple of values or an object kind
    invalid: dict = field(default_factory=dict)   # case -> (value, errno)


@dataclass(frozen=True)
class Verb:
    sig: str
    args: dict
    returns: str                      # "ptr", "errno" or "void"
    consumes: tuple = ()              # objects it destroys
    produces: tuple = ()              # objects it creates
    requires: dict = field(default_factory=dict)  # object -> required state
    leaves: dict = field(default_factory=dict)    # object -> state after success
    man: str = ""


def obj(kind, ctype=None):
    """An argument that must be a live object of KIND."""
    return Arg(ctype or f"struct ibv_{kind} *", valid=kind)


# The four access flag rules of ibv_reg_mr(3): remote write or remote atomic
# without local write is invalid.
MR_ACCESS = Arg(
    "int",
    valid="any OR of LOCAL_WRITE REMOTE_WRITE REMOTE_READ REMOTE_ATOMIC MW_BIND"
          " where REMOTE_WRITE or REMOTE_ATOMIC implies LOCAL_WRITE",
    invalid={
        "remote write without local write": (REMOTE_WRITE, EINVAL),
        "remote atomic without local write": (REMOTE_ATOMIC, EINVAL),
        "remote write and read without local write":
            (REMOTE_WRITE | REMOTE_READ, EINVAL),
    })
VALID_ACCESS = (0, LOCAL_WRITE, LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ,
                LOCAL_WRITE | MW_BIND, LOCAL_WRITE | REMOTE_WRITE | MW_BIND,
                LOCAL_WRITE | REMOTE_ATOMIC, REMOTE_READ | MW_BIND)

# ibv_modify_qp(3) with the IBA state table: the transitions a QP may take.
QP_TRANSITIONS = {
    RESET: (RESET, INIT),          # not ERR: the IBA leaves a fresh QP in RESET
    INIT: (RESET, INIT, RTR, ERR),
    RTR: (RESET, RTS, ERR),
    RTS: (RESET, RTS, ERR),
    ERR: (RESET, ERR),
}

VERBS = {
    "ibv_alloc_pd": Verb(
        "struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)",
        {"context": obj("context")}, "ptr", produces=("pd",), man="ibv_alloc_pd(3)"),
    "ibv_dealloc_pd": Verb(
        "int ibv_dealloc_pd(struct ibv_pd *pd)",
        {"pd": obj("pd")}, "errno", consumes=("pd",),
        requires={"pd": "no MR, MW, QP or AH uses it (else EBUSY)"},
        man="ibv_alloc_pd(3)"),
    "ibv_create_cq": Verb(
        "struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,"
        " void *cq_context, struct ibv_comp_channel *channel, int comp_vector)",
        {"context": obj("context"),
         "cqe": Arg("int", valid="1 .. device max_cqe",
                    invalid={"cqe above max_cqe": ("max_cqe+1", EINVAL)}),
         "cq_context": Arg("void *", valid="any"),
         "channel": Arg("struct ibv_comp_channel *", valid=(None,)),
         "comp_vector": Arg("int", valid="0 .. num_comp_vectors-1")},
        "ptr", produces=("cq",), man="ibv_create_cq(3)"),
    "ibv_destroy_cq": Verb(
        "int ibv_destroy_cq(struct ibv_cq *cq)",
        {"cq": obj("cq")}, "errno", consumes=("cq",),
        requires={"cq": "no QP uses it (else EBUSY)"}, man="ibv_create_cq(3)"),
    "ibv_create_qp": Verb(
        "struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,"
        " struct ibv_qp_init_attr *qp_init_attr)",
        {"pd": obj("pd"),
         "qp_init_attr.qp_type": Arg("enum ibv_qp_type", valid=(QPT_RC, QPT_UC, QPT_UD)),
         "qp_init_attr.send_cq": obj("cq"),
         "qp_init_attr.recv_cq": obj("cq"),
         "qp_init_attr.cap.max_send_wr": Arg(
             "uint32_t", valid="1 .. device max_qp_wr",
             invalid={"max_send_wr above max_qp_wr": ("max_qp_wr+1", EINVAL)}),
         "qp_init_attr.cap.max_recv_wr": Arg(
             "uint32_t", valid="1 .. device max_qp_wr",
             invalid={"max_recv_wr above max_qp_wr": ("max_qp_wr+1", EINVAL)}),
         "qp_init_attr.cap.max_send_sge": Arg(
             "uint32_t", valid="1 .. device max_sge",
             invalid={"max_send_sge above max_sge": ("max_sge+1", EINVAL)})},
        "ptr", produces=("qp",), leaves={"qp": RESET}, man="ibv_create_qp(3)"),
    "ibv_create_qp_ex": Verb(
        "struct ibv_qp *ibv_create_qp_ex(struct ibv_context *context,"
        " struct ibv_qp_init_attr_ex *qp_init_attr_ex)",
        {"context": obj("context"),
         "qp_init_attr_ex.comp_mask": Arg("uint32_t", valid="PD | SEND_OPS_FLAGS"),
         "qp_init_attr_ex.send_ops_flags": Arg(
             "uint64_t", valid="OR of IBV_QP_EX_WITH_* the device supports")},
        "ptr", produces=("qp_ex",), leaves={"qp_ex": RESET}, man="ibv_create_qp_ex(3)"),
    "ibv_destroy_qp": Verb(
        "int ibv_destroy_qp(struct ibv_qp *qp)",
        {"qp": obj("qp")}, "errno", consumes=("qp",),
        man="ibv_create_qp(3); also detaches nothing: groups must be left first"),
    "ibv_modify_qp": Verb(
        "int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)",
        {"qp": obj("qp"),
         "attr.qp_state": Arg(
             "enum ibv_qp_state", valid="a transition of QP_TRANSITIONS",
             invalid={"RESET to RTR": (RTR, EINVAL), "RESET to RTS": (RTS, EINVAL),
                      "INIT to RTS": (RTS, EINVAL)}),
         "attr_mask": Arg("int", valid="the attributes the transition requires")},
        "errno", requires={"qp": "attr.qp_state reachable from the current state"},
        leaves={"qp": "attr.qp_state"}, man="ibv_modify_qp(3)"),
    "ibv_reg_mr": Verb(
        "struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)",
        {"pd": obj("pd"),
         "addr": Arg("void *", valid="mapped memory of length bytes"),
         "length": Arg("size_t", valid="1 .. device max_mr_size"),
         "access": MR_ACCESS},
        "ptr", produces=("mr",), man="ibv_reg_mr(3)"),
    "ibv_reg_mr_iova": Verb(
        "struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,"
        " uint64_t iova, int access)",
        {"pd": obj("pd"),
         "addr": Arg("void *", valid="mapped memory of length bytes"),
         "length": Arg("size_t", valid="1 .. device max_mr_size"),
         "iova": Arg("uint64_t", valid="any; the MR's address through its keys"),
         "access": MR_ACCESS},
        "ptr", produces=("mr",), man="ibv_reg_mr(3)"),
    "ibv_reg_dmabuf_mr": Verb(
        "struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,"
        " size_t length, uint64_t iova, int fd, int access)",
        {"pd": obj("pd"),
         "fd": Arg("int", valid="a dma-buf file descriptor",
                   invalid={"not a file descriptor": (-1, None)}),
         "access": Arg("int", valid="LOCAL_WRITE REMOTE_WRITE REMOTE_READ"
                       " REMOTE_ATOMIC RELAXED_ORDERING only")},
        "ptr", produces=("mr",), man="ibv_reg_mr(3)"),
    "ibv_dereg_mr": Verb(
        "int ibv_dereg_mr(struct ibv_mr *mr)",
        {"mr": obj("mr")}, "errno", consumes=("mr",),
        requires={"mr": "no memory window bound to it (else failure)"},
        man="ibv_reg_mr(3)"),
    "ibv_alloc_mw": Verb(
        "struct ibv_mw *ibv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)",
        {"pd": obj("pd"),
         "type": Arg("enum ibv_mw_type", valid=(MW_TYPE_1, MW_TYPE_2),
                     invalid={"type 0": (0, EINVAL), "type 3": (3, EINVAL)})},
        "ptr", produces=("mw",), leaves={"mw": "unbound"}, man="ibv_alloc_mw(3)"),
    "ibv_dealloc_mw": Verb(
        "int ibv_dealloc_mw(struct ibv_mw *mw)",
        {"mw": obj("mw")}, "errno", consumes=("mw",), leaves={"mr": "window unbound"},
        man="ibv_alloc_mw(3)"),
    "ibv_bind_mw": Verb(
        "int ibv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)",
        {"qp": Arg("struct ibv_qp *", valid="a UC, RC or XRC_SEND QP in RTS"),
         "mw": Arg("struct ibv_mw *", valid="a type 1 window of the QP's PD"),
         "mw_bind.bind_info.mr": Arg("struct ibv_mr *", valid="an MR with MW_BIND access",
                                     invalid={"MR without MW_BIND": ("mr", None)}),
         "mw_bind.bind_info.addr": Arg("uint64_t", valid="within the MR with length"),
         "mw_bind.bind_info.length": Arg("uint64_t", valid="0 (unbind) .. rest of the MR",
                                         invalid={"one byte past the MR": ("rest+1", None)}),
         "mw_bind.bind_info.mw_access_flags": Arg(
             "unsigned int", valid="REMOTE_WRITE REMOTE_READ REMOTE_ATOMIC ZERO_BASED")},
        "errno", requires={"qp": RTS}, leaves={"mw": "bound; new rkey in mw->rkey"},
        man="ibv_bind_mw(3); a bad MR or range may fail here or in the completion"),
    "ibv_attach_mcast": Verb(
        "int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)",
        {"qp": Arg("struct ibv_qp *", valid="a UD QP",
                   invalid={"an RC QP": ("rc qp", None)}),
         "gid": Arg("const union ibv_gid *", valid="a multicast GID (ff00::/8, or"
                    " ::ffff:224.0.0.0/100 on RoCEv2)"),
         "lid": Arg("uint16_t", valid="any; ignored on RoCE")},
        "errno", requires={"qp": "UD"}, leaves={"qp": "member of gid (attaching twice"
                                                 " is allowed: one copy still)"},
        man="ibv_attach_mcast(3)"),
    "ibv_detach_mcast": Verb(
        "int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)",
        {"qp": Arg("struct ibv_qp *", valid="a UD QP attached to gid"),
         "gid": Arg("const union ibv_gid *", valid="a group the QP is attached to"),
         "lid": Arg("uint16_t", valid="any")},
        "errno", requires={"qp": "member of gid"}, leaves={"qp": "not a member of gid"},
        man="ibv_attach_mcast(3)"),
    # ibv_wr_post(3): the builders cannot fail; ibv_wr_complete() reports
    # any failure of the whole batch and posts nothing then.
    "ibv_wr_start": Verb("void ibv_wr_start(struct ibv_qp_ex *qp)",
                         {"qp": obj("qp_ex")}, "void", leaves={"qp_ex": "in a batch"},
                         man="ibv_wr_post(3)"),
    "ibv_wr_rdma_write": Verb(
        "void ibv_wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr)",
        {"qp": obj("qp_ex"), "rkey": Arg("uint32_t", valid="an rkey with REMOTE_WRITE"),
         "remote_addr": Arg("uint64_t", valid="within that rkey's range")},
        "void", requires={"qp_ex": "in a batch"}, man="ibv_wr_post(3)"),
    "ibv_wr_send": Verb("void ibv_wr_send(struct ibv_qp_ex *qp)",
                        {"qp": obj("qp_ex")}, "void",
                        requires={"qp_ex": "in a batch"}, man="ibv_wr_post(3)"),
    "ibv_wr_set_sge": Verb(
        "void ibv_wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr,"
        " uint32_t length)",
        {"qp": obj("qp_ex"), "lkey": Arg("uint32_t", valid="an lkey of the QP's PD"),
         "addr": Arg("uint64_t", valid="within that MR"),
         "length": Arg("uint32_t", valid="0 .. rest of that MR")},
        "void", requires={"qp_ex": "a WR started"}, man="ibv_wr_post(3)"),
    "ibv_wr_complete": Verb("int ibv_wr_complete(struct ibv_qp_ex *qp)",
                            {"qp": obj("qp_ex")}, "errno",
                            requires={"qp_ex": "in a batch"}, leaves={"qp_ex": "idle"},
                            man="ibv_wr_post(3)"),
    "ibv_wr_abort": Verb("void ibv_wr_abort(struct ibv_qp_ex *qp)",
                         {"qp": obj("qp_ex")}, "void",
                         requires={"qp_ex": "in a batch"}, leaves={"qp_ex": "idle"},
                         man="ibv_wr_post(3)"),
}

# -- Work requests and their completions (ibv_wr_post(3), ibv_poll_cq(3)) --
# enum ibv_wc_opcode, enum ibv_wc_status (the ones the traffic can give).
WC_SEND, WC_RDMA_WRITE, WC_RDMA_READ, WC_COMP_SWAP, WC_FETCH_ADD = 0, 1, 2, 3, 4
WC_BIND_MW, WC_LOCAL_INV, WC_RECV, WC_RECV_RDMA_WITH_IMM = 5, 6, 128, 129
WC_SUCCESS, WC_LOC_LEN_ERR, WC_LOC_PROT_ERR, WC_WR_FLUSH_ERR = 0, 1, 4, 5
WC_MW_BIND_ERR, WC_REM_INV_REQ_ERR, WC_REM_ACCESS_ERR = 6, 9, 10
GRH_BYTES = 40                    # a UD receive buffer starts with the GRH
MCAST_QPN = 0xFFFFFF              # a UD SEND to a group: every attached QP gets a copy


@dataclass(frozen=True)
class Op:
    """One operation of the send queue: where it is allowed, what the target
    must grant, and the completions it makes on either side."""
    qp_types: tuple               # the QP types that may post it
    needs: int                    # remote access the target's key and QP must grant (0: none)
    wc: int                       # the requester's completion opcode
    recv_wc: object = None        # the responder's completion opcode, None: no receive consumed
    imm: bool = False             # carries immediate data (wc_flags IBV_WC_WITH_IMM)
    length: str = "0 .. 2^31 bytes"
    man: str = "ibv_wr_post(3)"


ATOMIC_LEN = 8                    # an atomic moves one 8-byte, 8-aligned word
OPS = {
    "send": Op((QPT_RC, QPT_UC, QPT_UD), 0, WC_SEND, WC_RECV,
               length="UD: up to the path MTU; byte_len at the target adds the GRH"),
    "send_imm": Op((QPT_RC, QPT_UC, QPT_UD), 0, WC_SEND, WC_RECV, imm=True),
    "rdma_write": Op((QPT_RC, QPT_UC), REMOTE_WRITE, WC_RDMA_WRITE),
    "rdma_write_imm": Op((QPT_RC, QPT_UC), REMOTE_WRITE, WC_RDMA_WRITE,
                         WC_RECV_RDMA_WITH_IMM, imm=True,
                         length="byte_len at the target is the length written"),
    "rdma_read": Op((QPT_RC,), REMOTE_READ, WC_RDMA_READ),
    "atomic_fetch_add": Op((QPT_RC,), REMOTE_ATOMIC, WC_FETCH_ADD, length="8"),
    "atomic_cmp_swp": Op((QPT_RC,), REMOTE_ATOMIC, WC_COMP_SWAP, length="8"),
    "send_inv": Op((QPT_RC,), 0, WC_SEND, WC_RECV,
                   man="ibv_wr_post(3): also invalidates a type 2 window's rkey at the"
                       " target (IBV_WC_WITH_INV)"),
    "bind_mw": Op((QPT_RC, QPT_UC), 0, WC_BIND_MW,
                  man="ibv_wr_post(3): binds a type 2 window of the QP's PD; the new"
                      " rkey differs from the old in its low byte only"),
    "local_inv": Op((QPT_RC, QPT_UC), 0, WC_LOCAL_INV,
                    man="ibv_wr_post(3): invalidates a type 2 window bound on this QP"),
}

# What a remote error does (IBA 9.7.5.2.4 and 10.7.3, ibv_poll_cq(3)): on RC
# the requester completes with the status below and its QP enters ERR (later
# WRs flush with WR_FLUSH_ERR); on UC the responder drops the message
# silently, so the requester completes with success, nothing changes at the
# target and no receive is consumed.
REMOTE_ERRORS = {
    "rkey with a wrong key byte": WC_REM_ACCESS_ERR,
    "range past the end of the MR": WC_REM_ACCESS_ERR,
    "access the MR does not grant": WC_REM_ACCESS_ERR,
    "window invalidated": WC_REM_ACCESS_ERR,
    "rkey of a deregistered MR": WC_REM_ACCESS_ERR,
    "atomic address not 8-aligned": WC_REM_INV_REQ_ERR,
    "send longer than the receive": WC_REM_INV_REQ_ERR,   # the target: LOC_LEN_ERR
}

# Local errors (ibv_poll_cq(3), IBA 10.8.3.3): an SGE whose lkey no longer
# resolves completes with LOC_PROT_ERR. After any error completion of its
# send queue an RC QP is in ERR, a UC or UD QP in SQE (send queue
# error: its receive queue still works).
LOCAL_ERRORS = {"lkey of a deregistered MR": WC_LOC_PROT_ERR}
STATE_AFTER_SEND_ERROR = {QPT_RC: ERR, QPT_UC: SQE, QPT_UD: SQE}


# What Linux Soft-RoCE (rxe, Linux 6.1 with rdma-core 44) does otherwise
# than the man pages, or where the API leaves the outcome open: the
# differential run (run.py --common) leaves these out, so that both sides
# run the same calls. Each is decided in doc/interop.md.
NOT_COMMON = {
    "uc local_inv": "rxe refuses IBV_QP_EX_WITH_LOCAL_INV on UC (EOPNOTSUPP at"
                    " ibv_create_qp_ex), which ibv_wr_post(3) lists for UC",
    "multicast": "rxe delivers a group's datagrams only after an IP-level join"
                 " (IGMP) that ibv_attach_mcast(3) does not ask for",
    "builder outside send_ops_flags": "ibv_wr_post(3) leaves a builder the QP"
                 " was not created for undefined: droce fails the batch, rxe's"
                 " provider has no function there and the caller crashes",
    "iova page offset": "Linux's uverbs refuses (EINVAL) an ibv_reg_mr_iova whose"
                 " iova and addr differ in their page offset; ibv_reg_mr(3) asks"
                 " that only of ibv_reg_dmabuf_mr",
    "send longer than the receive": "rxe completes an RC SEND longer than the"
                 " receive with IBV_WC_REM_OP_ERR, not IBV_WC_REM_INV_REQ_ERR",
    "lkey of a deregistered MR": "rxe completes a send whose SGE's lkey no"
                 " longer resolves with IBV_WC_LOC_QP_OP_ERR, not IBV_WC_LOC_PROT_ERR",
    "SQE": "rxe puts a UC or UD QP whose send completed in error in ERR, not"
           " SQE (IBA 10.3.1), so it cannot go back to RTS",
    "WITH_INV flag": "rxe's SEND_WITH_INV receive completions lack"
                     " IBV_WC_WITH_INV (invalidated_rkey is right)",
    "uc write_imm refused": "rxe completes a receive with IBV_WC_REM_ACCESS_ERR"
                            " for a UC WRITE_WITH_IMM it refuses (a bad rkey); UC has"
                            " no error response, the responder drops the request and"
                            " consumes no receive (REMOTE_ERRORS above)",
    "srq granted size": "an SRQ may get more receives than asked (rxe rounds"
                        " up, droce gives the size asked): posting past it differs",
    "rdma_cm preconditions": "rdma_resolve_route(3) (an address resolved first)"
                             " and rdma_accept(3) (an id from a connect request)"
                             " state preconditions, not errors: rdma-core's"
                             " librdmacm dereferences what the id lacks there"
                             " (SIGSEGV), droce's fails with EINVAL",
    "dereg_mr errno": "ibv_reg_mr(3) says ibv_dereg_mr fails while a window is"
                      " bound, not with which errno: droce EBUSY, rxe EINVAL",
}


# -- The other verbs droce offers (doc/verbs.md), described the same way.
# Shorter: most take live objects and return what their page says. The
# random tester runs the SRQ verbs, ibv_post_send's list, ibv_post_recv,
# ibv_query_qp and ibv_poll_cq among them (queues.py, traffic.py); for the
# rest the description is the contract the per-page tests in tests/verbs
# check.
def _v(sig, returns, man, args=None, **kw):
    return Verb(sig, args or {}, returns, man=man, **kw)


def _errno_of(**cases):
    return {k: v for k, v in cases.items()}


SRQ_ATTR_MAX_WR = Arg("uint32_t", valid="1 .. device max_srq_wr",
                      invalid={"max_wr above max_srq_wr": ("max_srq_wr+1", EINVAL)})
WC_READ = "ibv_create_cq_ex(3): between ibv_start_poll and ibv_end_poll, on a CQ whose" \
          " wc_flags asked for the field"

VERBS.update({
    # devices and contexts
    "ibv_get_device_list": _v("struct ibv_device **ibv_get_device_list(int *num_devices)",
                              "ptr", "ibv_get_device_list(3)", produces=("device_list",)),
    "ibv_free_device_list": _v("void ibv_free_device_list(struct ibv_device **list)", "void",
                               "ibv_get_device_list(3)", {"list": obj("device_list",
                                                                      "struct ibv_device **")},
                               consumes=("device_list",)),
    "ibv_get_device_name": _v("const char *ibv_get_device_name(struct ibv_device *device)",
                              "ptr", "ibv_get_device_name(3)"),
    "ibv_get_device_guid": _v("__be64 ibv_get_device_guid(struct ibv_device *device)",
                              "void", "ibv_get_device_guid(3)"),
    "ibv_get_device_index": _v("int ibv_get_device_index(struct ibv_device *device)",
                               "void", "ibv_get_device_index(3): the index, or -1"),
    "ibv_open_device": _v("struct ibv_context *ibv_open_device(struct ibv_device *device)",
                          "ptr", "ibv_open_device(3)", produces=("context",)),
    "ibv_close_device": _v("int ibv_close_device(struct ibv_context *context)", "errno",
                           "ibv_open_device(3)", {"context": obj("context")},
                           consumes=("context",)),
    "ibv_query_device": _v("int ibv_query_device(struct ibv_context *context,"
                           " struct ibv_device_attr *device_attr)", "errno",
                           "ibv_query_device(3)", {"context": obj("context")}),
    "ibv_query_device_ex": _v(
        "int ibv_query_device_ex(struct ibv_context *context, const struct"
        " ibv_query_device_ex_input *input, struct ibv_device_attr_ex *attr)", "errno",
        "ibv_query_device_ex(3)",
        {"context": obj("context"),
         "input.comp_mask": Arg("uint32_t", valid=(0,), invalid={"unknown bits": (1, EINVAL)})}),
    "ibv_query_port": _v("int ibv_query_port(struct ibv_context *context, uint8_t port_num,"
                         " struct ibv_port_attr *port_attr)", "errno", "ibv_query_port(3)",
                         {"context": obj("context"),
                          "port_num": Arg("uint8_t", valid=(1,),
                                          invalid={"port 2": (2, EINVAL)})}),
    "ibv_query_gid": _v("int ibv_query_gid(struct ibv_context *context, uint8_t port_num,"
                        " int index, union ibv_gid *gid)", "errno", "ibv_query_gid(3)",
                        {"index": Arg("int", valid="0 .. gid_tbl_len-1")}),
    "ibv_query_gid_ex": _v("int ibv_query_gid_ex(struct ibv_context *context, uint32_t"
                           " port_num, uint32_t gid_index, struct ibv_gid_entry *entry,"
                           " uint32_t flags)", "errno", "ibv_query_gid_ex(3)",
                           {"gid_index": Arg("uint32_t", valid="an index holding a GID",
                                             invalid={"an empty entry": ("empty", None)})}),
    "ibv_query_gid_table": _v("ssize_t ibv_query_gid_table(struct ibv_context *context,"
                              " struct ibv_gid_entry *entries, size_t max_entries,"
                              " uint32_t flags)", "void",
                              "ibv_query_gid_table(3): the number of entries, or -errno"),
    "ibv_query_gid_type": _v("int ibv_query_gid_type(struct ibv_context *context, uint8_t"
                             " port_num, unsigned int index, enum ibv_gid_type_sysfs *type)",
                             "errno", "rdma-core private (librdmacm and ibv_devinfo call it)"),
    "ibv_query_pkey": _v("int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,"
                         " int index, __be16 *pkey)", "errno", "ibv_query_pkey(3)"),
    "ibv_get_pkey_index": _v("int ibv_get_pkey_index(struct ibv_context *context, uint8_t"
                             " port_num, __be16 pkey)", "void",
                             "ibv_get_pkey_index(3): the index, or -1 (errno)"),
    "ibv_query_rt_values_ex": _v(
        "int ibv_query_rt_values_ex(struct ibv_context *context, struct ibv_values_ex *values)",
        "errno", "ibv_query_rt_values_ex(3)",
        {"values.comp_mask": Arg("uint32_t", valid="0 or IBV_VALUES_MASK_RAW_CLOCK",
                                 invalid={"other bits": (2, EINVAL)})}),
    "ibv_fork_init": _v("int ibv_fork_init(void)", "errno", "ibv_fork_init(3)"),
    "ibv_is_fork_initialized": _v("enum ibv_fork_status ibv_is_fork_initialized(void)",
                                  "void", "ibv_is_fork_initialized(3)"),
    "ibv_dontfork_range": _v("int ibv_dontfork_range(void *base, size_t size)", "errno",
                             "verbs.h"),
    "ibv_dofork_range": _v("int ibv_dofork_range(void *base, size_t size)", "errno",
                           "verbs.h"),
    "ibv_get_sysfs_path": _v("const char *ibv_get_sysfs_path(void)", "ptr", "driver.h"),
    "ibv_read_sysfs_file": _v("int ibv_read_sysfs_file(const char *dir, const char *file,"
                              " char *buf, size_t size)", "void",
                              "driver.h: bytes read, or -1"),
    "ibv_is_qpt_supported": _v("int ibv_is_qpt_supported(uint32_t caps, enum ibv_qp_type"
                               " qpt)", "void", "verbs.h: a bit test"),
    "ibv_flow_label_to_udp_sport": _v("uint16_t ibv_flow_label_to_udp_sport(uint32_t"
                                      " fl)", "void", "verbs.h: a computation"),
    # tables
    **{n: _v(f"const char *{n}(enum ...)", "void", "ibv_event_type_str(3): never NULL")
       for n in ("ibv_node_type_str", "ibv_port_state_str", "ibv_event_type_str",
                 "ibv_wc_status_str")},
    **{n: _v(f"int {n}(...)", "void", "ibv_rate_to_mult(3): a table; -1 / IBV_RATE_MAX"
             " for a value it lacks") for n in ("ibv_rate_to_mult", "ibv_rate_to_mbps",
                                                "mult_to_ibv_rate", "mbps_to_ibv_rate")},
    # memory
    "ibv_reg_mr_iova2": _v("struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,"
                           " size_t length, uint64_t iova, unsigned int access)", "ptr",
                           "ibv_reg_mr(3)", {"pd": obj("pd"), "access": MR_ACCESS},
                           produces=("mr",)),
    "ibv_rereg_mr": _v(
        "int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,"
        " size_t length, int access)", "errno",
        "ibv_rereg_mr(3): 0, or IBV_REREG_MR_ERR_INPUT / _ERR_CMD with errno",
        {"mr": obj("mr"),
         "flags": Arg("int", valid="OR of CHANGE_TRANSLATION CHANGE_PD CHANGE_ACCESS",
                      invalid={"no flag": (0, EINVAL)}),
         "access": MR_ACCESS},
        requires={"mr": "no window bound (else IBV_REREG_MR_ERR_CMD, EBUSY)"}),
    "ibv_inc_rkey": _v("uint32_t ibv_inc_rkey(uint32_t rkey)", "void",
                       "ibv_inc_rkey(3): the next key byte, same index"),
    "ibv_alloc_dm": _v("struct ibv_dm *ibv_alloc_dm(struct ibv_context *context, struct"
                       " ibv_alloc_dm_attr *attr)", "ptr", "ibv_alloc_dm(3)",
                       {"attr.length": Arg("size_t", valid="1 .. max_dm_size",
                                           invalid={"0": (0, EINVAL)})},
                       produces=("dm",)),
    "ibv_free_dm": _v("int ibv_free_dm(struct ibv_dm *dm)", "errno", "ibv_alloc_dm(3)",
                      {"dm": obj("dm")}, consumes=("dm",),
                      requires={"dm": "no MR on it (else EBUSY)"}),
    "ibv_reg_dm_mr": _v("struct ibv_mr *ibv_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm,"
                        " uint64_t dm_offset, size_t length, unsigned int access)", "ptr",
                        "ibv_alloc_dm(3)",
                        {"access": Arg("unsigned int", valid="ZERO_BASED with LOCAL_WRITE"
                                       " REMOTE_WRITE REMOTE_READ REMOTE_ATOMIC",
                                       invalid={"without ZERO_BASED": (LOCAL_WRITE, EINVAL)})},
                        produces=("mr",)),
    "ibv_memcpy_to_dm": _v("int ibv_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset,"
                           " const void *host_addr, size_t length)", "errno",
                           "ibv_alloc_dm(3)",
                           {"length": Arg("size_t", valid="within the DM",
                                          invalid={"past its end": ("len+1", EINVAL)})}),
    "ibv_memcpy_from_dm": _v("int ibv_memcpy_from_dm(void *host_addr, struct ibv_dm *dm,"
                             " uint64_t dm_offset, size_t length)", "errno",
                             "ibv_alloc_dm(3)",
                             {"length": Arg("size_t", valid="within the DM",
                                            invalid={"past its end": ("len+1", EINVAL)})}),
    # completion queues and channels
    "ibv_create_comp_channel": _v("struct ibv_comp_channel *ibv_create_comp_channel(struct"
                                  " ibv_context *context)", "ptr", "ibv_create_comp_channel(3)",
                                  produces=("channel",)),
    "ibv_destroy_comp_channel": _v("int ibv_destroy_comp_channel(struct ibv_comp_channel"
                                   " *channel)", "errno", "ibv_create_comp_channel(3)",
                                   consumes=("channel",),
                                   requires={"channel": "no CQ uses it (else EBUSY)"}),
    "ibv_create_cq_ex": _v("struct ibv_cq_ex *ibv_create_cq_ex(struct ibv_context *context,"
                           " struct ibv_cq_init_attr_ex *cq_attr)", "ptr", "ibv_create_cq_ex(3)",
                           {"cq_attr.wc_flags": Arg("uint64_t", valid="IBV_WC_STANDARD_FLAGS"
                                                    " COMPLETION_TIMESTAMP(_WALLCLOCK)"),
                            "cq_attr.comp_mask": Arg("uint32_t", invalid={
                                "unknown bits": (1 << 31, EINVAL)})},
                           produces=("cq",)),
    "ibv_start_poll": _v("int ibv_start_poll(struct ibv_cq_ex *cq, struct"
                         " ibv_poll_cq_attr *attr)", "errno",
                         "ibv_create_cq_ex(3): ENOENT when empty (no ibv_end_poll then)"),
    "ibv_next_poll": _v("int ibv_next_poll(struct ibv_cq_ex *cq)", "errno",
                        "ibv_create_cq_ex(3): ENOENT when empty"),
    "ibv_end_poll": _v("void ibv_end_poll(struct ibv_cq_ex *cq)", "void",
                       "ibv_create_cq_ex(3)"),
    **{f"ibv_wc_read_{f}": _v(f"... ibv_wc_read_{f}(struct ibv_cq_ex *cq)", "void", WC_READ)
       for f in ("opcode", "vendor_err", "byte_len", "imm_data", "invalidated_rkey", "qp_num",
                 "src_qp", "wc_flags", "slid", "sl", "dlid_path_bits", "completion_ts",
                 "completion_wallclock_ns", "cvlan", "flow_tag", "tm_info")},
    "ibv_poll_cq": _v("int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)",
                      "void", "ibv_poll_cq(3): the number of completions (0 .. num_entries),"
                      " negative on failure; each completion's fields as verbs.OPS says"),
    "ibv_req_notify_cq": _v("int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)",
                            "errno", "ibv_req_notify_cq(3)", {"cq": obj("cq")},
                            leaves={"cq": "armed (one shot)"}),
    "ibv_get_cq_event": _v("int ibv_get_cq_event(struct ibv_comp_channel *channel, struct"
                           " ibv_cq **cq, void **cq_context)", "void",
                           "ibv_get_cq_event(3): 0, or -1"),
    "ibv_ack_cq_events": _v("void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)",
                            "void", "ibv_get_cq_event(3): ibv_destroy_cq waits for these"),
    "ibv_resize_cq": _v("int ibv_resize_cq(struct ibv_cq *cq, int cqe)", "errno",
                        "ibv_resize_cq(3)",
                        {"cqe": Arg("int", valid="pending completions .. max_cqe",
                                    invalid={"0": (0, EINVAL),
                                             "above max_cqe": ("max_cqe+1", EINVAL)})}),
    "ibv_cq_ex_to_cq": _v("struct ibv_cq *ibv_cq_ex_to_cq(struct ibv_cq_ex *cq)", "ptr",
                          "ibv_create_cq_ex(3)"),
    # queue pairs
    "ibv_qp_to_qp_ex": _v("struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)", "ptr",
                          "ibv_create_qp_ex(3): NULL unless created with send_ops_flags"),
    "ibv_query_qp": _v("int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int"
                       " attr_mask, struct ibv_qp_init_attr *init_attr)", "errno",
                       "ibv_query_qp(3): the state is the model's (RESET .. ERR, SQE after"
                       " a UC or UD send error)", {"qp": obj("qp")}),
    "ibv_post_send": _v(
        "int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,"
        " struct ibv_send_wr **bad_wr)", "errno",
        "ibv_post_send(3): on failure *bad_wr is the first WR not posted; those before"
        " it are posted",
        {"qp": Arg("struct ibv_qp *", valid="a QP whose send queue takes work (RTS; SQD"
                   " holds it; ERR and SQE flush it)",
                   invalid={"RESET, INIT or RTR": ("qp", EINVAL)}),
         "wr": Arg("struct ibv_send_wr *", valid="a list of WRs of an opcode the QP type"
                   " allows (verbs.OPS), num_sge <= max_send_sge",
                   invalid={"num_sge above max_send_sge": ("max_send_sge+1", None),
                            "an opcode the QP type lacks": ("opcode", EINVAL)})},
        requires={"qp": RTS}),
    "ibv_post_recv": _v(
        "int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,"
        " struct ibv_recv_wr **bad_wr)", "errno",
        "ibv_post_recv(3): as ibv_post_send; a QP on an SRQ takes ibv_post_srq_recv",
        {"qp": Arg("struct ibv_qp *", valid="a QP past RESET, not on an SRQ"),
         "wr": Arg("struct ibv_recv_wr *", valid="num_sge <= max_recv_sge")}),
    "ibv_wr_send_imm": _v("void ibv_wr_send_imm(struct ibv_qp_ex *qp, __be32 imm_data)",
                          "void", "ibv_wr_post(3)", requires={"qp_ex": "in a batch"}),
    "ibv_wr_send_inv": _v("void ibv_wr_send_inv(struct ibv_qp_ex *qp, uint32_t"
                          " invalidate_rkey)", "void", "ibv_wr_post(3): RC on droce",
                          requires={"qp_ex": "in a batch"}),
    "ibv_wr_rdma_write_imm": _v("void ibv_wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t"
                                " rkey, uint64_t remote_addr, __be32 imm_data)", "void",
                                "ibv_wr_post(3)", requires={"qp_ex": "in a batch"}),
    "ibv_wr_rdma_read": _v("void ibv_wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey,"
                           " uint64_t remote_addr)", "void", "ibv_wr_post(3): RC",
                           requires={"qp_ex": "in a batch"}),
    "ibv_wr_atomic_cmp_swp": _v("void ibv_wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t"
                                " rkey, uint64_t remote_addr, uint64_t compare, uint64_t"
                                " swap)", "void", "ibv_wr_post(3): RC, 8-aligned",
                                requires={"qp_ex": "in a batch"}),
    "ibv_wr_atomic_fetch_add": _v("void ibv_wr_atomic_fetch_add(struct ibv_qp_ex *qp,"
                                  " uint32_t rkey, uint64_t remote_addr, uint64_t add)",
                                  "void", "ibv_wr_post(3): RC, 8-aligned",
                                  requires={"qp_ex": "in a batch"}),
    "ibv_wr_bind_mw": _v("void ibv_wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw,"
                         " uint32_t rkey, const struct ibv_mw_bind_info *bind_info)", "void",
                         "ibv_wr_post(3): a type 2 window of the QP's PD; errors in the"
                         " completion (IBV_WC_MW_BIND_ERR) or at ibv_wr_complete",
                         requires={"qp_ex": "in a batch"}),
    "ibv_wr_local_inv": _v("void ibv_wr_local_inv(struct ibv_qp_ex *qp, uint32_t"
                           " invalidate_rkey)", "void", "ibv_wr_post(3)",
                           requires={"qp_ex": "in a batch"}),
    "ibv_wr_set_sge_list": _v("void ibv_wr_set_sge_list(struct ibv_qp_ex *qp, size_t"
                              " num_sge, const struct ibv_sge *sg_list)", "void",
                              "ibv_wr_post(3): num_sge <= max_send_sge, else"
                              " ibv_wr_complete fails"),
    "ibv_wr_set_inline_data": _v("void ibv_wr_set_inline_data(struct ibv_qp_ex *qp, void"
                                 " *addr, size_t length)", "void",
                                 "ibv_wr_post(3): length <= max_inline_data"),
    "ibv_wr_set_inline_data_list": _v("void ibv_wr_set_inline_data_list(struct ibv_qp_ex"
                                      " *qp, size_t num_buf, const struct ibv_data_buf"
                                      " *buf_list)", "void", "ibv_wr_post(3)"),
    "ibv_wr_set_ud_addr": _v("void ibv_wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah"
                             " *ah, uint32_t remote_qpn, uint32_t remote_qkey)", "void",
                             "ibv_wr_post(3): UD; remote_qpn 0xFFFFFF for a group"),
    # SRQs (run by queues.py)
    "ibv_create_srq": _v("struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct"
                         " ibv_srq_init_attr *srq_init_attr)", "ptr", "ibv_create_srq(3)",
                         {"pd": obj("pd"), "srq_init_attr.attr.max_wr": SRQ_ATTR_MAX_WR,
                          "srq_init_attr.attr.max_sge": Arg("uint32_t",
                                                            valid="1 .. max_srq_sge")},
                         produces=("srq",)),
    "ibv_create_srq_ex": _v("struct ibv_srq *ibv_create_srq_ex(struct ibv_context *context,"
                            " struct ibv_srq_init_attr_ex *srq_init_attr_ex)", "ptr",
                            "ibv_create_srq_ex(3)",
                            {"srq_init_attr_ex.srq_type": Arg(
                                "enum ibv_srq_type", valid=("IBV_SRQT_BASIC",),
                                invalid={"XRC or TM": ("IBV_SRQT_XRC", "EOPNOTSUPP")}),
                             "srq_init_attr_ex.attr.max_wr": SRQ_ATTR_MAX_WR},
                            produces=("srq",)),
    "ibv_destroy_srq": _v("int ibv_destroy_srq(struct ibv_srq *srq)", "errno",
                          "ibv_create_srq(3)", {"srq": obj("srq")}, consumes=("srq",),
                          requires={"srq": "no QP uses it (else a failure)"}),
    "ibv_post_srq_recv": _v("int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr"
                            " *recv_wr, struct ibv_recv_wr **bad_recv_wr)", "errno",
                            "ibv_post_srq_recv(3)",
                            {"srq": Arg("struct ibv_srq *", valid="fewer than max_wr posted",
                                        invalid={"the SRQ is full": ("srq", None)})}),
    "ibv_modify_srq": _v("int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr"
                         " *srq_attr, int srq_attr_mask)", "errno", "ibv_modify_srq(3)",
                         {"srq_attr.srq_limit": Arg("uint32_t", valid="0 .. max_wr",
                                                    invalid={"above max_wr": ("max_wr+1",
                                                                              EINVAL)}),
                          "srq_attr_mask": Arg("int", valid=("IBV_SRQ_LIMIT",),
                                               invalid={"IBV_SRQ_MAX_WR (no resize)":
                                                        ("IBV_SRQ_MAX_WR", "EOPNOTSUPP")})},
                         leaves={"srq": "limit armed: IBV_EVENT_SRQ_LIMIT_REACHED once fewer"
                                        " receives than it are posted, then 0"}),
    "ibv_query_srq": _v("int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr"
                        " *srq_attr)", "errno", "ibv_query_srq(3): max_wr at least as asked;"
                        " srq_limit as armed, 0 once fired"),
    # address handles
    "ibv_create_ah": _v("struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr"
                        " *attr)", "ptr", "ibv_create_ah(3)",
                        {"attr.grh.sgid_index": Arg("uint8_t", valid="a GID of the dgid's"
                                                    " family", invalid={
                                                        "the other family": ("gid", EINVAL)})},
                        produces=("ah",)),
    "ibv_create_ah_from_wc": _v("struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,"
                                " struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)",
                                "ptr", "ibv_create_ah_from_wc(3)", produces=("ah",)),
    "ibv_init_ah_from_wc": _v("int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t"
                              " port_num, struct ibv_wc *wc, struct ibv_grh *grh, struct"
                              " ibv_ah_attr *ah_attr)", "errno", "ibv_create_ah_from_wc(3)"),
    "ibv_destroy_ah": _v("int ibv_destroy_ah(struct ibv_ah *ah)", "errno", "ibv_create_ah(3):"
                         " sends already posted still go", {"ah": obj("ah")},
                         consumes=("ah",)),
    "ibv_query_qp_data_in_order": _v("int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum"
                                     " ibv_wr_opcode op, uint32_t flags)", "void",
                                     "ibv_query_qp_data_in_order(3): 0 on droce"),
    # domains
    "ibv_alloc_td": _v("struct ibv_td *ibv_alloc_td(struct ibv_context *context, struct"
                       " ibv_td_init_attr *init_attr)", "ptr", "ibv_alloc_td(3)",
                       {"init_attr.comp_mask": Arg("uint32_t", valid=(0,),
                                                   invalid={"unknown bits": (1, EINVAL)})},
                       produces=("td",)),
    "ibv_dealloc_td": _v("int ibv_dealloc_td(struct ibv_td *td)", "errno", "ibv_alloc_td(3)",
                         {"td": obj("td")}, consumes=("td",),
                         requires={"td": "no parent domain holds it (else EBUSY)"}),
    "ibv_alloc_parent_domain": _v(
        "struct ibv_pd *ibv_alloc_parent_domain(struct ibv_context *context, struct"
        " ibv_parent_domain_init_attr *attr)", "ptr", "ibv_alloc_parent_domain(3)",
        {"attr.comp_mask": Arg("uint32_t", valid=(0,), invalid={
            "IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS": (1, "EOPNOTSUPP")})},
        produces=("pd",)),
    # asynchronous events
    "ibv_get_async_event": _v("int ibv_get_async_event(struct ibv_context *context, struct"
                              " ibv_async_event *event)", "void", "ibv_get_async_event(3):"
                              " 0, or -1 (EAGAIN on a non-blocking async_fd)"),
    "ibv_ack_async_event": _v("void ibv_ack_async_event(struct ibv_async_event *event)",
                              "void", "ibv_get_async_event(3): objects are destroyed only"
                              " after their events are acked"),
})

# -- rdma_cm (droce's librdmacm.so.1; rdma_cma(7), each call's page) -----
# States of an id as the man pages use them: idle (created), bound
# (rdma_bind_addr), addr resolved, route resolved, listening, connecting
# (rdma_connect sent), connected, disconnected.
CM_IDLE, CM_BOUND, CM_ADDR, CM_ROUTE, CM_LISTEN, CM_CONNECT, CM_CONNECTED = (
    "idle", "bound", "addr resolved", "route resolved", "listening", "connecting",
    "connected")


def _cm(sig, man, args=None, returns="errno", **kw):
    """An rdma_cm call: returns 0, or -1 with errno ("errno" here)."""
    return Verb(sig, args or {}, returns, man=man, **kw)


CM_ID = obj("cm_id", "struct rdma_cm_id *")
VERBS.update({
    "rdma_create_event_channel": _cm("struct rdma_event_channel *rdma_create_event_channel"
                                     "(void)", "rdma_create_event_channel(3)", returns="ptr",
                                     produces=("channel",)),
    "rdma_destroy_event_channel": _cm("void rdma_destroy_event_channel(struct"
                                      " rdma_event_channel *channel)",
                                      "rdma_create_event_channel(3): every id on it"
                                      " destroyed first", returns="void",
                                      consumes=("channel",)),
    "rdma_create_id": _cm("int rdma_create_id(struct rdma_event_channel *channel, struct"
                          " rdma_cm_id **id, void *context, enum rdma_port_space ps)",
                          "rdma_create_id(3)",
                          {"channel": Arg("struct rdma_event_channel *", valid="a channel,"
                                          " or NULL: a synchronous id"),
                           "ps": Arg("enum rdma_port_space", valid=("RDMA_PS_TCP",
                                     "RDMA_PS_UDP", "RDMA_PS_IB", "RDMA_PS_IPOIB"),
                                     invalid={"an unknown port space": (0x999, EINVAL)})},
                          produces=("cm_id",), leaves={"cm_id": CM_IDLE}),
    "rdma_destroy_id": _cm("int rdma_destroy_id(struct rdma_cm_id *id)", "rdma_create_id(3):"
                           " its QP destroyed first; events not acked are not waited for",
                           {"id": CM_ID}, consumes=("cm_id",)),
    "rdma_bind_addr": _cm("int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)",
                          "rdma_bind_addr(3)",
                          {"id": Arg("struct rdma_cm_id *", valid="idle",
                                     invalid={"a connected id": ("id", EINVAL)}),
                           "addr": Arg("struct sockaddr *", valid="one of droced's addresses"
                                       " or the wildcard; port 0 picks one",
                                       invalid={"an address not droced's": (
                                           "192.0.2.1", "EADDRNOTAVAIL"),
                                                "a port bound already": (
                                                    "port", "EADDRINUSE")})},
                          requires={"cm_id": CM_IDLE}, leaves={"cm_id": CM_BOUND}),
    "rdma_resolve_addr": _cm("int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr"
                             " *src_addr, struct sockaddr *dst_addr, int timeout_ms)",
                             "rdma_resolve_addr(3): RDMA_CM_EVENT_ADDR_RESOLVED or"
                             " _ADDR_ERROR later",
                             {"id": Arg("struct rdma_cm_id *", valid="idle or bound",
                                        invalid={"a connected id": ("id", EINVAL)}),
                              "dst_addr": Arg("struct sockaddr *",
                                                           valid="a reachable address")},
                             requires={"cm_id": f"{CM_IDLE} or {CM_BOUND}"},
                             leaves={"cm_id": CM_ADDR}),
    "rdma_resolve_route": _cm("int rdma_resolve_route(struct rdma_cm_id *id, int"
                              " timeout_ms)", "rdma_resolve_route(3): ROUTE_RESOLVED later",
                              {"id": Arg("struct rdma_cm_id *", valid="addr resolved",
                                         invalid={"an idle id": ("id", EINVAL),
                                                  "a connected id": ("id", EINVAL)})},
                              requires={"cm_id": CM_ADDR}, leaves={"cm_id": CM_ROUTE}),
    "rdma_listen": _cm("int rdma_listen(struct rdma_cm_id *id, int backlog)",
                       "rdma_listen(3): backlog <= 0 means the default",
                       {"id": Arg("struct rdma_cm_id *", valid="bound",
                                  invalid={"an idle id": ("id", EINVAL),
                                           "a connected id": ("id", EINVAL)})},
                       requires={"cm_id": CM_BOUND}, leaves={"cm_id": CM_LISTEN}),
    "rdma_connect": _cm("int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param"
                        " *conn_param)", "rdma_connect(3): ESTABLISHED, REJECTED or"
                        " UNREACHABLE later",
                        {"id": Arg("struct rdma_cm_id *", valid="route resolved, with a QP"
                                   " or qp_num in conn_param",
                                   invalid={"an idle id": ("id", EINVAL),
                                            # Linux's cma; droce gave EISCONN
                                            "a connected id": ("id", EINVAL)})},
                        requires={"cm_id": CM_ROUTE}, leaves={"cm_id": CM_CONNECT}),
    "rdma_accept": _cm("int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param"
                       " *conn_param)", "rdma_accept(3)",
                       {"id": Arg("struct rdma_cm_id *", valid="an id from a"
                                  " CONNECT_REQUEST event",
                                  invalid={"an id not asked to connect": ("id", EINVAL),
                                           "a connected id": ("id", EINVAL)})},
                       leaves={"cm_id": CM_CONNECTED}),
    "rdma_reject": _cm("int rdma_reject(struct rdma_cm_id *id, const void *private_data,"
                       " uint8_t private_data_len)", "rdma_reject(3)",
                       {"id": Arg("struct rdma_cm_id *", valid="an id from a"
                                  " CONNECT_REQUEST event",
                                  invalid={"an id not asked to connect": ("id", EINVAL),
                                           # the IB CM refuses a REJ once established
                                           "a connected id": ("id", EINVAL)})}),
    "rdma_disconnect": _cm("int rdma_disconnect(struct rdma_cm_id *id)", "rdma_disconnect(3):"
                           " DISCONNECTED on both sides; the QP to ERR",
                           {"id": Arg("struct rdma_cm_id *", valid="connected or connecting",
                                      invalid={"an idle id": ("id", EINVAL)})}),
    "rdma_establish": _cm("int rdma_establish(struct rdma_cm_id *id)", "rdma_establish(3):"
                          " the RTU for an id without a QP of librdmacm's",
                          {"id": CM_ID}),
    "rdma_get_request": _cm("int rdma_get_request(struct rdma_cm_id *listen, struct"
                            " rdma_cm_id **id)", "rdma_get_request(3): synchronous"
                            " listeners", produces=("cm_id",)),
    "rdma_create_ep": _cm("int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo"
                          " *res, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)",
                          "rdma_create_ep(3)", produces=("cm_id",)),
    "rdma_destroy_ep": _cm("void rdma_destroy_ep(struct rdma_cm_id *id)", "rdma_create_ep(3)",
                           returns="void", consumes=("cm_id",)),
    "rdma_create_qp": _cm("int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,"
                          " struct ibv_qp_init_attr *qp_init_attr)", "rdma_create_qp(3)",
                          {"id": Arg("struct rdma_cm_id *", valid="an id with a device"
                                     " (address resolved or bound to one)",
                                     invalid={"an idle id": ("id", EINVAL)})},
                          produces=("qp",)),
    "rdma_create_qp_ex": _cm("int rdma_create_qp_ex(struct rdma_cm_id *id, struct"
                             " ibv_qp_init_attr_ex *qp_init_attr)", "rdma_create_qp(3)",
                             produces=("qp",)),
    "rdma_destroy_qp": _cm("void rdma_destroy_qp(struct rdma_cm_id *id)", "rdma_create_qp(3)",
                           returns="void", consumes=("qp",)),
    "rdma_init_qp_attr": _cm("int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr"
                             " *qp_attr, int *qp_attr_mask)", "rdma_init_qp_attr(3)"),
    "rdma_migrate_id": _cm("int rdma_migrate_id(struct rdma_cm_id *id, struct"
                           " rdma_event_channel *channel)", "rdma_migrate_id(3)"),
    "rdma_get_cm_event": _cm("int rdma_get_cm_event(struct rdma_event_channel *channel,"
                             " struct rdma_cm_event **event)", "rdma_get_cm_event(3)",
                             produces=("cm_event",)),
    "rdma_ack_cm_event": _cm("int rdma_ack_cm_event(struct rdma_cm_event *event)",
                             "rdma_get_cm_event(3)", consumes=("cm_event",)),
    "rdma_event_str": _cm("const char *rdma_event_str(enum rdma_cm_event_type event)",
                          "rdma_event_str(3)", returns="void"),
    "rdma_get_devices": _cm("struct ibv_context **rdma_get_devices(int *num_devices)",
                            "rdma_get_devices(3)", returns="ptr"),
    "rdma_free_devices": _cm("void rdma_free_devices(struct ibv_context **list)",
                             "rdma_get_devices(3)", returns="void"),
    "rdma_getaddrinfo": _cm("int rdma_getaddrinfo(const char *node, const char *service,"
                            " const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)",
                            "rdma_getaddrinfo(3)"),
    "rdma_freeaddrinfo": _cm("void rdma_freeaddrinfo(struct rdma_addrinfo *res)",
                             "rdma_getaddrinfo(3)", returns="void"),
    "rdma_get_src_port": _cm("__be16 rdma_get_src_port(struct rdma_cm_id *id)",
                             "rdma_get_src_port(3)", returns="void"),
    "rdma_get_dst_port": _cm("__be16 rdma_get_dst_port(struct rdma_cm_id *id)",
                             "rdma_get_dst_port(3)", returns="void"),
    **{n: _cm(f"... {n}(struct rdma_cm_id *id, ...)", "rdma_verbs.h: the ibv_ verb it"
              " wraps, on the id's PD or QP (ibv_reg_mr, ibv_post_send, ibv_post_recv,"
              " ibv_poll_cq)") for n in ("rdma_reg_msgs", "rdma_reg_read", "rdma_reg_write",
                                          "rdma_dereg_mr", "rdma_post_recv", "rdma_post_send",
                                          "rdma_post_read", "rdma_post_write",
                                          "rdma_post_ud_send", "rdma_get_send_comp",
                                          "rdma_get_recv_comp")},
    "rdma_create_srq": _cm("int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,"
                           " struct ibv_srq_init_attr *attr)", "rdma_create_srq(3)",
                           produces=("srq",)),
    "rdma_create_srq_ex": _cm("int rdma_create_srq_ex(struct rdma_cm_id *id, struct"
                              " ibv_srq_init_attr_ex *attr)", "rdma_create_srq(3)",
                              produces=("srq",)),
    "rdma_destroy_srq": _cm("void rdma_destroy_srq(struct rdma_cm_id *id)",
                            "rdma_create_srq(3)", returns="void", consumes=("srq",)),
    "rdma_notify": _cm("int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)",
                       "rdma_notify(3): COMM_EST on a passive id waiting for the RTU;"
                       " EISCONN once established; EINVAL on an active id"),
    "rdma_join_multicast": _cm("int rdma_join_multicast(struct rdma_cm_id *id, struct"
                               " sockaddr *addr, void *context)", "rdma_join_multicast(3):"
                               " a UD id with a source address; MULTICAST_JOIN later"),
    "rdma_join_multicast_ex": _cm("int rdma_join_multicast_ex(struct rdma_cm_id *id, struct"
                                  " rdma_cm_join_mc_attr_ex *mc_join_attr, void *context)",
                                  "rdma_join_multicast_ex(3)"),
    "rdma_leave_multicast": _cm("int rdma_leave_multicast(struct rdma_cm_id *id, struct"
                                " sockaddr *addr)", "rdma_leave_multicast(3)",
                                {"addr": Arg("struct sockaddr *", valid="a group joined",
                                             invalid={"a group not joined": ("addr", None)})}),
    "rdma_set_option": _cm("int rdma_set_option(struct rdma_cm_id *id, int level, int"
                           " optname, void *optval, size_t optlen)", "rdma_set_option(3)",
                           {"level": Arg("int", valid=("RDMA_OPTION_ID", "RDMA_OPTION_IB")),
                            "optname": Arg("int", valid=("TOS", "ACK_TIMEOUT", "REUSEADDR",
                                                         "AFONLY")),
                            "optlen": Arg("size_t", valid="the option's size",
                                          invalid={"a wrong size": (3, EINVAL)})}),
    # ECE travels in the REQ and REP (Vendor ID, MAD attribute modifier); only for ids whose
    # application drives the QP itself
    "rdma_set_local_ece": _cm("int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece"
                              " *ece)", "rdma_set_local_ece(3): before rdma_connect or"
                              " rdma_accept", {
                                  "id": Arg("struct rdma_cm_id *", valid="an id without a QP",
                                            invalid={"NULL": (None, EINVAL),
                                                     "an id with a QP": ("id->qp", EINVAL)}),
                                  "ece": Arg("struct ibv_ece *", valid="vendor_id != 0,"
                                             " comp_mask 0",
                                             invalid={"NULL": (None, EINVAL),
                                                      "vendor_id 0": ("vendor_id=0", EINVAL),
                                                      "a comp_mask": ("comp_mask=1", EINVAL)})}),
    "rdma_get_remote_ece": _cm("int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece"
                               " *ece)", "rdma_get_remote_ece(3): the peer's, from"
                               " CONNECT_REQUEST or CONNECT_RESPONSE; 0 when it sent none", {
                                   "id": Arg("struct rdma_cm_id *", valid="an id without a QP",
                                             invalid={"NULL": (None, EINVAL),
                                                      "an id with a QP": ("id->qp", EINVAL)}),
                                   "ece": Arg("struct ibv_ece *", valid="any",
                                              invalid={"NULL": (None, EINVAL)})}),
    "rdma_reject_ece": _cm("int rdma_reject_ece(struct rdma_cm_id *id, const void"
                           " *private_data, uint8_t private_data_len)", "rdma_reject_ece(3):"
                           " a REJ with reason 35 (vendor option not supported)", {
                               "id": Arg("struct rdma_cm_id *", valid="a connect request's id",
                                         invalid={"NULL": (None, EINVAL)})}),
})

# Names doc/verbs.md lists that need no description of their own.
UNDESCRIBED = {
    "___ibv_query_port": "the header's inline form of ibv_query_port",
    "_ibv_query_gid_ex": "the exported name of ibv_query_gid_ex",
    "_ibv_query_gid_table": "the exported name of ibv_query_gid_table",
    "__ibv_get_device_list": "the header's macro behind ibv_get_device_list",
    "__ibv_reg_mr": "the header's macro behind ibv_reg_mr",
    "__ibv_reg_mr_iova": "the header's macro behind ibv_reg_mr_iova",
    "ibv_advise_mr": "not described yet: the model registers no ODP MRs; its errnos are "
                     "tests/verbs/odp_mr's and rdma-core's test_odp.py's",
    "ibv_modify_qp_rate_limit": "not described yet: a rate is measured, not modelled; its "
                                "errnos and the rates are tests/verbs/ibv_modify_qp_rate_limit's",
}
