#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Writes foreign_mix.pcap: frames that share a wire with RoCEv2 but are not
RoCEv2 (ARP, IGMP, ICMPv6 neighbour solicitation, TCP, DNS over UDP, a VLAN-
tagged ARP), around one RoCEv2 frame taken from rc_write_only.pcap.
droce-pcap verify must count them apart, not as bad. Run once; the output is
committed so tests need no scapy."""
import os
from scapy.all import (ARP, DNS, DNSQR, Dot1Q, Ether, ICMPv6ND_NS, IP, IPv6,
                       TCP, UDP, rdpcap, wrpcap)
from scapy.contrib.igmp import IGMP

here = os.path.dirname(os.path.abspath(__file__))
roce = rdpcap(os.path.join(here, "rc_write_only.pcap"))[0]
mac_a, mac_b = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
frames = [
    Ether(src=mac_a, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.77.0.1", pdst="10.77.0.2"),
    Ether(src=mac_a, dst="01:00:5e:00:00:16") / IP(src="10.77.0.1", dst="224.0.0.22", ttl=1)
    / IGMP(type=0x16, gaddr="239.1.2.3"),
    Ether(src=mac_a, dst="33:33:ff:00:00:02") / IPv6(src="fe80::1", dst="ff02::1:ff00:2")
    / ICMPv6ND_NS(tgt="fe80::2"),
    roce,
    Ether(src=mac_a, dst=mac_b) / IP(src="10.77.0.1", dst="10.77.0.2") / TCP(sport=40000, dport=18515),
    Ether(src=mac_a, dst=mac_b) / IP(src="10.77.0.1", dst="10.77.0.2") / UDP(sport=5353, dport=53)
    / DNS(qd=DNSQR(qname="droce.example")),
    Ether(src=mac_a, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=7) / ARP(psrc="10.77.0.1", pdst="10.77.0.2"),
]
wrpcap(os.path.join(here, "foreign_mix.pcap"), frames)
