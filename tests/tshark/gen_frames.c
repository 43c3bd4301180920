/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * gen_frames: write one RoCEv2 frame of every opcode in droce_opcode_desc,
 * built with lib/wire, so that tshark_agree.py can hold them against
 * Wireshark's InfiniBand dissector.
 *
 *   gen_frames OUT.pcap OUT.manifest
 *
 * Every valid opcode gets an IPv4 frame; a few also get an IPv6, an 802.1Q
 * and an 802.1Q + IPv6 variant. Each frame has its own destination QP and
 * PSN; payload-carrying opcodes get lengths that cycle the pad count through
 * 0..3 (ATOMIC_WRITE carries exactly 8 bytes). UDP checksum 0, IPv4 DF set,
 * TTL 64, ICRC from droce_icrc_set(). Each frame is parsed back with
 * droce_pkt_parse() before it is written, so a frame our own codec rejects
 * never reaches tshark.
 *
 * The manifest has one line per frame:
 *   frame opcode qpn psn family vlan payload_len padcnt name [field=value ...]
 * frame counts from 1 as tshark does; opcode, qpn and psn are hex. The
 * field=value pairs (hex) are the other BTH fields and those of each
 * extension header the opcode carries, named hdr.field after struct droce_pkt.
 * Single-threaded; exits 0 on success, 1 on any error.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire.h"
#include "droce_wire_gid.h"
#include "droce_wire_psn.h"

#define FRAME_MAX_BYTES 2048
#define PAYLOAD_MAX_BYTES 64

enum variant {
	VAR_IPV4 = 0,
	VAR_IPV6 = DROCE_PKT_F_IPV6,
	VAR_VLAN = DROCE_PKT_F_VLAN,
	VAR_VLAN_IPV6 = DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6,
};

/* Frames beyond the IPv4 one per opcode: a few opcodes again over IPv6, 802.1Q or both. */
static const struct {
	uint8_t opcode;
	uint32_t flags;
} extra_frames[] = {
	{ DROCE_OP_RC_SEND_ONLY,          VAR_IPV6 },
	{ DROCE_OP_RC_WRITE_ONLY_IMM,     VAR_IPV6 },
	{ DROCE_OP_RC_READ_REQUEST,       VAR_IPV6 },
	{ DROCE_OP_RC_ACKNOWLEDGE,        VAR_IPV6 },
	{ DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, VAR_IPV6 },
	{ DROCE_OP_UD_SEND_ONLY_IMM,      VAR_IPV6 },
	{ DROCE_OP_CNP,                   VAR_IPV6 },
	{ DROCE_OP_RC_SEND_FIRST,         VAR_VLAN },
	{ DROCE_OP_RC_READ_RESPONSE_ONLY, VAR_VLAN },
	{ DROCE_OP_RC_COMPARE_SWAP,       VAR_VLAN },
	{ DROCE_OP_UC_SEND_LAST_IMM,      VAR_VLAN },
	{ DROCE_OP_UD_SEND_ONLY,          VAR_VLAN },
	{ DROCE_OP_RC_SEND_LAST_INV,      VAR_VLAN_IPV6 },
	{ DROCE_OP_UD_SEND_ONLY,          VAR_VLAN_IPV6 },
};

struct gen {
	pcap_dumper_t *dumper;
	FILE *manifest;
	unsigned int nframes;
	unsigned int npayload;		/* payload-carrying frames so far: drives the pad count */
};

/* Distinct, never 0 or 1 (QP1 is the GSI QP: tshark would decode a MAD). */
static uint32_t
frame_qpn(unsigned int n)
{
	return (0x000012u + n * 0x010203u) & DROCE_24BIT_MASK;
}

/* Distinct; frame 0 sits just below the 24-bit wrap. */
static uint32_t
frame_psn(unsigned int n)
{
	return droce_psn_add(0xfffff0u, n * 0x00a5a7u);
}

/* 10.77.0.x, or fd00:77::x for IPv6 frames. */
static void
set_gid(uint8_t gid[DROCE_GID_BYTES], bool ipv6, uint8_t host)
{
	if (ipv6) {
		static const uint8_t prefix[DROCE_GID_BYTES] = { 0xfd, 0x00, 0x00, 0x77 };

		memcpy(gid, prefix, DROCE_GID_BYTES);
		gid[15] = host;
	} else {
		droce_gid_from_ipv4(gid, htonl(0x0a4d0000u | host));
	}
}

/* Payload length for the next payload-carrying frame: pad counts cycle 0, 3, 2, 1. */
static uint32_t
payload_len(struct gen *g, const struct droce_opcode_desc *d)
{
	static const uint32_t lens[] = { 16, 1, 6, 31, 64, 13, 2, 7, 40, 21, 50, 3 };

	if (d->flags & DROCE_OPF_ATOMIC_WR)
		return 8;			/* exactly one 64-bit value */
	if (!(d->flags & DROCE_OPF_PAYLOAD))
		return 0;
	return lens[g->npayload++ % DROCE_DIM(lens)];
}

static void
fill_pkt(struct droce_pkt *pkt, uint8_t opcode, uint32_t flags, unsigned int n, uint32_t plen)
{
	static const uint8_t dmac[6] = { 0x02, 0x00, 0x0a, 0x4d, 0x00, 0x01 };
	static const uint8_t smac[6] = { 0x02, 0x00, 0x0a, 0x4d, 0x00, 0x02 };
	const struct droce_opcode_desc *d = droce_opcode(opcode);
	bool ipv6 = flags & DROCE_PKT_F_IPV6;

	memset(pkt, 0, sizeof(*pkt));
	pkt->flags = flags;
	memcpy(pkt->dmac, dmac, 6);
	memcpy(pkt->smac, smac, 6);
	if (flags & DROCE_PKT_F_VLAN)
		pkt->vlan_tci = (uint16_t)(3u << 13 | (100 + n));	/* PCP 3, VID 100+n */
	set_gid(pkt->sgid, ipv6, 2);
	set_gid(pkt->dgid, ipv6, 1);
	pkt->ttl = 64;
	if (ipv6) {
		pkt->flow_label = droce_flow_label(frame_qpn(n), 0x11);
	} else {
		pkt->ip_id = (uint16_t)(0x1000 + n);
		pkt->ip_frag = 0x4000;		/* DF */
	}
	pkt->sport = droce_flow_label_to_sport(droce_flow_label(frame_qpn(n), 0x11));
	pkt->dport = DROCE_ROCEV2_UDP_PORT;
	pkt->udp_csum = 0;

	pkt->opcode = opcode;
	pkt->se = (d->flags & DROCE_OPF_RECV_COMP) && (n & 1);
	pkt->mig = true;
	pkt->payload_len = plen;
	pkt->padcnt = droce_pad_bytes(plen);
	pkt->pkey = DROCE_DEFAULT_PKEY;
	pkt->dqpn = frame_qpn(n);
	pkt->ackreq = (d->flags & DROCE_OPF_REQ) && (d->flags & DROCE_OPF_END);
	pkt->psn = frame_psn(n);

	pkt->deth.qkey = 0x11111111;
	pkt->deth.sqpn = 0x000011 + n;
	pkt->feth.sel = 1;
	pkt->feth.plt = 1;
	pkt->reth.va = 0x00007f0012340000ull + n * 0x1000;
	pkt->reth.rkey = 0x00abcd00u + n;
	pkt->reth.len = (d->flags & DROCE_OPF_READ) ? 4096 : plen;
	pkt->atmeth.va = 0x00007f0056780000ull + n * 8;
	pkt->atmeth.rkey = 0x00beef00u + n;
	pkt->atmeth.swap_add = 0x0102030405060708ull;
	pkt->atmeth.cmp = 0x1112131415161718ull;
	pkt->aeth.syndrome = droce_aeth_syn_ack((uint8_t)(n & DROCE_AETH_VALUE_MASK));
	pkt->aeth.msn = 0x000100 + n;
	pkt->atmack_orig = 0x2122232425262728ull;
	pkt->imm = htonl(0xc0de0000u + n);
	pkt->ieth_rkey = 0x00dead00u + n;
}

/* One manifest line: what tshark_agree.py expects tshark to decode. */
static void
manifest_line(FILE *m, unsigned int frame, const struct droce_pkt *pkt,
	      const struct droce_opcode_desc *d)
{
	fprintf(m, "%u 0x%02x 0x%06x 0x%06x %s %s %u %u %s", frame, pkt->opcode,
		pkt->dqpn, pkt->psn, (pkt->flags & DROCE_PKT_F_IPV6) ? "ipv6" : "ipv4",
		(pkt->flags & DROCE_PKT_F_VLAN) ? "vlan" : "novlan",
		pkt->payload_len, pkt->padcnt, d->name);
	fprintf(m, " bth.se=%x bth.mig=%x bth.tver=%x bth.pkey=0x%04x bth.ackreq=%x",
		pkt->se, pkt->mig, pkt->tver, pkt->pkey, pkt->ackreq);
	if (d->xhdrs & DROCE_XH(DETH))
		fprintf(m, " deth.qkey=0x%08x deth.sqpn=0x%06x", pkt->deth.qkey, pkt->deth.sqpn);
	if (d->xhdrs & DROCE_XH(FETH))
		fprintf(m, " feth.sel=%x feth.plt=%x", pkt->feth.sel, pkt->feth.plt);
	if (d->xhdrs & DROCE_XH(RETH))
		fprintf(m, " reth.va=0x%016" PRIx64 " reth.rkey=0x%08x reth.len=0x%x",
			pkt->reth.va, pkt->reth.rkey, pkt->reth.len);
	if (d->xhdrs & DROCE_XH(ATMETH))
		fprintf(m, " atmeth.va=0x%016" PRIx64 " atmeth.rkey=0x%08x"
			" atmeth.swap_add=0x%016" PRIx64 " atmeth.cmp=0x%016" PRIx64,
			pkt->atmeth.va, pkt->atmeth.rkey, pkt->atmeth.swap_add, pkt->atmeth.cmp);
	if (d->xhdrs & DROCE_XH(AETH))
		fprintf(m, " aeth.syndrome=0x%02x aeth.msn=0x%06x",
			pkt->aeth.syndrome, pkt->aeth.msn);
	if (d->xhdrs & DROCE_XH(ATMACK))
		fprintf(m, " atmack.orig=0x%016" PRIx64, pkt->atmack_orig);
	if (d->xhdrs & DROCE_XH(IMMDT))
		fprintf(m, " immdt.imm=0x%08x", ntohl(pkt->imm));
	if (d->xhdrs & DROCE_XH(IETH))
		fprintf(m, " ieth.rkey=0x%08x", pkt->ieth_rkey);
	fprintf(m, "\n");
}

static int
emit(struct gen *g, uint8_t opcode, uint32_t flags)
{
	static uint8_t frame[FRAME_MAX_BYTES];
	const struct droce_opcode_desc *d = droce_opcode(opcode);
	unsigned int n = g->nframes, i;
	struct pcap_pkthdr ph;
	struct droce_pkt pkt, back;
	enum droce_wire_drop r;
	uint32_t plen = payload_len(g, d);
	int hlen;

	fill_pkt(&pkt, opcode, flags, n, plen);
	memset(frame, 0, sizeof(frame));
	hlen = droce_pkt_build_hdrs(&pkt, frame, sizeof(frame) - PAYLOAD_MAX_BYTES - 8);
	if (hlen < 0) {
		fprintf(stderr, "gen_frames: %s: build failed (%d)\n", d->name, hlen);
		return -1;
	}
	/* a pattern no heuristic dissector mistakes for its header */
	for (i = 0; i < plen; i++)
		frame[pkt.payload_off + i] = (uint8_t)(0xa5 ^ (n + i));
	droce_icrc_set(&pkt, frame);

	r = droce_pkt_parse(&back, frame, pkt.frame_len, pkt.frame_len);
	if (r != DROCE_WIRE_OK || back.opcode != opcode || back.dqpn != pkt.dqpn ||
	    back.psn != pkt.psn || back.payload_len != plen) {
		fprintf(stderr, "gen_frames: %s: own parser rejects the frame (%s)\n",
			d->name, droce_wire_drop_name(r));
		return -1;
	}

	memset(&ph, 0, sizeof(ph));
	ph.ts.tv_sec = 1767225600 + n;	/* 2026-01-01, one frame a second */
	ph.caplen = pkt.frame_len;
	ph.len = pkt.frame_len;
	pcap_dump((u_char *)g->dumper, &ph, frame);

	g->nframes++;
	manifest_line(g->manifest, g->nframes, &pkt, d);
	return 0;
}

int
main(int argc, char **argv)
{
	struct gen g = { 0 };
	pcap_t *dead;
	unsigned int op, i;
	int ret = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.manifest\n", argv[0]);
		return 1;
	}
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	if (dead == NULL) {
		fprintf(stderr, "gen_frames: pcap_open_dead failed\n");
		return 1;
	}
	g.dumper = pcap_dump_open(dead, argv[1]);
	if (g.dumper == NULL) {
		fprintf(stderr, "gen_frames: %s: %s\n", argv[1], pcap_geterr(dead));
		goto err_close_dead;
	}
	g.manifest = fopen(argv[2], "w");
	if (g.manifest == NULL) {
		perror(argv[2]);
		goto err_close_dumper;
	}
	fprintf(g.manifest, "# frame opcode qpn psn family vlan payload_len padcnt name\n");

	for (op = 0; op < DROCE_DIM(droce_opcode_desc); op++)
		if ((droce_opcode_desc[op].flags & DROCE_OPF_VALID) &&
		    emit(&g, (uint8_t)op, VAR_IPV4) < 0)
			goto err_close_manifest;
	for (i = 0; i < DROCE_DIM(extra_frames); i++)
		if (emit(&g, extra_frames[i].opcode, extra_frames[i].flags) < 0)
			goto err_close_manifest;
	ret = 0;

err_close_manifest:
	if (fclose(g.manifest) != 0) {
		perror(argv[2]);
		ret = 1;
	}
err_close_dumper:
	pcap_dump_close(g.dumper);
err_close_dead:
	pcap_close(dead);
	if (ret == 0)
		printf("gen_frames: %u frames\n", g.nframes);
	return ret;
}
