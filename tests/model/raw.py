# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The verbs pyverbs 44 does not wrap (ibv_attach_mcast, ibv_detach_mcast,
ibv_reg_mr_iova), called through ctypes on a context of their own."""
import ctypes as C

_lib = C.CDLL("libibverbs.so.1", use_errno=True)
_P = C.c_void_p


class _Cap(C.Structure):
    _fields_ = [(n, C.c_uint32) for n in ("max_send_wr", "max_recv_wr", "max_send_sge",
                                          "max_recv_sge", "max_inline_data")]


class _QpInit(C.Structure):
    _fields_ = [("qp_context", _P), ("send_cq", _P), ("recv_cq", _P), ("srq", _P),
                ("cap", _Cap), ("qp_type", C.c_int), ("sq_sig_all", C.c_int)]


def _sig(name, res, *args):
    f = getattr(_lib, name)
    f.restype, f.argtypes = res, list(args)
    return f


_get_list = _sig("ibv_get_device_list", C.POINTER(_P), C.POINTER(C.c_int))
_free_list = _sig("ibv_free_device_list", None, C.POINTER(_P))
_get_name = _sig("ibv_get_device_name", C.c_char_p, _P)
_open = _sig("ibv_open_device", _P, _P)
_close = _sig("ibv_close_device", C.c_int, _P)
_alloc_pd = _sig("ibv_alloc_pd", _P, _P)
_dealloc_pd = _sig("ibv_dealloc_pd", C.c_int, _P)
_create_cq = _sig("ibv_create_cq", _P, _P, C.c_int, _P, _P, C.c_int)
_destroy_cq = _sig("ibv_destroy_cq", C.c_int, _P)
_create_qp = _sig("ibv_create_qp", _P, _P, C.POINTER(_QpInit))
_destroy_qp = _sig("ibv_destroy_qp", C.c_int, _P)
_attach = _sig("ibv_attach_mcast", C.c_int, _P, C.c_char_p, C.c_uint16)
_detach = _sig("ibv_detach_mcast", C.c_int, _P, C.c_char_p, C.c_uint16)
_reg_iova = _sig("ibv_reg_mr_iova", _P, _P, _P, C.c_size_t, C.c_uint64, C.c_int)
_dereg = _sig("ibv_dereg_mr", C.c_int, _P)


def _ptr(p):
    """A pointer result, or the errno the call set."""
    return (p, 0) if p else (None, C.get_errno())


class Raw:
    """One context with one PD and one CQ for the ctypes verbs."""

    def __init__(self, dev_name):
        n = C.c_int()
        lst = _get_list(C.byref(n))
        dev = next(lst[i] for i in range(n.value) if _get_name(lst[i]).decode() == dev_name)
        self.ctx = _open(dev)
        _free_list(lst)
        self.pd = _alloc_pd(self.ctx)
        self.cq = _create_cq(self.ctx, 16, None, None, 0)
        if not (self.ctx and self.pd and self.cq):
            raise OSError(C.get_errno(), "raw context")
        self.bufs = {}

    def create_qp(self, qp_type):
        a = _QpInit(send_cq=self.cq, recv_cq=self.cq, qp_type=qp_type,
                    cap=_Cap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1))
        return _ptr(_create_qp(self.pd, C.byref(a)))

    def destroy_qp(self, qp):
        return _destroy_qp(qp)

    @staticmethod
    def attach_mcast(qp, gid):
        return _attach(qp, gid, 0)

    @staticmethod
    def detach_mcast(qp, gid):
        return _detach(qp, gid, 0)

    def reg_mr_iova(self, length, iova, access, same_page_offset=False):
        """SAME_PAGE_OFFSET: IOVA moved to the buffer's offset in its page."""
        buf = C.create_string_buffer(length)
        if same_page_offset:
            iova += C.addressof(buf) & 0xfff
        mr, err = _ptr(_reg_iova(self.pd, C.addressof(buf), length, iova, access))
        if mr:
            self.bufs[mr] = buf
        return mr, err

    def dereg_mr(self, mr):
        ret = _dereg(mr)
        if ret == 0:
            del self.bufs[mr]
        return ret

    def close(self):
        for p, f in ((self.cq, _destroy_cq), (self.pd, _dealloc_pd), (self.ctx, _close)):
            if f(p) != 0:
                raise OSError(C.get_errno(), "raw teardown")


def qp_pointer(qp):
    """The struct ibv_qp * a pyverbs QP holds, so that the ctypes verbs can
    act on it (pyverbs 44 has no attach_mcast): the word among the
    object's first ones that points at a struct whose qp_num (offset 52)
    and qp_type (offset 60) are the QP's. Only 8-aligned words above the
    first page are followed: the object's other words are Python objects
    (valid memory) or small packed ints."""
    words = (C.c_uint64 * 16).from_address(id(qp))
    for w in list(words)[2:]:
        if w > 0x10000 and w % 8 == 0 and \
           C.c_uint32.from_address(w + 52).value == qp.qp_num and \
           C.c_uint32.from_address(w + 60).value == qp.qp_type:
            return w
    raise LookupError("no struct ibv_qp in the pyverbs QP")


def mw_pointer(mw):
    """The struct ibv_mw * a pyverbs MW holds, found as qp_pointer finds a
    QP's: the word pointing at a struct whose rkey (offset 16), handle (20)
    and type (24) are the window's."""
    words = (C.c_uint64 * 16).from_address(id(mw))
    for w in list(words)[2:]:
        if w > 0x10000 and w % 8 == 0 and \
           C.c_uint32.from_address(w + 16).value == mw.rkey and \
           C.c_uint32.from_address(w + 20).value == mw.handle and \
           C.c_uint32.from_address(w + 24).value == mw.type:
            return w
    raise LookupError("no struct ibv_mw in the pyverbs MW")


def set_mw_rkey(mw, rkey):
    """Write RKEY into the window's mw->rkey, as ibv_bind_mw(3) asks of its
    caller when a bind's completion reports a failure: the provider has
    put the new R_Key there when the bind was posted."""
    C.c_uint32.from_address(mw_pointer(mw) + 16).value = rkey


def async_fd(ctx):
    """The async_fd of the struct ibv_context a pyverbs Context holds
    (pyverbs 44 gives cmd_fd, not it): found as qp_pointer finds a QP, the
    word pointing at a struct whose cmd_fd (offset 264 in rdma-core 44's
    verbs.h) is the context's; async_fd follows it."""
    words = (C.c_uint64 * 16).from_address(id(ctx))
    for w in list(words)[2:]:
        if w > 0x10000 and w % 8 == 0 and C.c_int.from_address(w + 264).value == ctx.cmd_fd:
            return C.c_int.from_address(w + 268).value
    raise LookupError("no struct ibv_context in the pyverbs Context")
