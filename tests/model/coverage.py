#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Every verb doc/verbs.md says droce offers ("yes" in its table) has a
description in tests/model/verbs.py (VERBS), or is named in
verbs.UNDESCRIBED with the reason. Prints what is missing; exit 1 then.
  coverage.py [--list]"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verbs as M  # noqa: E402

NAME = re.compile(r"\b_{0,3}(?:ibv|rdma)_[a-z0-9_]+\b(?!\.h)|\b(?:mult|mbps)_to_ibv_rate\b")


def offered():
    """The verb names of doc/verbs.md's rows whose second column is yes."""
    names = []
    with open(os.path.join(HERE, "..", "..", "doc", "verbs.md")) as f:
        for line in f:
            cols = [c.strip() for c in line.split("|")]
            if len(cols) > 3 and cols[2].startswith("yes"):
                for n in NAME.findall(cols[1]):
                    if n not in names:
                        names.append(n)
    return names


def main():
    names = offered()
    if "--list" in sys.argv:
        print("\n".join(names))
        return 0
    missing = [n for n in names if n not in M.VERBS and n not in M.UNDESCRIBED]
    print(f"{len(names)} verbs offered, {sum(n in M.VERBS for n in names)} described,"
          f" {sum(n in M.UNDESCRIBED for n in names)} left out with a reason,"
          f" {len(missing)} missing")
    for n in missing:
        print(f"  missing: {n}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
