#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""tshark agreement test for lib/wire.

    tshark_agree.py GEN_FRAMES [WORKDIR]

Runs GEN_FRAMES (tests/tshark/gen_frames.c), which writes one frame of every
opcode lib/wire knows plus IPv6 and 802.1Q variants, and a manifest of what
each frame holds. Then has tshark dissect the capture (PDML for the fields
and expert info, PSML for the protocol column) and checks every frame:

  - decoded as RoCEv2: udp:infiniband on port 4791, protocol column "RRoCE";
  - BTH opcode, destination QP and PSN as in the manifest, and the other
    BTH and extension-header fields the manifest lists (where tshark's
    dissector knows the opcode; see TSHARK_UNKNOWN_OPCODES);
  - the payload tshark shows is payload + pad, and its ICRC field sits on
    the frame's last four bytes;
  - IPv4 header checksum good (checked with ip.check_checksum on), DF set,
    TTL / hop limit 64, UDP checksum 0;
  - no "malformed" and no expert info of severity warning or error, except
    tshark's "Illegal checksum value (0)" on the UDP checksum of IPv6 frames
    (RFC 8200 forbids a zero UDP checksum over IPv6; RoCEv2 senders send 0
    anyway, and tshark says so) - that one only, and only on IPv6 frames.

tshark does not verify the RoCEv2 ICRC (4.0 has no status field for it), so
the ICRC is also recomputed here with zlib, independently of lib/wire's
ISA-L code (IBA annex A17.3.3). If a tshark ever grows an ICRC status field,
it is asserted to be "good".

The payload is opaque test bytes, so tshark's heuristic payload dissectors
(RPC-over-RDMA, SMB Direct, iSER, ...) are switched off: left on, the
RPC-over-RDMA heuristic throws an exception on a 6-byte SEND Last payload
and marks a correct frame malformed. Personal Wireshark preferences are
kept out with an empty WIRESHARK_CONFIG_DIR.

Exit 0 on pass, 1 on any failure (one line per problem, naming the frame),
77 (skipped) if tshark is missing.
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

ROCEV2_PORT = 4791

# Expert severities (epan/proto.h PI_*).
PI_SEVERITY_MASK = 0x00F00000
PI_WARN = 0x00600000
PI_GROUP_MASK = 0xFF000000
PI_MALFORMED = 0x07000000

# The one expert item allowed, and only on IPv6 frames.
IPV6_ZERO_CSUM_MSG = "Illegal checksum value (0)"

# Opcodes tshark 4.0's InfiniBand dissector does not know ("Unknown (28)"):
# it decodes their BTH, then shows the rest as vendor data. Only the BTH is
# compared for them. A newer tshark that knows them gets the full check.
TSHARK_UNKNOWN_OPCODES = {
    0x1C,  # RC FLUSH (IBA 1.5)
    0x1D,  # RC ATOMIC WRITE (IBA 1.5)
    0x81,  # CNP (RoCEv2 annex A17.9)
}

# manifest key -> (enclosing tshark element, tshark field). The enclosing
# element matters: AtomicETH reuses the RETH field names.
FIELDS = {
    "bth.se": ("infiniband.bth", "infiniband.bth.se"),
    "bth.mig": ("infiniband.bth", "infiniband.bth.m"),
    "bth.tver": ("infiniband.bth", "infiniband.bth.tver"),
    "bth.pkey": ("infiniband.bth", "infiniband.bth.p_key"),
    "bth.ackreq": ("infiniband.bth", "infiniband.bth.a"),
    "deth.qkey": ("infiniband.deth", "infiniband.deth.q_key"),
    "deth.sqpn": ("infiniband.deth", "infiniband.deth.srcqp"),
    "reth.va": ("infiniband.reth", "infiniband.reth.va"),
    "reth.rkey": ("infiniband.reth", "infiniband.reth.r_key"),
    "reth.len": ("infiniband.reth", "infiniband.reth.dmalen"),
    "atmeth.va": ("infiniband.atomiceth", "infiniband.reth.va"),
    "atmeth.rkey": ("infiniband.atomiceth", "infiniband.reth.r_key"),
    "atmeth.swap_add": ("infiniband.atomiceth", "infiniband.atomiceth.swapdt"),
    "atmeth.cmp": ("infiniband.atomiceth", "infiniband.atomiceth.cmpdt"),
    "aeth.syndrome": ("infiniband.aeth", "infiniband.aeth.syndrome"),
    "aeth.msn": ("infiniband.aeth", "infiniband.aeth.msn"),
    "atmack.orig": ("infiniband.atomicacketh", "infiniband.atomicacketh.origremdt"),
    "immdt.imm": ("infiniband", "infiniband.immdt"),
    "ieth.rkey": ("infiniband.ieth", "infiniband.ieth"),
    # FETH: tshark 4.0 does not know FLUSH, so it has no field to compare.
    "feth.sel": None,
    "feth.plt": None,
}


class Frame:
    """One manifest line."""

    def __init__(self, line):
        tok = line.split()
        self.num = int(tok[0])
        self.opcode = int(tok[1], 16)
        self.qpn = int(tok[2], 16)
        self.psn = int(tok[3], 16)
        self.family = tok[4]
        self.vlan = tok[5] == "vlan"
        self.payload_len = int(tok[6])
        self.padcnt = int(tok[7])
        self.name = tok[8]
        self.fields = {}
        for kv in tok[9:]:
            k, v = kv.split("=", 1)
            self.fields[k] = int(v, 16)


def read_manifest(path):
    with open(path) as f:
        return [Frame(l) for l in f if l.strip() and not l.startswith("#")]


def read_pcap(path):
    """Frames of a classic pcap file, as bytes (the generator's own output)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        raise ValueError("%s: not a pcap file" % path)
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def icrc_check(frame):
    """(received ICRC, recomputed ICRC, offset of the ICRC) per IBA A17.3.3."""
    l3 = 14
    etype = struct.unpack(">H", frame[12:14])[0]
    if etype == 0x8100:
        l3 = 18
        etype = struct.unpack(">H", frame[16:18])[0]
    b = bytearray(frame)
    if etype == 0x0800:
        end = l3 + struct.unpack(">H", frame[l3 + 2:l3 + 4])[0]
        for i in (1, 8, 10, 11):  # TOS, TTL, header checksum
            b[l3 + i] = 0xFF
        udp = l3 + 20
    else:
        end = l3 + 40 + struct.unpack(">H", frame[l3 + 4:l3 + 6])[0]
        b[l3] |= 0x0F  # traffic class, flow label, hop limit
        for i in (1, 2, 3, 7):
            b[l3 + i] = 0xFF
        udp = l3 + 40
    b[udp + 6] = b[udp + 7] = 0xFF  # UDP checksum
    b[udp + 8 + 4] = 0xFF  # BTH FECN, BECN, resv6
    # 8 bytes of 0xff stand for the masked LRH, which RoCEv2 does not carry
    calc = zlib.crc32(b"\xff" * 8 + bytes(b[l3:end - 4]))
    return int.from_bytes(frame[end - 4:end], "little"), calc, end - 4


def tshark_env(confdir):
    env = dict(os.environ)
    env["WIRESHARK_CONFIG_DIR"] = confdir
    env.pop("WIRESHARK_RUN_FROM_BUILD_DIRECTORY", None)
    return env


def tshark_version(tshark, env):
    out = subprocess.run([tshark, "--version"], env=env, capture_output=True,
                         text=True).stdout
    return out.splitlines()[0] if out else "tshark (unknown version)"


def heuristic_off_args(tshark, env):
    """--disable-protocol for each heuristic payload dissector of InfiniBand."""
    out = subprocess.run([tshark, "-G", "heuristic-decodes"], env=env,
                         capture_output=True, text=True, check=True).stdout
    args = []
    for line in out.splitlines():
        cols = line.split("\t")
        # "ethertype" is Ethernet's own dissector; it must stay on
        if len(cols) >= 2 and cols[0] == "infiniband.payload" and cols[1] != "ethertype":
            args += ["--disable-protocol", cols[1]]
    return args


def run_tshark(tshark, env, pcap, fmt, extra):
    cmd = [tshark, "-n", "-r", pcap, "-T", fmt, "-o", "ip.check_checksum:TRUE"] + extra
    res = subprocess.run(cmd, env=env, capture_output=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr.decode(errors="replace"))
        raise RuntimeError("%s failed (exit %d)" % (" ".join(cmd), res.returncode))
    return res.stdout


def int_of(field):
    """Integer value of a PDML field: 'value' is the value in hex for integer
    and boolean fields (bitfields already masked and shifted) and the raw
    bytes in hex for byte fields."""
    v = field.get("value")
    if v is None or v == "":
        return None
    return int(v, 16)


def find(elem, name):
    """First descendant (or self) named @name, or None."""
    for e in elem.iter():
        if e.get("name") == name:
            return e
    return None


def find_in(elem, parent, name):
    """First @name field under the first @parent element of @elem."""
    p = find(elem, parent)
    if p is None:
        return None
    for e in p.iter():
        if e is not p and e.get("name") == name:
            return e
    # infiniband.ieth is both the header and its only field
    return p if p.get("name") == name else None


def expert_items(packet):
    """(severity, group, message, path) of every expert item in a packet.
    path is the names of the elements enclosing the item, outermost first."""
    items = []

    def walk(e, path):
        if e.get("name") == "_ws.expert":
            sev = grp = 0
            msg = e.get("showname", "")
            for c in e.iter():
                n = c.get("name")
                if n == "_ws.expert.severity":
                    sev = int(c.get("show", "0"))
                elif n == "_ws.expert.group":
                    grp = int(c.get("show", "0"))
                elif n == "_ws.expert.message":
                    msg = c.get("show", msg)
            items.append((sev, grp, msg, path))
            return
        for c in e:
            walk(c, path + [e.get("name", e.tag)])

    walk(packet, [])
    return items


def check_frame(m, pkt, col_proto, raw, stats):
    """All problems with one frame, as strings."""
    errs = []
    name = "%s(0x%02x)" % (m.name, m.opcode)

    def err(fmt, *a):
        errs.append(fmt % a)

    # decoded as RoCEv2
    protos = find(pkt, "frame.protocols")
    stack = protos.get("show", "") if protos is not None else ""
    if ":udp:infiniband" not in stack:
        err("not decoded as UDP/InfiniBand (protocols %s)", stack or "?")
    if col_proto != "RRoCE":
        err("protocol column %r, want 'RRoCE'", col_proto)
    dport = find(pkt, "udp.dstport")
    if dport is None or int(dport.get("show")) != ROCEV2_PORT:
        err("UDP destination port is not %d", ROCEV2_PORT)

    # L2/L3/L4 as the generator promises
    has_vlan = find(pkt, "vlan") is not None
    if has_vlan != m.vlan:
        err("802.1Q tag %s, manifest says %s", has_vlan, m.vlan)
    is_v6 = find(pkt, "ipv6") is not None
    if is_v6 != (m.family == "ipv6"):
        err("tshark sees %s, manifest says %s", "ipv6" if is_v6 else "ipv4", m.family)
    if m.family == "ipv4":
        st = find(pkt, "ip.checksum.status")
        if st is None or st.get("show") != "1":
            err("IPv4 header checksum not good (status %s)",
                st.get("showname") if st is not None else "missing")
        df = find(pkt, "ip.flags.df")
        if df is None or df.get("show") != "1":
            err("IPv4 DF not set")
        ttl = find(pkt, "ip.ttl")
        if ttl is None or int(ttl.get("show")) != 64:
            err("IPv4 TTL is not 64")
    else:
        hlim = find(pkt, "ipv6.hlim")
        if hlim is None or int(hlim.get("show")) != 64:
            err("IPv6 hop limit is not 64")
    csum = find(pkt, "udp.checksum")
    if csum is None or int_of(csum) != 0:
        err("UDP checksum is not 0")

    # BTH: the three fields every frame is named by
    for key, fname, want in (("opcode", "infiniband.bth.opcode", m.opcode),
                             ("destination QP", "infiniband.bth.destqp", m.qpn),
                             ("PSN", "infiniband.bth.psn", m.psn),
                             ("pad count", "infiniband.bth.padcnt", m.padcnt)):
        f = find(pkt, fname)
        got = int_of(f) if f is not None else None
        if got != want:
            err("%s: tshark %s, manifest 0x%x", key,
                "missing" if got is None else "0x%x" % got, want)

    op = find(pkt, "infiniband.bth.opcode")
    unknown = op is not None and "Unknown" in op.get("showname", "")
    if unknown and m.opcode not in TSHARK_UNKNOWN_OPCODES:
        err("tshark does not know opcode 0x%02x", m.opcode)

    # the rest of the BTH and the extension headers
    if not unknown:
        for key, want in sorted(m.fields.items()):
            where = FIELDS.get(key, ())
            if where is None:
                continue  # nothing in tshark to compare with
            if not where:
                err("manifest field %s has no tshark mapping", key)
                continue
            f = find_in(pkt, *where)
            got = int_of(f) if f is not None else None
            stats["fields"] += 1
            if got != want:
                err("%s: tshark %s (%s), manifest 0x%x", key,
                    "missing" if got is None else "0x%x" % got, where[1], want)

        # payload (tshark shows it with its pad) and where the ICRC is
        dlen = find(pkt, "data.len")
        got = int(dlen.get("show")) if dlen is not None else 0
        if got != m.payload_len + m.padcnt:
            err("payload + pad: tshark %d bytes, manifest %d + %d", got,
                m.payload_len, m.padcnt)
        f = find(pkt, "infiniband.invariant.crc")
        if f is None:
            err("no ICRC field")
        elif int(f.get("pos")) != len(raw) - 4 or f.get("value") != raw[-4:].hex():
            err("tshark's ICRC at %s = %s, frame ends with %s", f.get("pos"),
                f.get("value"), raw[-4:].hex())
    st = find(pkt, "infiniband.invariant.crc.status")
    if st is not None and st.get("show") != "1":
        err("tshark's ICRC check: %s", st.get("showname"))

    # ICRC, recomputed here
    got, calc, off = icrc_check(raw)
    if off != len(raw) - 4:
        err("IP length ends the packet at byte %d, the frame has %d", off + 4, len(raw))
    elif got != calc:
        err("ICRC 0x%08x, recomputed 0x%08x", got, calc)

    # expert info and malformed packets
    for e in pkt.iter():
        n = e.get("name", "")
        if n.startswith("_ws.malformed") or n.startswith("_ws.short"):
            err("tshark: %s", e.get("showname", n))
            break
    for sev, grp, msg, path in expert_items(pkt):
        if (grp & PI_GROUP_MASK) == PI_MALFORMED:
            err("tshark: malformed: %s", msg)
            continue
        if (sev & PI_SEVERITY_MASK) < PI_WARN:
            continue
        if m.family == "ipv6" and msg == IPV6_ZERO_CSUM_MSG and "udp.checksum" in path:
            continue  # the one allowance
        err("tshark expert info: %s (in %s)", msg, "/".join(path[1:]) or "?")

    return ["frame %d %s: %s" % (m.num, name, e) for e in errs]


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 1
    tshark = shutil.which("tshark")
    if tshark is None:
        print("tshark not found: skipped")
        return 77
    gen = argv[1]

    with tempfile.TemporaryDirectory(prefix="droce-tshark-") as tmp:
        workdir = argv[2] if len(argv) == 3 else tmp
        pcap = os.path.join(workdir, "tshark_agree.pcap")
        manifest = os.path.join(workdir, "tshark_agree.manifest")
        confdir = os.path.join(tmp, "wsconf")
        os.mkdir(confdir)
        env = tshark_env(confdir)

        subprocess.run([gen, pcap, manifest], check=True)
        frames = read_manifest(manifest)
        raws = read_pcap(pcap)
        print(tshark_version(tshark, env))

        extra = heuristic_off_args(tshark, env)
        pdml = run_tshark(tshark, env, pcap, "pdml", extra)
        psml = run_tshark(tshark, env, pcap, "psml",
                          extra + ["-o", 'gui.column.format:"No.","%m","Protocol","%p"'])

    packets = ET.fromstring(pdml).findall("packet")
    cols = {}
    for p in ET.fromstring(psml).findall("packet"):
        sec = [s.text or "" for s in p.findall("section")]
        cols[int(sec[0])] = sec[1]

    fails = []
    if len(raws) != len(frames):
        fails.append("pcap has %d frames, manifest %d" % (len(raws), len(frames)))
    if len(packets) != len(frames):
        fails.append("tshark decoded %d frames, manifest has %d" % (len(packets), len(frames)))
    by_num = {}
    for p in packets:
        num = find(p, "frame.number")
        if num is not None:
            by_num[int(num.get("show"))] = p
    allowed = 0
    stats = {"fields": 0}
    for m in frames:
        p = by_num.get(m.num)
        if p is None or m.num > len(raws):
            fails.append("frame %d %s: missing from tshark's output or the pcap" % (m.num, m.name))
            continue
        fails += check_frame(m, p, cols.get(m.num), raws[m.num - 1], stats)
        if m.family == "ipv6":
            allowed += sum(1 for _, _, msg, _ in expert_items(p) if msg == IPV6_ZERO_CSUM_MSG)

    for f in fails:
        print("FAIL " + f)
    unknown = sorted({m.name for m in frames if m.opcode in TSHARK_UNKNOWN_OPCODES})
    print("%d frames (%d IPv6, %d VLAN), %d opcodes, %d header fields compared; "
          "allowed %d x '%s' on IPv6; BTH only for %s if tshark lacks them" %
          (len(frames), sum(m.family == "ipv6" for m in frames), sum(m.vlan for m in frames),
           len({m.opcode for m in frames}), stats["fields"], allowed, IPV6_ZERO_CSUM_MSG,
           ", ".join(unknown)))
    print("FAIL: %d problems" % len(fails) if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
