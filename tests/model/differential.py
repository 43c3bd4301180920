#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""The same sequence on droce and on Linux Soft-RoCE, compared call by call.

  differential.py --droce COMMAND --vm NAME --share DIR --gid N
                  --seed S [--steps M] [--shrink] [--out DIR]

run.py runs seed S on droce here (under the droce-run COMMAND) and in the
rxe VM NAME (tests/interop/rxe_vm.sh; DIR is the VM's read-write share on
this side, /run/share in the guest, which gets a copy of tests/model; N
is rxe0's RoCEv2 GID index), each recording every call and its result
(run.py --record), both leaving out verbs.NOT_COMMON, the deviations
already decided (run.py --common). The first call whose verb or result differs is a
difference: it is printed with the calls of its step and, with --shrink,
reduced (ddmin over the steps, each attempt replayed on both sides) to a
minimal sequence that still differs at the same verb with the same two
results, saved as OUT/diff-seedS.json for run.py --replay. Each side's own
disagreements with the model (run.py's divergences) are reported too.
Exit 1 on a difference or a divergence, 2 when a side could not run.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ddmin import ddmin  # noqa: E402
from run import kind  # noqa: E402

VM = os.path.join(HERE, "..", "interop", "rxe_vm.sh")
GUEST_SHARE = "/run/share"


class Sides:
    def __init__(self, o):
        self.o = o
        self.model = os.path.join(o.share, "model")
        shutil.rmtree(self.model, ignore_errors=True)   # the guest caches nothing here
        shutil.copytree(HERE, self.model, ignore=shutil.ignore_patterns("__pycache__", "cases"))
        os.makedirs(o.out, exist_ok=True)

    def droce(self, args):
        rec = os.path.join(self.o.out, "droce.json")
        cmd = shlex.split(self.o.droce) + ["/usr/bin/python3", os.path.join(HERE, "run.py"),
                                           "--record", rec] + args
        with open(os.path.join(self.o.out, "droce.log"), "w") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
        return self.result(rec, rc, "droce")

    def rxe(self, args):
        rec = os.path.join(self.o.share, "rxe.json")
        if os.path.exists(rec):
            os.remove(rec)
        gargs = " ".join(shlex.quote(a.replace(self.o.share, GUEST_SHARE)) for a in args)
        cmd = (f"cd {GUEST_SHARE}/model && DROCE_GID_INDEX={self.o.gid} /usr/bin/python3 run.py"
               f" --device rxe0 --record {GUEST_SHARE}/rxe.json {gargs}"
               f" >{GUEST_SHARE}/rxe.log 2>&1")
        rc = subprocess.run([VM, "exec", "-t", "600", self.o.vm, cmd],
                            stdout=subprocess.DEVNULL).returncode
        shutil.copy(os.path.join(self.o.share, "rxe.log"), os.path.join(self.o.out, "rxe.log"))
        return self.result(rec, rc, "rxe")

    @staticmethod
    def result(rec, rc, who):
        try:
            with open(rec) as f:
                return json.load(f), rc
        except (OSError, ValueError):
            print(f"differential: the {who} run left no record (exit {rc})")
            return None, rc

    def both(self, args):
        args = args + ["--common"]      # without verbs.NOT_COMMON
        return self.droce(args), self.rxe(args)


def first_difference(a, b):
    """The index of the first call whose verb or result differs between the
    records A and B, or None. The call's text may differ in values the
    device decides (a limit plus one), not in its verb."""
    for i, (x, y) in enumerate(zip(a["calls"], b["calls"])):
        if kind(x[1]) != kind(y[1]) or x[2] != y[2]:
            return i
    if len(a["calls"]) != len(b["calls"]):
        return min(len(a["calls"]), len(b["calls"]))
    return None


def signature(a, b, i):
    """What a difference is, for shrinking: the verb and both results."""
    x = a["calls"][i] if i < len(a["calls"]) else [0, "(no more calls)", ""]
    y = b["calls"][i] if i < len(b["calls"]) else [0, "(no more calls)", ""]
    return kind(x[1]), x[2], kind(y[1]), y[2]


def show(a, b, i):
    step = (a["calls"][i] if i < len(a["calls"]) else b["calls"][i])[0]
    for c in range(len(a["calls"])):
        if a["calls"][c][0] == step or c == i:
            x = a["calls"][c]
            y = b["calls"][c] if c < len(b["calls"]) else [0, "-", "-"]
            mark = ">>" if c == i else "  "
            print(f"  {mark} {c + 1:5} {x[1]}\n           droce: {x[2]}   rxe: {y[2]}")
            if c == i:
                break


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--droce", required=True, help="droce-run command prefix")
    ap.add_argument("--vm", required=True)
    ap.add_argument("--share", required=True)
    ap.add_argument("--gid", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--shrink", action="store_true")
    ap.add_argument("--out", default=".")
    o = ap.parse_args()
    sides = Sides(o)
    (a, rca), (b, rcb) = sides.both(["--seed", str(o.seed), "--steps", str(o.steps)])
    if a is None or b is None:
        return 2
    n = first_difference(a, b)
    print(f"seed {o.seed}: droce {len(a['calls'])} calls (exit {rca}), rxe {len(b['calls'])}"
          f" calls (exit {rcb}), {'no difference' if n is None else f'differs at call {n + 1}'}")
    for who, rc in (("droce", rca), ("rxe", rcb)):
        if rc:
            print(f"  {who} disagrees with the model: see {o.out}/{who}.log")
    if n is None:
        return 1 if rca or rcb else 0
    sig = signature(a, b, n)
    print(f"DIFFERENCE |{sig[0]}| droce {sig[1]}, rxe {sig[3]}"
          + (f" (rxe's call: {sig[2]})" if sig[2] != sig[0] else ""))
    show(a, b, n)
    if o.shrink:
        case = os.path.join(o.share, "case.json")

        def differs(steps):
            with open(case, "w") as f:
                json.dump({"seed": o.seed, "invalid": a["invalid"], "steps": steps}, f)
            (x, _), (y, _) = sides.both(["--replay", case])
            m = x and y and first_difference(x, y)
            return m is not None and m is not False and signature(x, y, m) == sig
        upto = a["calls"][n][0] + 1 if n < len(a["calls"]) else len(a["steps"])
        steps, tries, again = ddmin([tuple(s) for s in a["steps"][:upto]], differs)
        save = os.path.join(o.out, f"diff-seed{o.seed}.json")
        with open(save, "w") as f:
            json.dump({"seed": o.seed, "invalid": a["invalid"],
                       "difference": list(sig), "steps": steps}, f)
            f.write("\n")
        print(f"  {'shrunk to' if again else 'not reproduced on replay; kept'} {len(steps)}"
              f" steps ({tries} replays): {save}")
        if again:
            differs(steps)
            x, y = sides.result(os.path.join(o.out, "droce.json"), 0, "droce")[0], \
                sides.result(os.path.join(o.share, "rxe.json"), 0, "rxe")[0]
            m = first_difference(x, y)
            for c in range(min(m + 1, len(x["calls"]))):
                y_ = y["calls"][c] if c < len(y["calls"]) else [0, "-", "-"]
                print(f"     {c + 1:4} {x['calls'][c][1]}: droce {x['calls'][c][2]},"
                      f" rxe {y_[2]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
