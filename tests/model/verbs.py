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
