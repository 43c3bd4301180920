#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seed corpus for fuzz_cm_mad: the CM MADs of the golden captures.

    make_cm_corpus.py OUTDIR [PCAP...]

Finds every MAD sent to QP1 (RoCEv2, UD SEND_ONLY, destination QP 1) in
tests/golden/*.pcap and any further PCAPs given, and writes, named by SHA-1
as libFuzzer names its inputs: each MAD behind each of the four scenario
bytes fuzz_cm_mad.c knows, and all of them in capture order behind each.
Debian's python3, standard library only.
"""

import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus  # noqa: E402  (pcap_frames, GOLDEN)

ROCE_PORT = 4791
UD_SEND_ONLY = 0x64
BTH_BYTES = 12
DETH_BYTES = 8
ICRC_BYTES = 4
MAD_BYTES = 256
SCENARIOS = 4


def udp_payload(frame):
    """The UDP payload of an IPv4 or IPv6 frame to port 4791, or None."""
    off = 14
    etype = struct.unpack(">H", frame[12:14])[0]
    if etype == 0x8100:
        etype = struct.unpack(">H", frame[16:18])[0]
        off += 4
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0x0F) * 4
        proto = frame[off + 9]
        off += ihl
    elif etype == 0x86DD and len(frame) >= off + 40:
        proto = frame[off + 6]
        off += 40
    else:
        return None
    if proto != 17 or len(frame) < off + 8:
        return None
    dport, ulen = struct.unpack(">HH", frame[off + 2:off + 6])
    if dport != ROCE_PORT:
        return None
    return frame[off + 8:off + ulen]


def cm_mads(frame):
    """The MAD of a QP1 datagram, or None."""
    p = udp_payload(frame)
    if p is None or len(p) < BTH_BYTES + DETH_BYTES + MAD_BYTES + ICRC_BYTES:
        return None
    dqp = struct.unpack(">I", p[4:8])[0] & 0xFFFFFF
    if p[0] != UD_SEND_ONLY or dqp != 1:
        return None
    mad = p[BTH_BYTES + DETH_BYTES:BTH_BYTES + DETH_BYTES + MAD_BYTES]
    return mad if len(mad) == MAD_BYTES else None


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 1
    outdir = argv[1]
    pcaps = sorted(os.path.join(make_corpus.GOLDEN, f)
                   for f in os.listdir(make_corpus.GOLDEN) if f.endswith(".pcap"))
    pcaps += argv[2:]
    mads = []
    for path in pcaps:
        for frame in make_corpus.pcap_frames(path):
            mad = cm_mads(frame)
            if mad is not None:
                mads.append(mad)
    if not mads:
        sys.stderr.write("make_cm_corpus: no CM MADs in %s\n" % ", ".join(pcaps))
        return 1
    seeds = []
    for s in range(SCENARIOS):
        seeds += [bytes([s]) + m for m in mads]
        seeds.append(bytes([s]) + b"".join(mads))
    os.makedirs(outdir, exist_ok=True)
    new = 0
    for seed in seeds:
        path = os.path.join(outdir, hashlib.sha1(seed).hexdigest())
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(seed)
            new += 1
    print("make_cm_corpus: %d CM MADs from %d captures, %d new seeds in %s" %
          (len(mads), len(pcaps), new, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
