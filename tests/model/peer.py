# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The other end of a pair on another droced (run.py --peer): a child
process started under the second daemon's droce-run, holding that side's
pyverbs objects and acting on them for run.py over its stdin and stdout.

run.py sees the remote objects as Ref proxies: reading an attribute,
setting one or calling a method is one message; a value comes back as
itself (numbers, bytes, strings and tuples or lists of them), a work
completion as a plain namespace of its fields, any other object as a new
Ref; a PyverbsRDMAError is raised again on run.py's side with its errno.
Peer.lib makes objects over there: Peer.lib.PD(ctx) is traffic.LIB.PD run
in the child. So traffic.py's code runs unchanged on either side."""
import os
import pickle
import shlex
import subprocess
import sys
from types import SimpleNamespace

from pyverbs.pyverbs_error import PyverbsRDMAError

PLAIN = (int, float, str, bytes, bool, type(None))
WC_FIELDS = ("wr_id", "status", "opcode", "byte_len", "wc_flags", "imm_data", "qp_num",
             "src_qp", "vendor_err")


class Handle:
    """An object of the child's table, as the messages name it."""
    __slots__ = ("id",)

    def __init__(self, i):
        self.id = i

    def __getstate__(self):
        return self.id

    def __setstate__(self, i):
        self.id = i


class Ref:
    """run.py's proxy for one object in the child."""

    def __init__(self, peer, i):
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_id", i)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        v = self._peer.ask("get", self._id, name)
        if isinstance(v, _Callable):
            return lambda *a, **k: self._peer.ask("call", self._id, name, a, k)
        return v

    def __setattr__(self, name, value):
        self._peer.ask("set", self._id, name, value)


class _Callable:
    """The child's answer for an attribute that is a method."""


class _Factory:
    def __init__(self, peer):
        self._peer = peer

    def __getattr__(self, name):
        return lambda *a, **k: self._peer.ask("new", None, name, a, k)


class Peer:
    """The child process under COMMAND (a droce-run prefix, one string)."""

    def __init__(self, command):
        argv = shlex.split(command) + [sys.executable, os.path.abspath(__file__)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.refs = {}
        self.lib = _Factory(self)

    def _out(self, v):
        if isinstance(v, Ref):
            return Handle(v._id)
        if isinstance(v, (tuple, list)):
            return type(v)(self._out(x) for x in v)
        if isinstance(v, dict):
            return {k: self._out(x) for k, x in v.items()}
        if isinstance(v, int) and not isinstance(v, bool):
            return int(v)            # pyverbs' enums do not pickle
        return v

    def _in(self, v):
        if isinstance(v, Handle):
            if v.id not in self.refs:
                self.refs[v.id] = Ref(self, v.id)
            return self.refs[v.id]
        if isinstance(v, (tuple, list)):
            return type(v)(self._in(x) for x in v)
        return v

    def ask(self, op, i, name, args=(), kwargs=None):
        msg = (op, i, name, self._out(args), self._out(kwargs or {}))
        pickle.dump(msg, self.proc.stdin)
        self.proc.stdin.flush()
        try:
            kind, v = pickle.load(self.proc.stdout)
        except EOFError:
            raise RuntimeError(f"the peer process died (exit {self.proc.wait()})") from None
        if kind == "rdma":
            raise PyverbsRDMAError(v[0], v[1])
        if kind == "error":
            raise RuntimeError(f"in the peer: {v}")
        return self._in(v)

    def close(self):
        """Ends the child; its exit status (0 unless it failed)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        return self.proc.wait(timeout=60)


def serve():
    """The child: answer messages until stdin closes."""
    import traffic
    src, dst = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr          # nothing else may write to the channel
    objs, ids = {}, {}

    def keep(o):
        if id(o) not in ids:
            ids[id(o)] = len(objs) + 1
            objs[ids[id(o)]] = o       # held until exit: ids never reused
        return Handle(ids[id(o)])

    def out(v):
        if isinstance(v, int) and not isinstance(v, bool):
            return int(v)
        if isinstance(v, PLAIN):
            return v
        if isinstance(v, (tuple, list)):
            return type(v)(out(x) for x in v)
        if type(v).__name__ == "WC":
            return SimpleNamespace(**{f: getattr(v, f) for f in WC_FIELDS})
        return keep(v)

    def arg(v):
        if isinstance(v, Handle):
            return objs[v.id]
        if isinstance(v, (tuple, list)):
            return type(v)(arg(x) for x in v)
        if isinstance(v, dict):
            return {k: arg(x) for k, x in v.items()}
        return v

    while True:
        try:
            op, i, name, a, k = pickle.load(src)
        except EOFError:
            return 0
        try:
            if op == "new":
                v = out(getattr(traffic.LIB, name)(*arg(a), **arg(k)))
            elif op == "get":
                v = getattr(objs[i], name)
                v = _Callable() if callable(v) else out(v)
            elif op == "set":
                setattr(objs[i], name, arg(a))
                v = None
            else:
                v = out(getattr(objs[i], name)(*arg(a), **arg(k)))
            ans = ("ok", v)
        except PyverbsRDMAError as x:
            ans = ("rdma", (str(x), x.error_code))
        except Exception as x:  # noqa: BLE001: reported on run.py's side
            ans = ("error", f"{type(x).__name__}: {x}")
        pickle.dump(ans, dst)
        dst.flush()


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import peer  # noqa: E402: the classes pickled by their module's name
    sys.exit(peer.serve())
