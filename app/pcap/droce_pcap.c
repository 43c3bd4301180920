/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce-pcap: check and print RoCEv2 captures with droce's own codec.
 *
 *   droce-pcap verify FILE...   parse every frame (lengths, opcode, pad,
 *                               ICRC), rebuild its headers and ICRC from
 *                               the decoded fields, compare byte for byte
 *   droce-pcap show FILE...     one readable line per frame
 *
 * Frames that are not RoCEv2 (ARP, IGMP, TCP, other UDP) are counted apart.
 * Frames captured with a short snap length are checked up to the payload.
 * Single-threaded; reads files through libpcap (pcap and pcapng).
 */

#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_config.h"
#include "droce_wire.h"
#include "droce_wire_gid.h"
#include "droce_wire_psn.h"

struct tally {
	unsigned long frames;
	unsigned long ok;
	unsigned long bad;
	unsigned long foreign;
	unsigned long headers_only;
};

typedef void (*frame_fn)(const char *file, unsigned long n, const uint8_t *f,
			 uint32_t caplen, uint32_t wire_len, struct tally *t);

/* Rebuild from the decoded fields; return the first differing offset or -1. */
static long
rebuild_diff(const struct droce_pkt *parsed, const uint8_t *f, uint32_t caplen)
{
	static uint8_t buf[65536 + 128];
	struct droce_pkt pkt = *parsed;
	uint32_t n, i;
	int hlen;

	hlen = droce_pkt_build_hdrs(&pkt, buf, sizeof(buf));
	if (hlen < 0)
		return 0;
	if (pkt.frame_len != parsed->frame_len)
		return hlen;
	n = (uint32_t)hlen;
	if (!(parsed->flags & DROCE_PKT_F_TRUNCATED)) {
		/* payload and pad as received, then a fresh ICRC */
		memcpy(buf + n, f + n, pkt.frame_len - DROCE_ICRC_BYTES - n);
		droce_icrc_set(&pkt, buf);
		n = pkt.frame_len;
	}
	n = n < caplen ? n : caplen;
	for (i = 0; i < n; i++)
		if (buf[i] != f[i])
			return i;
	return -1;
}

static void
verify_frame(const char *file, unsigned long n, const uint8_t *f, uint32_t caplen,
	     uint32_t wire_len, struct tally *t)
{
	struct droce_pkt pkt;
	enum droce_wire_drop r = droce_pkt_parse(&pkt, f, caplen, wire_len);
	long diff;

	if (r != DROCE_WIRE_OK) {
		if (droce_wire_drop_is_foreign(r)) {
			t->foreign++;
			return;
		}
		printf("%s:%lu: %s: %s\n", file, n, droce_wire_drop_name(r),
		       droce_wire_drop_desc(r));
		t->bad++;
		return;
	}
	diff = rebuild_diff(&pkt, f, caplen);
	if (diff >= 0) {
		printf("%s:%lu: REBUILD_MISMATCH: %s rebuilt differs at byte %ld\n", file, n,
		       droce_opcode(pkt.opcode)->name, diff);
		t->bad++;
		return;
	}
	if (pkt.flags & DROCE_PKT_F_TRUNCATED)
		t->headers_only++;
	t->ok++;
}

static void
show_xhdrs(const struct droce_pkt *p)
{
	const struct droce_opcode_desc *d = droce_opcode(p->opcode);
	uint8_t syn = p->aeth.syndrome;

	if (d->xhdrs & DROCE_XH(DETH))
		printf(" DETH[qkey=0x%08x sqpn=0x%06x]", p->deth.qkey, p->deth.sqpn);
	if (d->xhdrs & DROCE_XH(FETH))
		printf(" FETH[sel=%u plt=%u]", p->feth.sel, p->feth.plt);
	if (d->xhdrs & DROCE_XH(RETH))
		printf(" RETH[va=0x%" PRIx64 " rkey=0x%08x len=%u]", p->reth.va, p->reth.rkey,
		       p->reth.len);
	if (d->xhdrs & DROCE_XH(ATMETH))
		printf(" AtomicETH[va=0x%" PRIx64 " rkey=0x%08x swap_add=0x%" PRIx64
		       " cmp=0x%" PRIx64 "]", p->atmeth.va, p->atmeth.rkey,
		       p->atmeth.swap_add, p->atmeth.cmp);
	if (d->xhdrs & DROCE_XH(AETH)) {
		switch (droce_aeth_type(syn)) {
		case DROCE_AETH_ACK:
			printf(" AETH[ACK credits=%u", droce_aeth_value(syn));
			break;
		case DROCE_AETH_RNR_NAK:
			printf(" AETH[RNR_NAK %uus", droce_rnr_timer_usec(droce_aeth_value(syn)));
			break;
		case DROCE_AETH_NAK:
			printf(" AETH[NAK %s", droce_nak_code_name(droce_aeth_value(syn)));
			break;
		default:
			printf(" AETH[reserved 0x%02x", syn);
		}
		printf(" msn=%u]", p->aeth.msn);
	}
	if (d->xhdrs & DROCE_XH(ATMACK))
		printf(" AtomicAckETH[orig=0x%" PRIx64 "]", p->atmack_orig);
	if (d->xhdrs & DROCE_XH(IMMDT))
		printf(" ImmDt[0x%08x]", rte_be_to_cpu_32(p->imm));
	if (d->xhdrs & DROCE_XH(IETH))
		printf(" IETH[rkey=0x%08x]", p->ieth_rkey);
}

static void
show_frame(const char *file, unsigned long n, const uint8_t *f, uint32_t caplen,
	   uint32_t wire_len, struct tally *t)
{
	struct droce_pkt p;
	enum droce_wire_drop r = droce_pkt_parse(&p, f, caplen, wire_len);
	char src[64], dst[64];

	(void)file;
	if (r != DROCE_WIRE_OK) {
		printf("%5lu  %s\n", n, droce_wire_drop_is_foreign(r) ? "(not RoCEv2)" :
		       droce_wire_drop_desc(r));
		if (droce_wire_drop_is_foreign(r))
			t->foreign++;
		else
			t->bad++;
		return;
	}
	t->ok++;
	printf("%5lu  %s > %s", n, droce_gid_str(p.sgid, src, sizeof(src)),
	       droce_gid_str(p.dgid, dst, sizeof(dst)));
	if (p.flags & DROCE_PKT_F_VLAN)
		printf(" vlan %u", p.vlan_tci & 0xfff);
	printf(" sport %u %s qpn 0x%06x psn %u%s%s%s pkey 0x%04x pad %u len %u",
	       p.sport, droce_opcode(p.opcode)->name, p.dqpn, p.psn,
	       p.ackreq ? " A" : "", p.se ? " SE" : "", p.mig ? " M" : "",
	       p.pkey, p.padcnt, p.payload_len);
	show_xhdrs(&p);
	if (p.flags & DROCE_PKT_F_TRUNCATED)
		printf(" (headers only)\n");
	else
		printf(" icrc 0x%08x ok\n", p.icrc);
}

static int
for_each_frame(const char *file, frame_fn fn, struct tally *t)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long n = 0;
	pcap_t *pc;
	int rc;

	pc = pcap_open_offline(file, err);
	if (pc == NULL) {
		fprintf(stderr, "droce-pcap: %s\n", err);
		return -1;
	}
	if (pcap_datalink(pc) != DLT_EN10MB) {
		fprintf(stderr, "droce-pcap: %s: not an Ethernet capture\n", file);
		pcap_close(pc);
		return -1;
	}
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		n++;
		t->frames++;
		fn(file, n, data, h->caplen, h->len, t);
	}
	if (rc == PCAP_ERROR)
		fprintf(stderr, "droce-pcap: %s: %s\n", file, pcap_geterr(pc));
	pcap_close(pc);
	return rc == PCAP_ERROR ? -1 : 0;
}

static int
usage(void)
{
	fprintf(stderr,
		"usage: droce-pcap verify FILE...  check every RoCEv2 frame, rebuild it, compare\n"
		"       droce-pcap show FILE...    print a readable decode\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct tally t = { 0 };
	bool verify;
	int i, failed = 0;

	if (argc < 3)
		return usage();
	if (strcmp(argv[1], "verify") == 0)
		verify = true;
	else if (strcmp(argv[1], "show") == 0)
		verify = false;
	else
		return usage();

	for (i = 2; i < argc; i++)
		if (for_each_frame(argv[i], verify ? verify_frame : show_frame, &t) < 0)
			failed = 1;
	if (verify)
		printf("%lu frames, %lu ok, %lu bad (%lu not RoCEv2, %lu checked as headers only)\n",
		       t.frames, t.ok, t.bad, t.foreign, t.headers_only);
	return failed || t.bad ? 1 : 0;
}
