/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_pkt_parse() and droce_pkt_build_hdrs(): build -> parse round trips
 * for every opcode over IPv4, IPv6 and 802.1Q with odd payload lengths;
 * parse -> build reproduces captured frames byte for byte; every drop
 * reason provoked by a crafted frame; truncation at every length, with the
 * frame placed against unreadable memory (tw_parse_guarded) so that a read
 * past the captured bytes faults, under ASan or not.
 */

#include <errno.h>
#include <string.h>

#include "droce_wire_gid.h"
#include "test_wire.h"

static const uint32_t variants[] = {
	0,
	DROCE_PKT_F_IPV6,
	DROCE_PKT_F_VLAN,
	DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6,
};

static const char *const variant_name[] = { "IPv4", "IPv6", "VLAN IPv4", "VLAN IPv6" };

/* ---- round trips ---- */

START_TEST(test_build_then_parse_round_trips_every_field)	/* _i: defined opcode */
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 31, 64, 255, 1021 };
	const uint8_t op = tw_opcodes[_i];
	const struct droce_opcode_desc *d = droce_opcode(op);
	uint8_t f[TW_FRAME_MAX];
	unsigned int v, l, seed;

	for (v = 0; v < DROCE_DIM(variants); v++)
		for (l = 0; l < DROCE_DIM(lens); l++)
			for (seed = 0; seed < 3; seed++) {
				struct droce_pkt want, got;
				uint32_t len = lens[l], n;
				enum droce_wire_drop r;

				if (d->flags & DROCE_OPF_ATOMIC_WR)
					len = 8;	/* exactly one 64-bit value */
				else if (!(d->flags & DROCE_OPF_PAYLOAD))
					len = 0;
				if (len != lens[l])
					continue;
				tw_pkt_fill(&want, op, variants[v], len, seed + l);
				n = tw_frame_build(&want, f, sizeof(f));
				ck_assert_uint_eq(droce_pkt_hdrs_len(&want), want.payload_off);
				r = tw_parse_guarded(&got, f, n, n);
				ck_assert_msg(r == DROCE_WIRE_OK, "%s %s payload %u seed %u: %s",
					      d->name, variant_name[v], len, seed,
					      droce_wire_drop_name(r));
				tw_assert_pkt_matches(&got, &want);
				ck_assert_uint_eq(got.icrc, droce_icrc_load(f + n - 4));
				ck_assert_uint_eq(got.payload_off + got.payload_len + got.padcnt +
						  DROCE_ICRC_BYTES, n);
			}
}
END_TEST

/*
 * The builder and the parser handle the BTH as three words; the header's
 * accessors one field at a time. Both must agree on every bit (a mistake
 * made the same way in the builder and the parser would pass the round
 * trips above): 4 000 random headers, each field's width overflowed too.
 */
START_TEST(test_bth_words_agree_with_the_accessors)
{
	uint8_t f[TW_FRAME_MAX];
	uint32_t x = 99;
	unsigned int n;

	for (n = 0; n < 4000; n++) {
		struct droce_pkt pkt, got;
		struct droce_bth want;
		const struct droce_bth *bth;
		const struct droce_opcode_desc *d;
		uint32_t r[4], i, len;

		for (i = 0; i < 4; i++) {
			x = x * 1103515245u + 12345u;
			r[i] = x ^ (x >> 15) << 17;
		}
		d = droce_opcode(tw_opcodes[n % tw_opcode_count]);

		len = 0;			/* payload and pad: a multiple of 4, as parse wants */
		if (d->flags & DROCE_OPF_ATOMIC_WR)
			len = 8;
		else if (d->flags & DROCE_OPF_PAYLOAD)
			len = r[0] >> 8 & 3;
		tw_pkt_fill(&pkt, tw_opcodes[n % tw_opcode_count], variants[n % DROCE_DIM(variants)],
			    len, n);
		pkt.padcnt = (uint8_t)((4 - len) & 3);
		pkt.se = r[0] & 1;
		pkt.mig = r[0] >> 1 & 1;
		pkt.tver = 0;				/* the parser refuses others */
		pkt.pkey = (uint16_t)(r[0] >> 16);
		pkt.fecn = r[1] & 1;
		pkt.becn = r[1] >> 1 & 1;
		pkt.resv6 = (uint8_t)(r[1] >> 2);	/* 8 bits into 6 */
		pkt.dqpn = r[2];			/* 32 bits into 24 */
		pkt.ackreq = r[3] & 1;
		pkt.resv7 = (uint8_t)(r[3] >> 1);	/* 8 bits into 7 */
		pkt.psn = r[3] >> 3 | r[2] << 29;
		len = tw_frame_build(&pkt, f, sizeof(f));
		bth = (const void *)(f + pkt.bth_off);

		memset(&want, 0xa5, sizeof(want));
		droce_bth_set_opcode(&want, pkt.opcode);
		droce_bth_set_se(&want, pkt.se);
		droce_bth_set_mig(&want, pkt.mig);
		droce_bth_set_padcnt(&want, pkt.padcnt);
		droce_bth_set_tver(&want, pkt.tver);
		droce_bth_set_pkey(&want, pkt.pkey);
		droce_bth_set_fecn(&want, pkt.fecn);
		droce_bth_set_becn(&want, pkt.becn);
		droce_bth_set_resv6(&want, pkt.resv6);
		droce_bth_set_qpn(&want, pkt.dqpn);
		droce_bth_set_ackreq(&want, pkt.ackreq);
		droce_bth_set_resv7(&want, pkt.resv7);
		droce_bth_set_psn(&want, pkt.psn);
		ck_assert_msg(memcmp(bth, &want, sizeof(want)) == 0, "BTH %u differs", n);

		ck_assert_int_eq(tw_parse_guarded(&got, f, len, len), DROCE_WIRE_OK);
		ck_assert_uint_eq(got.opcode, droce_bth_opcode(bth));
		ck_assert_uint_eq(got.se, droce_bth_se(bth));
		ck_assert_uint_eq(got.mig, droce_bth_mig(bth));
		ck_assert_uint_eq(got.padcnt, droce_bth_padcnt(bth));
		ck_assert_uint_eq(got.tver, droce_bth_tver(bth));
		ck_assert_uint_eq(got.pkey, droce_bth_pkey(bth));
		ck_assert_uint_eq(got.fecn, droce_bth_fecn(bth));
		ck_assert_uint_eq(got.becn, droce_bth_becn(bth));
		ck_assert_uint_eq(got.resv6, droce_bth_resv6(bth));
		ck_assert_uint_eq(got.dqpn, droce_bth_qpn(bth));
		ck_assert_uint_eq(got.ackreq, droce_bth_ackreq(bth));
		ck_assert_uint_eq(got.resv7, droce_bth_resv7(bth));
		ck_assert_uint_eq(got.psn, droce_bth_psn(bth));
	}
}
END_TEST

/*
 * A header template gives the bytes and offsets droce_pkt_build_hdrs()
 * gives, packet after packet (4 000) through one template, whatever
 * changes between them: lengths, opcodes, and the fields it was built
 * from (a MAC rewritten after the fact, a family, a VLAN), which must
 * rebuild it.
 */
START_TEST(test_template_builds_what_the_builder_builds)
{
	struct droce_hdr_tmpl t;
	uint8_t a[TW_FRAME_MAX], b[TW_FRAME_MAX];
	unsigned int n;

	memset(&t, 0, sizeof(t));
	for (n = 0; n < 4000; n++) {
		const uint8_t op = tw_opcodes[n % tw_opcode_count];
		const struct droce_opcode_desc *d = droce_opcode(op);
		struct droce_pkt p, q;
		uint32_t len = (d->flags & DROCE_OPF_ATOMIC_WR) ? 8 :
			       (d->flags & DROCE_OPF_PAYLOAD) ? n * 7 % 1500 : 0;
		int ha, hb;

		/* the flow changes now and then; in between, only the packet does */
		tw_pkt_fill(&p, op, variants[n / 97 % DROCE_DIM(variants)], len, n / 50);
		if (n % 13 == 0)
			p.dmac[n % 6] ^= 0x40;	/* e.g. a loopback's own MAC */
		if (n % 29 == 0)
			p.ttl++;
		q = p;
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		ha = droce_pkt_build_hdrs(&p, a, sizeof(a));
		hb = droce_pkt_build_hdrs_tmpl(&q, &t, b, sizeof(b));
		ck_assert_int_eq(ha, hb);
		ck_assert_msg(memcmp(a, b, sizeof(a)) == 0, "packet %u: the bytes differ", n);
		ck_assert_uint_eq(p.l3_off, q.l3_off);
		ck_assert_uint_eq(p.bth_off, q.bth_off);
		ck_assert_uint_eq(p.payload_off, q.payload_off);
		ck_assert_uint_eq(p.frame_len, q.frame_len);
	}
}
END_TEST

/*
 * The template's fast path gives the frames droce_pkt_build_hdrs() and
 * droce_icrc_set() give, packet after packet (4 000) through one served
 * description that changes as the transport changes it: opcode, SE, pad,
 * AckReq, PSN, payload and extension headers; now and then its MAC set
 * after the fact (the path falls back and rebuilds) or another flow served.
 * The ICRC comes from the template's cached header state.
 */
START_TEST(test_template_fast_path_builds_what_the_builder_builds)
{
	struct droce_hdr_tmpl t;
	struct droce_pkt served, p;
	uint8_t a[TW_FRAME_MAX], b[TW_FRAME_MAX];
	unsigned int n, i, fast = 0;

	memset(&t, 0, sizeof(t));
	for (n = 0; n < 4000; n++) {
		const uint8_t op = tw_opcodes[n % tw_opcode_count];
		const struct droce_opcode_desc *d = droce_opcode(op);
		uint32_t len = (d->flags & DROCE_OPF_ATOMIC_WR) ? 8 :
			       (d->flags & DROCE_OPF_PAYLOAD) ? n * 7 % 1500 : 0;
		uint32_t pre = 0, end;
		bool by_fast;
		int ha, hb;

		if (n % 97 == 0) {
			tw_pkt_fill(&served, op, variants[n / 97 % DROCE_DIM(variants)], 0, n / 50);
			served.tmpl = &t;
			droce_hdr_tmpl_serve(&t, &served);
		}
		/* what the transport sets per packet, from another fill */
		tw_pkt_fill(&p, op, served.flags, len, n + 2);
		served.opcode = op;
		served.se = p.se;
		served.ackreq = p.ackreq;
		served.psn = p.psn;
		served.payload_len = len;
		served.padcnt = droce_pad_bytes(len);
		served.reth = p.reth;
		served.aeth = p.aeth;
		served.atmeth = p.atmeth;
		served.atmack_orig = p.atmack_orig;
		served.imm = p.imm;
		served.ieth_rkey = p.ieth_rkey;
		served.deth = p.deth;
		if (n % 13 == 0)
			served.dmac[n % 6] ^= 0x40;	/* e.g. a resolved neighbour */
		p = served;
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		ha = droce_pkt_build_hdrs(&p, a, sizeof(a));
		by_fast = droce_hdr_tmpl_fast_ok(&t, &served);
		if (by_fast) {
			hb = droce_pkt_build_hdrs_fast(&served, &t, b, sizeof(b), &pre);
			fast++;
		} else {
			hb = droce_pkt_build_hdrs_tmpl(&served, &t, b, sizeof(b));
		}
		ck_assert_int_eq(ha, hb);
		ck_assert_uint_eq(p.l3_off, served.l3_off);
		ck_assert_uint_eq(p.bth_off, served.bth_off);
		ck_assert_uint_eq(p.payload_off, served.payload_off);
		ck_assert_uint_eq(p.frame_len, served.frame_len);
		for (i = 0; i < len; i++)
			a[ha + i] = b[hb + i] = (uint8_t)(i * 13 + n);
		memset(a + ha + len, 0, p.padcnt);
		memset(b + hb + len, 0, p.padcnt);
		droce_icrc_set(&p, a);
		end = served.frame_len - DROCE_ICRC_BYTES - served.l3_off;
		if (by_fast)
			droce_icrc_store(b + served.l3_off + end,
					 droce_icrc_update(pre, b + served.l3_off + DROCE_HDR_TMPL_ICRC_PRE(&t),
							   end - DROCE_HDR_TMPL_ICRC_PRE(&t)));
		else
			droce_icrc_set(&served, b);
		ck_assert_msg(memcmp(a, b, sizeof(a)) == 0, "packet %u: the bytes differ", n);
	}
	ck_assert_uint_gt(fast, 3000);	/* the fast path did most of them */
}
END_TEST

/* Parse @p frame, rebuild it from the result, and compare every byte. */
static void
check_rebuild(const uint8_t *frame, uint32_t len, const char *what)
{
	struct droce_pkt pkt;
	uint8_t out[TW_FRAME_MAX];
	uint32_t payload_end;
	int n;

	ck_assert_msg(tw_parse_guarded(&pkt, frame, len, len) == DROCE_WIRE_OK, "%s", what);
	memset(out, 0xee, sizeof(out));
	n = droce_pkt_build_hdrs(&pkt, out, sizeof(out));
	ck_assert_int_eq(n, pkt.payload_off);
	ck_assert_uint_eq(pkt.frame_len, len);
	payload_end = pkt.payload_off + pkt.payload_len + pkt.padcnt;
	memcpy(out + n, frame + n, payload_end - (uint32_t)n);
	droce_icrc_set(&pkt, out);
	ck_assert_msg(memcmp(out, frame, len) == 0, "%s: rebuilt frame differs", what);
	ck_assert_uint_eq(out[len], 0xee);
}

START_TEST(test_parse_then_build_reproduces_captured_frames_byte_for_byte)
{
	unsigned int i;

	for (i = 0; i < tw_golden_good_count; i++)
		check_rebuild(tw_golden_good[i]->bytes, tw_golden_good[i]->caplen,
			      tw_golden_good[i]->what);
}
END_TEST

/* _i: defined opcode */
START_TEST(test_parse_then_build_reproduces_built_frames_byte_for_byte)
{
	const uint8_t op = tw_opcodes[_i];
	const struct droce_opcode_desc *d = droce_opcode(op);
	struct droce_pkt pkt;
	uint8_t f[TW_FRAME_MAX];
	unsigned int v;

	for (v = 0; v < DROCE_DIM(variants); v++) {
		uint32_t len = (d->flags & DROCE_OPF_ATOMIC_WR) ? 8 :
			       (d->flags & DROCE_OPF_PAYLOAD) ? 9 + v : 0;
		uint32_t n;

		tw_pkt_fill(&pkt, op, variants[v], len, 5 + v);
		n = tw_frame_build(&pkt, f, sizeof(f));
		check_rebuild(f, n, d->name);
	}
}
END_TEST

/* ---- decoding real frames ---- */

static void
assert_gid_is_ipv4(const uint8_t gid[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d };

	ck_assert_mem_eq(gid, want, 16);
}

START_TEST(test_parse_decodes_a_captured_ack)
{
	static const uint8_t dmac[6] = { 0x52, 0x54, 0x0a, 0x4d, 0x00, 0x02 };
	static const uint8_t smac[6] = { 0x52, 0x54, 0x0a, 0x4d, 0x00, 0x01 };
	struct droce_pkt p;

	/* rc_send_pingpong.pcap #5; tshark: 10.77.0.1 -> 10.77.0.2, Acknowledge,
	 * QP 0x12, PSN 13121814, Syndrome 31, MSN 1 */
	ck_assert_int_eq(tw_parse_guarded(&p, tw_rc_ack.bytes, 62, 62), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.flags, 0);
	ck_assert_mem_eq(p.dmac, dmac, 6);
	ck_assert_mem_eq(p.smac, smac, 6);
	assert_gid_is_ipv4(p.sgid, 10, 77, 0, 1);
	assert_gid_is_ipv4(p.dgid, 10, 77, 0, 2);
	ck_assert_uint_eq(p.tclass, 0);
	ck_assert_uint_eq(p.ttl, 64);
	ck_assert_uint_eq(p.ip_id, 0x2635);
	ck_assert_uint_eq(p.ip_frag, 0x4000);
	ck_assert_uint_eq(p.sport, 0xc144);
	ck_assert_uint_eq(p.dport, 4791);
	ck_assert_uint_eq(p.udp_csum, 0);
	ck_assert_uint_eq(p.opcode, DROCE_OP_RC_ACKNOWLEDGE);
	ck_assert_uint_eq(p.pkey, 0xffff);
	ck_assert_uint_eq(p.dqpn, 0x12);
	ck_assert(!p.ackreq);
	ck_assert_uint_eq(p.psn, 13121814);
	ck_assert_uint_eq(p.aeth.syndrome, 31);
	ck_assert_uint_eq(p.aeth.msn, 1);
	ck_assert_uint_eq(p.l3_off, 14);
	ck_assert_uint_eq(p.bth_off, 42);
	ck_assert_uint_eq(p.payload_off, 58);
	ck_assert_uint_eq(p.payload_len, 0);
	ck_assert_uint_eq(p.frame_len, 62);
	ck_assert_uint_eq(p.icrc, 0x003582e2);
}
END_TEST

START_TEST(test_parse_decodes_a_captured_ud_send)
{
	struct droce_pkt p;

	/* rdma_cm_rping.pcap #1; tshark: UD SEND only to QP 1, Q_Key 0x80010000,
	 * SrcQP 1, then a 256-byte CM MAD */
	ck_assert_int_eq(tw_parse_guarded(&p, tw_ud_send.bytes, 322, 322), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.opcode, DROCE_OP_UD_SEND_ONLY);
	ck_assert_uint_eq(p.dqpn, 1);
	ck_assert(p.ackreq);
	ck_assert_uint_eq(p.deth.qkey, 0x80010000u);
	ck_assert_uint_eq(p.deth.sqpn, 1);
	ck_assert_uint_eq(p.payload_off, 42 + 20);
	ck_assert_uint_eq(p.payload_len, 256);
	ck_assert_uint_eq(p.padcnt, 0);
	ck_assert_uint_eq(p.frame_len, 322);
}
END_TEST

START_TEST(test_parse_decodes_an_ipv6_frame)
{
	static const uint8_t sgid[16] = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 };
	static const uint8_t dgid[16] = { 0xfd, 0x00, 0x00, 0x77, [15] = 1 };
	struct droce_pkt p;

	ck_assert_int_eq(tw_parse_guarded(&p, tw_ipv6_send.bytes, 86, 86), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.flags, DROCE_PKT_F_IPV6);
	ck_assert_mem_eq(p.sgid, sgid, 16);
	ck_assert_mem_eq(p.dgid, dgid, 16);
	ck_assert_uint_eq(p.tclass, 0x6a);
	ck_assert_uint_eq(p.flow_label, 0xabcde);
	ck_assert_uint_eq(p.ttl, 64);
	ck_assert_uint_eq(p.sport, 0xc123);
	ck_assert_uint_eq(p.udp_csum, 0x1234);
	ck_assert_uint_eq(p.opcode, DROCE_OP_RC_SEND_ONLY);
	ck_assert(p.se);
	ck_assert_uint_eq(p.padcnt, 3);
	ck_assert(p.fecn);
	ck_assert(!p.becn);
	ck_assert_uint_eq(p.dqpn, 0xabc);
	ck_assert(p.ackreq);
	ck_assert_uint_eq(p.psn, 0xfffffe);
	ck_assert_uint_eq(p.l3_off, 14);
	ck_assert_uint_eq(p.bth_off, 62);
	ck_assert_uint_eq(p.payload_off, 74);
	ck_assert_uint_eq(p.payload_len, 5);
	ck_assert_mem_eq(tw_ipv6_send.bytes + p.payload_off, "hello", 5);
	ck_assert_uint_eq(p.frame_len, 86);
}
END_TEST

/* ---- truncation ---- */

/* Frames cut short at every length: whole-frame lengths (caplen == wire_len). */
static void
check_truncation(const uint8_t *f, uint32_t n, const char *what)
{
	uint32_t l3 = tw_l3_off(f), l4_end, cut;
	struct droce_pkt p;

	l4_end = l3 + ((f[l3] >> 4) == 6 ? 40 : 20) + DROCE_UDP_BYTES;
	for (cut = 0; cut < n; cut++) {
		enum droce_wire_drop r = tw_parse_guarded(&p, f, cut, cut), want;

		if (cut < l3)
			want = DROCE_WIRE_DROP_TRUNC_L2;
		else if (cut < l4_end)
			want = DROCE_WIRE_DROP_TRUNC_L3;
		else
			want = DROCE_WIRE_DROP_IP_LEN;	/* the IP length claims more */
		ck_assert_msg(r == want, "%s cut to %u: %s, want %s", what, cut,
			      droce_wire_drop_name(r), droce_wire_drop_name(want));
		ck_assert(!droce_wire_drop_is_foreign(r));
	}
	ck_assert_int_eq(tw_parse_guarded(&p, f, n, n), DROCE_WIRE_OK);
}

/* Snap-length captures: @p cut bytes of an @p n byte frame. */
static void
check_snap(const uint8_t *f, uint32_t n, const char *what)
{
	uint32_t l3 = tw_l3_off(f), l4_end, bth, cut;
	const struct droce_opcode_desc *d;
	struct droce_pkt whole, p;

	l4_end = l3 + ((f[l3] >> 4) == 6 ? 40 : 20) + DROCE_UDP_BYTES;
	bth = l4_end;
	d = droce_opcode(f[bth]);
	ck_assert_int_eq(tw_parse_guarded(&whole, f, n, n), DROCE_WIRE_OK);
	ck_assert(!(whole.flags & DROCE_PKT_F_TRUNCATED));
	for (cut = 0; cut < n; cut++) {
		enum droce_wire_drop r = tw_parse_guarded(&p, f, cut, n), want;

		if (cut < l3)
			want = DROCE_WIRE_DROP_TRUNC_L2;
		else if (cut < l4_end)
			want = DROCE_WIRE_DROP_TRUNC_L3;
		else if (cut < bth + DROCE_BTH_BYTES)
			want = DROCE_WIRE_DROP_TRUNC_BTH;
		else if (cut < bth + d->hdr_len)
			want = DROCE_WIRE_DROP_TRUNC_XHDR;
		else
			want = DROCE_WIRE_OK;
		ck_assert_msg(r == want, "%s: %u of %u bytes: %s, want %s", what, cut, n,
			      droce_wire_drop_name(r), droce_wire_drop_name(want));
		if (r != DROCE_WIRE_OK)
			continue;
		/* headers decoded as from the whole frame, ICRC unchecked */
		ck_assert_uint_eq(p.flags, whole.flags | DROCE_PKT_F_TRUNCATED);
		whole.flags |= DROCE_PKT_F_TRUNCATED;
		tw_assert_pkt_matches(&p, &whole);
		whole.flags &= ~(uint32_t)DROCE_PKT_F_TRUNCATED;
		ck_assert_uint_eq(p.icrc, 0);
	}
}

/* A few frames of each shape: captured, IPv6, tagged, long headers. */
static uint32_t
truncation_frame(unsigned int i, uint8_t *f, const char **what)
{
	static const struct {
		uint8_t opcode;
		uint32_t flags;
		uint32_t len;
	} built[] = {
		{ DROCE_OP_RC_WRITE_ONLY_IMM, DROCE_PKT_F_VLAN, 5 },
		{ DROCE_OP_RC_FLUSH, DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6, 0 },
		{ DROCE_OP_RC_COMPARE_SWAP, DROCE_PKT_F_IPV6, 0 },
		{ DROCE_OP_UD_SEND_ONLY_IMM, 0, 3 },
		{ DROCE_OP_CNP, DROCE_PKT_F_IPV6, 0 },
	};
	struct droce_pkt pkt;

	if (i < tw_golden_good_count) {
		*what = tw_golden_good[i]->what;
		memcpy(f, tw_golden_good[i]->bytes, tw_golden_good[i]->caplen);
		return tw_golden_good[i]->caplen;
	}
	i -= tw_golden_good_count;
	ck_assert_uint_lt(i, DROCE_DIM(built));
	*what = droce_opcode(built[i].opcode)->name;
	tw_pkt_fill(&pkt, built[i].opcode, built[i].flags, built[i].len, i + 7);
	return tw_frame_build(&pkt, f, TW_FRAME_MAX);
}

#define TRUNCATION_FRAMES ((int)tw_golden_good_count + 5)

START_TEST(test_truncated_frame_is_rejected_at_every_length)	/* _i: frame */
{
	uint8_t f[TW_FRAME_MAX];
	const char *what;
	uint32_t n = truncation_frame(_i, f, &what);

	check_truncation(f, n, what);
}
END_TEST

START_TEST(test_snap_truncated_capture_keeps_headers_and_sets_truncated)	/* _i: frame */
{
	uint8_t f[TW_FRAME_MAX];
	const char *what;
	uint32_t n = truncation_frame(_i, f, &what);

	check_snap(f, n, what);
}
END_TEST

START_TEST(test_parse_decodes_a_captured_snap_truncated_write)
{
	const struct tw_golden *g = &tw_rc_write_first_snap;
	struct droce_pkt p;

	/* bulk_write_bw_headers.pcap #1: 96 of 1098 bytes; tshark: RDMA WRITE First,
	 * QP 0x1c, PSN 14149970, VA 0x00007f9194cc0000, R_Key 0xf1e, DMA Length 65536 */
	ck_assert_int_eq(tw_parse_guarded(&p, g->bytes, g->caplen, g->wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.flags, DROCE_PKT_F_TRUNCATED);
	ck_assert_uint_eq(p.opcode, DROCE_OP_RC_WRITE_FIRST);
	ck_assert_uint_eq(p.dqpn, 0x1c);
	ck_assert_uint_eq(p.psn, 14149970);
	ck_assert_uint_eq(p.reth.va, 0x00007f9194cc0000ull);
	ck_assert_uint_eq(p.reth.rkey, 0xf1e);
	ck_assert_uint_eq(p.reth.len, 65536);
	ck_assert_uint_eq(p.payload_off, 14 + 20 + 8 + 28);
	ck_assert_uint_eq(p.payload_len, 1024);
	ck_assert_uint_eq(p.frame_len, 1098);
	ck_assert_uint_eq(p.icrc, 0);
	/* the same bytes claimed as a whole frame are cut short */
	ck_assert_int_eq(tw_parse_guarded(&p, g->bytes, g->caplen, g->caplen),
			 DROCE_WIRE_DROP_IP_LEN);
}
END_TEST

START_TEST(test_ethernet_trailer_after_the_icrc_is_ignored)
{
	uint8_t f[TW_FRAME_MAX];
	struct droce_pkt p;

	memcpy(f, tw_rc_ack.bytes, 62);
	memset(f + 62, 0x5a, 8);		/* padding or an FCS the NIC left in */
	ck_assert_int_eq(tw_parse_guarded(&p, f, 70, 70), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.frame_len, 62);
	ck_assert_uint_eq(p.icrc, 0x003582e2);
	ck_assert(!(p.flags & DROCE_PKT_F_TRUNCATED));
}
END_TEST

START_TEST(test_caplen_beyond_wire_len_is_clamped)
{
	uint8_t f[TW_FRAME_MAX];
	struct droce_pkt p;

	memcpy(f, tw_rc_ack.bytes, 62);
	memset(f + 62, 0, 16);
	/* the bytes past the wire length are not the frame's: the IP length must fit in 61 */
	ck_assert_int_eq(droce_pkt_parse(&p, f, 78, 61), DROCE_WIRE_DROP_IP_LEN);
	ck_assert_int_eq(droce_pkt_parse(&p, f, 78, 62), DROCE_WIRE_OK);
	ck_assert(!(p.flags & DROCE_PKT_F_TRUNCATED));
}
END_TEST

/* ---- every drop reason ---- */

struct frame {
	uint8_t b[TW_FRAME_MAX];
	uint32_t caplen;
	uint32_t wire_len;
};

static void
base(struct frame *fr, uint8_t opcode, uint32_t flags, uint32_t payload_len)
{
	struct droce_pkt pkt;

	memset(fr, 0, sizeof(*fr));
	tw_pkt_fill(&pkt, opcode, flags, payload_len, 11);
	fr->caplen = fr->wire_len = tw_frame_build(&pkt, fr->b, sizeof(fr->b));
}

static void
base_pkt(struct frame *fr, struct droce_pkt *pkt)
{
	memset(fr, 0, sizeof(*fr));
	fr->caplen = fr->wire_len = tw_frame_build(pkt, fr->b, sizeof(fr->b));
}

#define IP4(fr) ((fr)->b + 14)
#define IP6(fr) ((fr)->b + 14)
#define UDP4(fr) ((fr)->b + 14 + 20)
#define UDP6(fr) ((fr)->b + 14 + 40)
#define BTH4(fr) ((fr)->b + 14 + 20 + 8)

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t
get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* Fix the IPv4 checksum and the ICRC, so that only the intended defect remains. */
static void
fix(struct frame *fr)
{
	tw_frame_fix(fr->b, fr->caplen);
}

/* Fix only the IPv4 checksum: for frames whose lengths no longer locate an ICRC. */
static void
fix_csum(struct frame *fr)
{
	put16(IP4(fr) + 10, tw_ipv4_csum(IP4(fr)));
}

static void
arp(struct frame *fr)
{
	static const uint8_t req[] = {	/* who-has 10.77.0.1 tell 10.77.0.2 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0x0a, 0x4d, 0x00, 0x02,
		0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x52, 0x54,
		0x0a, 0x4d, 0x00, 0x02, 0x0a, 0x4d, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x0a, 0x4d, 0x00, 0x01,
	};

	memset(fr, 0, sizeof(*fr));
	memcpy(fr->b, req, sizeof(req));
	fr->caplen = fr->wire_len = 60;		/* padded to the Ethernet minimum */
}

static void
vlan_arp(struct frame *fr)
{
	arp(fr);
	memmove(fr->b + 16, fr->b + 12, 48);
	put16(fr->b + 12, 0x8100);
	put16(fr->b + 14, 0x0064);
	fr->caplen = fr->wire_len = 64;
}

static void
ipv4_tcp(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	IP4(fr)[9] = 6;
	fix(fr);
}

static void
ipv6_tcp(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	IP6(fr)[6] = 6;
}

static void
ipv6_hop_by_hop(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	IP6(fr)[6] = 0;		/* an extension header: RoCEv2 never sends one */
}

static void
ipv4_dns(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(UDP4(fr) + 2, 53);
	fix(fr);
}

static void
ipv6_dns(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6 | DROCE_PKT_F_VLAN, 8);
	put16(fr->b + 18 + 40 + 2, 53);
	fix(fr);
}

static void
ipv4_source_port_4791_only(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(UDP4(fr), 4791);
	put16(UDP4(fr) + 2, 4792);
	fix(fr);
}

static void
short_ethernet(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	fr->caplen = fr->wire_len = 13;
}

static void
short_ipv4(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	fr->caplen = fr->wire_len = 14 + 19;
}

static void
ipv4_says_version_6(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	IP4(fr)[0] = 0x65;
	fix_csum(fr);
}

static void
ipv6_says_version_4(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	IP6(fr)[0] = (uint8_t)((IP6(fr)[0] & 0x0f) | 0x40);
}

static void
ipv4_options(struct frame *fr)
{
	uint8_t *ip = IP4(fr);
	uint32_t sum = 0, i;

	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	memmove(ip + 24, ip + 20, fr->caplen - 34);
	memcpy(ip + 20, "\x01\x01\x01\x00", 4);	/* NOP NOP NOP EOL */
	ip[0] = 0x46;
	put16(ip + 2, get16(ip + 2) + 4);
	fr->caplen = fr->wire_len = fr->caplen + 4;
	put16(ip + 10, 0);			/* a correct checksum over all 24 bytes */
	for (i = 0; i < 24; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum & 0xffff);
}

static void
ipv4_bad_checksum(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	IP4(fr)[11] ^= 0x01;
}

static void
ipv4_more_fragments(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(IP4(fr) + 6, 0x2000);
	fix(fr);
}

static void
ipv4_fragment_offset(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(IP4(fr) + 6, 0x4001);	/* DF with an offset: still a fragment */
	fix(fr);
}

static void
ipv4_ihl_below_5(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	IP4(fr)[0] = 0x44;
	fix_csum(fr);
}

static void
ipv4_total_too_small_for_udp(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(IP4(fr) + 2, 27);
	fix_csum(fr);
}

static void
ipv4_total_past_the_frame(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(IP4(fr) + 2, get16(IP4(fr) + 2) + 4);
	put16(UDP4(fr) + 4, get16(UDP4(fr) + 4) + 4);
	fix_csum(fr);		/* the ICRC would lie past the frame */
}

static void
ipv6_payload_too_small_for_udp(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	put16(IP6(fr) + 4, 7);
}

static void
ipv6_payload_past_the_frame(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	put16(IP6(fr) + 4, get16(IP6(fr) + 4) + 1);
	put16(UDP6(fr) + 4, get16(UDP6(fr) + 4) + 1);
}

static void
udp_len_one_more(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(UDP4(fr) + 4, get16(UDP4(fr) + 4) + 1);
	fix(fr);
}

static void
udp_len_one_less(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	put16(UDP6(fr) + 4, get16(UDP6(fr) + 4) - 1);
	fix(fr);
}

static void
udp_payload_shorter_than_bth_and_icrc(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 0);
	put16(IP4(fr) + 2, 20 + 8 + 15);
	put16(UDP4(fr) + 4, 8 + 15);
	fr->caplen = fr->wire_len = 14 + 20 + 8 + 15;
	fix(fr);
}

static void
opcode_reserved_rc(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	BTH4(fr)[0] = 0x15;
	fix(fr);
}

static void
opcode_rd(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	BTH4(fr)[0] = 0x44;	/* RD SEND_ONLY: RoCE has no RD */
	fix(fr);
}

static void
opcode_ff(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, DROCE_PKT_F_IPV6, 8);
	fr->b[14 + 40 + 8] = 0xff;
	fix(fr);
}

static void
tver_1(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	BTH4(fr)[1] |= 0x01;
	fix(fr);
}

static void
tver_15(struct frame *fr)
{
	base(fr, DROCE_OP_RC_ACKNOWLEDGE, 0, 0);
	BTH4(fr)[1] |= 0x0f;
	fix(fr);
}

static void
write_only_without_room_for_reth(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 0);	/* 12 bytes of BTH, no payload */
	BTH4(fr)[0] = DROCE_OP_RC_WRITE_ONLY;
	fix(fr);
}

static void
ud_imm_without_room_for_immdt(struct frame *fr)
{
	base(fr, DROCE_OP_UD_SEND_ONLY, 0, 0);	/* BTH + DETH only */
	BTH4(fr)[0] = DROCE_OP_UD_SEND_ONLY_IMM;
	fix(fr);
}

static void
pad_larger_than_payload(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 0);
	BTH4(fr)[1] |= 3 << 4;
	fix(fr);
}

static void
payload_and_pad_not_a_multiple_of_4(struct frame *fr)
{
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, DROCE_OP_RC_SEND_ONLY, 0, 5, 11);
	pkt.padcnt = 0;
	base_pkt(fr, &pkt);
}

static void
pad_on_an_ack(struct frame *fr)
{
	base(fr, DROCE_OP_RC_ACKNOWLEDGE, 0, 0);
	BTH4(fr)[1] |= 1 << 4;
	fix(fr);
}

static void
payload_on_an_ack(struct frame *fr)
{
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, DROCE_OP_RC_ACKNOWLEDGE, 0, 4, 11);
	base_pkt(fr, &pkt);
}

static void
payload_on_a_read_request(struct frame *fr)
{
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, DROCE_OP_RC_READ_REQUEST, DROCE_PKT_F_VLAN, 8, 11);
	base_pkt(fr, &pkt);
}

static void
atomic_write_of_16_bytes(struct frame *fr)
{
	base(fr, DROCE_OP_RC_ATOMIC_WRITE, 0, 16);
}

static void
atomic_write_of_7_bytes(struct frame *fr)
{
	base(fr, DROCE_OP_RC_ATOMIC_WRITE, 0, 7);	/* 7 + pad 1: 8 bytes on the wire */
}

static void
payload_after_a_cnp(struct frame *fr)
{
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, DROCE_OP_CNP, DROCE_PKT_F_IPV6, 4, 11);
	base_pkt(fr, &pkt);
}

static void
payload_byte_flipped(struct frame *fr)
{
	base(fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	fr->b[fr->caplen - 5] ^= 0x80;
}

static void
icrc_byte_flipped(struct frame *fr)
{
	base(fr, DROCE_OP_UD_SEND_ONLY_IMM, DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6, 3);
	fr->b[fr->caplen - 1] ^= 0x01;
}

static void
psn_changed_after_the_icrc(struct frame *fr)
{
	base(fr, DROCE_OP_RC_ACKNOWLEDGE, 0, 0);
	BTH4(fr)[11] ^= 0x01;
}

static void
captured_bad_icrc(struct frame *fr)
{
	memset(fr, 0, sizeof(*fr));
	memcpy(fr->b, tw_ud_send_bad_icrc.bytes, tw_ud_send_bad_icrc.caplen);
	fr->caplen = fr->wire_len = tw_ud_send_bad_icrc.caplen;
}

static const struct {
	const char *name;
	void (*make)(struct frame *fr);
	enum droce_wire_drop want;
} drop_cases[] = {
#define C(fn, reason) { #fn, fn, DROCE_WIRE_DROP_##reason }
	C(arp, NOT_IP),
	C(vlan_arp, NOT_IP),
	C(ipv4_tcp, NOT_UDP),
	C(ipv6_tcp, NOT_UDP),
	C(ipv6_hop_by_hop, NOT_UDP),
	C(ipv4_dns, NOT_ROCE_PORT),
	C(ipv6_dns, NOT_ROCE_PORT),
	C(ipv4_source_port_4791_only, NOT_ROCE_PORT),
	C(short_ethernet, TRUNC_L2),
	C(short_ipv4, TRUNC_L3),
	C(ipv4_says_version_6, IP_VERSION),
	C(ipv6_says_version_4, IP_VERSION),
	C(ipv4_options, IPV4_OPTIONS),
	C(ipv4_bad_checksum, IPV4_CSUM),
	C(ipv4_more_fragments, IP_FRAGMENT),
	C(ipv4_fragment_offset, IP_FRAG_TAIL),
	C(ipv4_ihl_below_5, IP_LEN),
	C(ipv4_total_too_small_for_udp, IP_LEN),
	C(ipv4_total_past_the_frame, IP_LEN),
	C(ipv6_payload_too_small_for_udp, IP_LEN),
	C(ipv6_payload_past_the_frame, IP_LEN),
	C(udp_len_one_more, UDP_LEN),
	C(udp_len_one_less, UDP_LEN),
	C(udp_payload_shorter_than_bth_and_icrc, TRUNC_BTH),
	C(opcode_reserved_rc, BAD_OPCODE),
	C(opcode_rd, BAD_OPCODE),
	C(opcode_ff, BAD_OPCODE),
	C(tver_1, BAD_TVER),
	C(tver_15, BAD_TVER),
	C(write_only_without_room_for_reth, TRUNC_XHDR),
	C(ud_imm_without_room_for_immdt, TRUNC_XHDR),
	C(pad_larger_than_payload, BAD_PAD),
	C(payload_and_pad_not_a_multiple_of_4, BAD_PAD),
	C(pad_on_an_ack, BAD_PAD),
	C(payload_on_an_ack, BAD_PAYLOAD_LEN),
	C(payload_on_a_read_request, BAD_PAYLOAD_LEN),
	C(atomic_write_of_16_bytes, BAD_PAYLOAD_LEN),
	C(atomic_write_of_7_bytes, BAD_PAYLOAD_LEN),
	C(payload_after_a_cnp, BAD_PAYLOAD_LEN),
	C(payload_byte_flipped, BAD_ICRC),
	C(icrc_byte_flipped, BAD_ICRC),
	C(psn_changed_after_the_icrc, BAD_ICRC),
	C(captured_bad_icrc, BAD_ICRC),
#undef C
};

START_TEST(test_crafted_frame_is_dropped_for_its_defect)	/* _i: case */
{
	struct frame fr;
	struct droce_pkt p;
	enum droce_wire_drop r;

	drop_cases[_i].make(&fr);
	r = tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len);
	ck_assert_msg(r == drop_cases[_i].want, "%s: %s, want %s", drop_cases[_i].name,
		      droce_wire_drop_name(r), droce_wire_drop_name(drop_cases[_i].want));
	/* ARP, TCP, other UDP: not RoCEv2 at all, for the port layer to pass on */
	ck_assert_int_eq(droce_wire_drop_is_foreign(r),
			 r == DROCE_WIRE_DROP_NOT_IP || r == DROCE_WIRE_DROP_NOT_UDP ||
			 r == DROCE_WIRE_DROP_NOT_ROCE_PORT || r == DROCE_WIRE_DROP_IP_FRAG_TAIL);
}
END_TEST

START_TEST(test_every_drop_reason_is_provoked_by_a_crafted_frame)
{
	unsigned int r, i;

	for (r = DROCE_WIRE_OK + 1; r < DROCE_WIRE_DROP_COUNT; r++) {
		bool seen = false;

		for (i = 0; i < DROCE_DIM(drop_cases); i++)
			seen |= drop_cases[i].want == r;
		ck_assert_msg(seen, "no crafted frame for %s", droce_wire_drop_name(r));
	}
}
END_TEST

START_TEST(test_only_non_rocev2_frames_are_foreign)
{
	unsigned int r;

	ck_assert(droce_wire_drop_is_foreign(DROCE_WIRE_DROP_NOT_IP));
	ck_assert(droce_wire_drop_is_foreign(DROCE_WIRE_DROP_NOT_UDP));
	ck_assert(droce_wire_drop_is_foreign(DROCE_WIRE_DROP_NOT_ROCE_PORT));
	ck_assert(droce_wire_drop_is_foreign(DROCE_WIRE_DROP_IP_FRAG_TAIL));
	for (r = 0; r <= DROCE_WIRE_DROP_COUNT; r++)
		if (r != DROCE_WIRE_DROP_NOT_IP && r != DROCE_WIRE_DROP_NOT_UDP &&
		    r != DROCE_WIRE_DROP_NOT_ROCE_PORT && r != DROCE_WIRE_DROP_IP_FRAG_TAIL)
			ck_assert_msg(!droce_wire_drop_is_foreign(r), "%s",
				      droce_wire_drop_name(r));
	ck_assert(!droce_wire_drop_is_foreign((enum droce_wire_drop)-1));
}
END_TEST

START_TEST(test_drop_reasons_have_names_and_descriptions)
{
	unsigned int r;

#define R(sym, foreign, desc) \
	ck_assert_str_eq(droce_wire_drop_name(DROCE_WIRE_DROP_##sym), #sym); \
	ck_assert_str_eq(droce_wire_drop_desc(DROCE_WIRE_DROP_##sym), desc); \
	ck_assert_int_eq(droce_wire_drop_is_foreign(DROCE_WIRE_DROP_##sym), foreign);
	DROCE_WIRE_DROPS(R)
#undef R
	ck_assert_str_eq(droce_wire_drop_name(DROCE_WIRE_OK), "OK");
	ck_assert_str_eq(droce_wire_drop_name(DROCE_WIRE_DROP_COUNT), "UNKNOWN");
	ck_assert_str_eq(droce_wire_drop_name((enum droce_wire_drop)-1), "UNKNOWN");
	ck_assert_str_eq(droce_wire_drop_desc(DROCE_WIRE_DROP_COUNT), "unknown reason");
	for (r = 0; r < DROCE_WIRE_DROP_COUNT; r++) {
		ck_assert_ptr_nonnull(droce_wire_drop_name(r));
		ck_assert_uint_gt(strlen(droce_wire_drop_desc(r)), 0);
	}
	ck_assert_str_eq(droce_wire_drop_name(DROCE_WIRE_DROP_BAD_ICRC), "BAD_ICRC");
}
END_TEST

START_TEST(test_ipv4_df_and_reserved_flag_are_not_fragments)
{
	struct frame fr;
	struct droce_pkt p;

	base(&fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(IP4(&fr) + 6, 0x4000);
	fix(&fr);
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.ip_frag, 0x4000);
	put16(IP4(&fr) + 6, 0x0000);
	fix(&fr);
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.ip_frag, 0);
	put16(IP4(&fr) + 6, 0xc000);	/* the reserved flag is not a fragment either */
	fix(&fr);
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.ip_frag, 0xc000);
}
END_TEST

START_TEST(test_nonzero_udp_checksum_is_carried_not_checked)
{
	struct frame fr;
	struct droce_pkt p;

	base(&fr, DROCE_OP_RC_SEND_ONLY, 0, 8);
	put16(UDP4(&fr) + 6, 0xbeef);	/* masked by the ICRC, so the frame stays valid */
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.udp_csum, 0xbeef);
}
END_TEST

/*
 * A header whose words sum to 0xffff without the checksum: its checksum is
 * 0, and 0xffff (-0) sums the same. Linux's nftables writes -0 there after
 * rewriting the TOS (nft_payload's checksum update): a frame Linux accepts.
 */
START_TEST(test_ipv4_checksum_minus_zero_is_accepted_and_rebuilt)
{
	struct frame fr;
	struct droce_pkt p;
	uint8_t re[256];
	int hlen;

	base(&fr, DROCE_OP_RC_READ_RESPONSE_MIDDLE, 0, 256);
	put16(IP4(&fr) + 4, 0);
	put16(IP4(&fr) + 4, tw_ipv4_csum(IP4(&fr)));	/* the identification that sums to -0 */
	fix(&fr);
	ck_assert_uint_eq(get16(IP4(&fr) + 10), 0);
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_eq(p.flags & DROCE_PKT_F_IPV4_CSUM_NEG0, 0);

	put16(IP4(&fr) + 10, 0xffff);	/* masked by the ICRC */
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len), DROCE_WIRE_OK);
	ck_assert_uint_ne(p.flags & DROCE_PKT_F_IPV4_CSUM_NEG0, 0);
	hlen = droce_pkt_build_hdrs(&p, re, sizeof(re));
	ck_assert_int_gt(hlen, 0);
	ck_assert_mem_eq(re, fr.b, (size_t)hlen);

	/* any other checksum that does not sum to -0 stays a drop */
	put16(IP4(&fr) + 10, 0xfffe);
	ck_assert_int_eq(tw_parse_guarded(&p, fr.b, fr.caplen, fr.wire_len),
			 DROCE_WIRE_DROP_IPV4_CSUM);
}
END_TEST

/* ---- building ---- */

START_TEST(test_build_rejects_an_undefined_opcode)
{
	uint8_t buf[256], before[256];
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, 0x15, 0, 0, 2);
	memset(buf, 0xee, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	ck_assert_int_eq(droce_pkt_build_hdrs(&pkt, buf, sizeof(buf)), -EINVAL);
	ck_assert_mem_eq(buf, before, sizeof(buf));
}
END_TEST

START_TEST(test_build_into_a_short_buffer_fails_without_writing)	/* _i: variant */
{
	uint8_t buf[256], before[256];
	struct droce_pkt pkt;
	uint32_t need;

	tw_pkt_fill(&pkt, DROCE_OP_RC_COMPARE_SWAP, variants[_i], 0, 2);
	need = droce_pkt_hdrs_len(&pkt);
	memset(buf, 0xee, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	ck_assert_int_eq(droce_pkt_build_hdrs(&pkt, buf, need - 1), -ENOSPC);
	ck_assert_int_eq(droce_pkt_build_hdrs(&pkt, buf, 0), -ENOSPC);
	ck_assert_mem_eq(buf, before, sizeof(buf));
	ck_assert_int_eq(droce_pkt_build_hdrs(&pkt, buf, need), (int)need);
	ck_assert_mem_eq(buf + need, before + need, sizeof(buf) - need);
}
END_TEST

START_TEST(test_hdrs_len_counts_vlan_and_ip_family)
{
	struct droce_pkt pkt;

	tw_pkt_fill(&pkt, DROCE_OP_RC_SEND_ONLY, 0, 0, 1);
	ck_assert_uint_eq(droce_pkt_hdrs_len(&pkt), 14 + 20 + 8 + 12);
	pkt.flags = DROCE_PKT_F_VLAN;
	ck_assert_uint_eq(droce_pkt_hdrs_len(&pkt), 14 + 4 + 20 + 8 + 12);
	pkt.flags = DROCE_PKT_F_IPV6;
	ck_assert_uint_eq(droce_pkt_hdrs_len(&pkt), 14 + 40 + 8 + 12);
	pkt.flags = DROCE_PKT_F_VLAN | DROCE_PKT_F_IPV6;
	ck_assert_uint_eq(droce_pkt_hdrs_len(&pkt), 14 + 4 + 40 + 8 + 12);
	pkt.opcode = DROCE_OP_RC_WRITE_ONLY_IMM;
	ck_assert_uint_eq(droce_pkt_hdrs_len(&pkt), 14 + 4 + 40 + 8 + 32);
}
END_TEST

START_TEST(test_build_writes_lengths_and_a_valid_ipv4_checksum)	/* _i: variant */
{
	struct droce_pkt pkt;
	uint8_t f[TW_FRAME_MAX];
	uint32_t n, l3, udp;
	const uint8_t *ip;

	tw_pkt_fill(&pkt, DROCE_OP_RC_WRITE_ONLY_IMM, variants[_i], 13, 2);
	n = tw_frame_build(&pkt, f, sizeof(f));
	l3 = (variants[_i] & DROCE_PKT_F_VLAN) ? 18 : 14;
	ip = f + l3;
	ck_assert_uint_eq(pkt.l3_off, l3);
	udp = l3 + ((variants[_i] & DROCE_PKT_F_IPV6) ? 40 : 20);
	ck_assert_uint_eq(pkt.bth_off, udp + 8);
	ck_assert_uint_eq(pkt.payload_off, udp + 8 + 32);
	ck_assert_uint_eq(n, pkt.payload_off + 13 + 3 + 4);
	ck_assert_uint_eq(get16(f + udp + 4), n - udp);
	ck_assert_uint_eq(get16(f + udp + 2), 4791);
	if (variants[_i] & DROCE_PKT_F_VLAN) {
		ck_assert_uint_eq(get16(f + 12), 0x8100);
		ck_assert_uint_eq(get16(f + 14), pkt.vlan_tci);
	}
	if (variants[_i] & DROCE_PKT_F_IPV6) {
		ck_assert_uint_eq(get16(f + l3 - 2), 0x86dd);
		ck_assert_uint_eq(ip[0] >> 4, 6);
		ck_assert_uint_eq(get16(ip + 4), n - l3 - 40);
		ck_assert_uint_eq(ip[6], 17);
	} else {
		ck_assert_uint_eq(get16(f + l3 - 2), 0x0800);
		ck_assert_uint_eq(ip[0], 0x45);
		ck_assert_uint_eq(get16(ip + 2), n - l3);
		ck_assert_uint_eq(ip[9], 17);
		ck_assert_uint_eq(get16(ip + 10), tw_ipv4_csum(ip));
	}
}
END_TEST

TCase *
test_wire_parse_tcase(void)
{
	TCase *tc = tcase_create("parse");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_build_then_parse_round_trips_every_field,
			    0, (int)tw_opcode_count);
	tcase_add_test(tc, test_bth_words_agree_with_the_accessors);
	tcase_add_test(tc, test_template_builds_what_the_builder_builds);
	tcase_add_test(tc, test_template_fast_path_builds_what_the_builder_builds);
	tcase_add_test(tc, test_parse_then_build_reproduces_captured_frames_byte_for_byte);
	tcase_add_loop_test(tc, test_parse_then_build_reproduces_built_frames_byte_for_byte,
			    0, (int)tw_opcode_count);
	tcase_add_test(tc, test_parse_decodes_a_captured_ack);
	tcase_add_test(tc, test_parse_decodes_a_captured_ud_send);
	tcase_add_test(tc, test_parse_decodes_an_ipv6_frame);
	tcase_add_loop_test(tc, test_truncated_frame_is_rejected_at_every_length,
			    0, TRUNCATION_FRAMES);
	tcase_add_loop_test(tc, test_snap_truncated_capture_keeps_headers_and_sets_truncated,
			    0, TRUNCATION_FRAMES);
	tcase_add_test(tc, test_parse_decodes_a_captured_snap_truncated_write);
	tcase_add_test(tc, test_ethernet_trailer_after_the_icrc_is_ignored);
	tcase_add_test(tc, test_caplen_beyond_wire_len_is_clamped);
	tcase_add_loop_test(tc, test_crafted_frame_is_dropped_for_its_defect,
			    0, DROCE_DIM(drop_cases));
	tcase_add_test(tc, test_every_drop_reason_is_provoked_by_a_crafted_frame);
	tcase_add_test(tc, test_only_non_rocev2_frames_are_foreign);
	tcase_add_test(tc, test_drop_reasons_have_names_and_descriptions);
	tcase_add_test(tc, test_ipv4_df_and_reserved_flag_are_not_fragments);
	tcase_add_test(tc, test_nonzero_udp_checksum_is_carried_not_checked);
	tcase_add_test(tc, test_ipv4_checksum_minus_zero_is_accepted_and_rebuilt);
	tcase_add_test(tc, test_build_rejects_an_undefined_opcode);
	tcase_add_loop_test(tc, test_build_into_a_short_buffer_fails_without_writing,
			    0, DROCE_DIM(variants));
	tcase_add_test(tc, test_hdrs_len_counts_vlan_and_ip_family);
	tcase_add_loop_test(tc, test_build_writes_lengths_and_a_valid_ipv4_checksum,
			    0, DROCE_DIM(variants));
	return tc;
}
