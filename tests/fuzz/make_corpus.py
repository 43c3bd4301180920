#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seed corpus for the lib/wire fuzzers: one file per captured frame.

    make_corpus.py OUTDIR [PCAP...]

Reads tests/golden/*.pcap and any further PCAPs given,
and writes every frame's captured bytes to OUTDIR, named by their SHA-1 as
libFuzzer names its own inputs, so duplicates collapse and re-running adds
nothing new. Classic pcap only (either byte order, us or ns timestamps),
Ethernet link type. Debian's python3, standard library only.
"""

import glob
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "golden")
LINKTYPE_ETHERNET = 1


def pcap_frames(path):
    """Captured bytes of every frame of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("%s: too short for a pcap header" % path)
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        raise ValueError("%s: not a classic pcap file (pcapng?)" % path)
    linktype = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
    if linktype != LINKTYPE_ETHERNET:
        raise ValueError("%s: link type %d, not Ethernet" % (path, linktype))
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        if len(frame) != incl:
            raise ValueError("%s: last frame cut short" % path)
        yield frame
        off += 16 + incl


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 1
    outdir = argv[1]
    pcaps = sorted(glob.glob(os.path.join(GOLDEN, "*.pcap")))
    pcaps += argv[2:]
    if not pcaps:
        sys.stderr.write("make_corpus: no captures in %s\n" % GOLDEN)
        return 1

    os.makedirs(outdir, exist_ok=True)
    frames = new = 0
    for p in pcaps:
        for frame in pcap_frames(p):
            frames += 1
            path = os.path.join(outdir, hashlib.sha1(frame).hexdigest())
            if os.path.exists(path):
                continue
            with open(path, "wb") as f:
                f.write(frame)
            new += 1
    print("make_corpus: %d frames from %d captures, %d new seeds in %s" %
          (frames, len(pcaps), new, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
