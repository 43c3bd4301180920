/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_cm_mad.h: the CM MAD codec. Every field is described here a second
 * time, independently of the header's tables, by its place in IBA's message
 * tables (CM data byte offset, i.e. from MAD byte 24, and bit, and width),
 * the "Byte[Bit]" notation Linux's ibta_vol1_c12.h uses too. Accessors must
 * round-trip at field boundaries without touching their neighbours; the
 * encoder must write exactly the named bits (reserved ones stay zero); the
 * parser must ignore reserved bits, refuse every short or long buffer and
 * each malformed header, and decode the real MADs of an rxe rping session.
 */

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "bitfield_check.h"
#include "cm_golden.h"
#include "droce_cm_mad.h"
#include "test_cm.h"

/* Scalar fields: F(msg, name, byte, bit, width, parameter bits); byte from CM data start. */
#define CM_FIELDS(F) \
	F(req, local_comm_id,                0, 0, 32, 32) \
	F(req, vendor_id,                    5, 0, 24, 32) \
	F(req, service_id,                   8, 0, 64, 64) \
	F(req, local_ca_guid,               16, 0, 64, 64) \
	F(req, local_qkey,                  28, 0, 32, 32) \
	F(req, local_qpn,                   32, 0, 24, 32) \
	F(req, responder_resources,         35, 0,  8, 32) \
	F(req, local_eecn,                  36, 0, 24, 32) \
	F(req, initiator_depth,             39, 0,  8, 32) \
	F(req, remote_eecn,                 40, 0, 24, 32) \
	F(req, remote_cm_response_timeout,  43, 0,  5, 32) \
	F(req, transport_type,              43, 5,  2, 32) \
	F(req, flow_control,                43, 7,  1, 32) \
	F(req, starting_psn,                44, 0, 24, 32) \
	F(req, local_cm_response_timeout,   47, 0,  5, 32) \
	F(req, retry_count,                 47, 5,  3, 32) \
	F(req, pkey,                        48, 0, 16, 16) \
	F(req, path_mtu,                    50, 0,  4,  8) \
	F(req, rdc_exists,                  50, 4,  1,  8) \
	F(req, rnr_retry_count,             50, 5,  3,  8) \
	F(req, max_cm_retries,              51, 0,  4,  8) \
	F(req, srq,                         51, 4,  1,  8) \
	F(req, ext_transport_type,          51, 5,  3,  8) \
	F(req, primary_local_lid,           52, 0, 16, 16) \
	F(req, primary_remote_lid,          54, 0, 16, 16) \
	F(req, primary_flow_label,          88, 0, 20, 32) \
	F(req, primary_packet_rate,         91, 2,  6, 32) \
	F(req, primary_traffic_class,       92, 0,  8,  8) \
	F(req, primary_hop_limit,           93, 0,  8,  8) \
	F(req, primary_sl,                  94, 0,  4,  8) \
	F(req, primary_subnet_local,        94, 4,  1,  8) \
	F(req, primary_local_ack_timeout,   95, 0,  5,  8) \
	F(req, alternate_local_lid,         96, 0, 16, 16) \
	F(req, alternate_remote_lid,        98, 0, 16, 16) \
	F(req, alternate_flow_label,       132, 0, 20, 32) \
	F(req, alternate_packet_rate,      135, 2,  6, 32) \
	F(req, alternate_traffic_class,    136, 0,  8,  8) \
	F(req, alternate_hop_limit,        137, 0,  8,  8) \
	F(req, alternate_sl,               138, 0,  4,  8) \
	F(req, alternate_subnet_local,     138, 4,  1,  8) \
	F(req, alternate_local_ack_timeout, 139, 0, 5,  8) \
	F(req, sap_supported,              139, 5,  1,  8) \
	F(mra, local_comm_id,                0, 0, 32, 32) \
	F(mra, remote_comm_id,               4, 0, 32, 32) \
	F(mra, msg_mraed,                    8, 0,  2,  8) \
	F(mra, service_timeout,              9, 0,  5,  8) \
	F(rej, local_comm_id,                0, 0, 32, 32) \
	F(rej, remote_comm_id,               4, 0, 32, 32) \
	F(rej, msg_rejected,                 8, 0,  2,  8) \
	F(rej, ari_len,                      9, 0,  7,  8) \
	F(rej, reason,                      10, 0, 16, 16) \
	F(rep, local_comm_id,                0, 0, 32, 32) \
	F(rep, remote_comm_id,               4, 0, 32, 32) \
	F(rep, local_qkey,                   8, 0, 32, 32) \
	F(rep, local_qpn,                   12, 0, 24, 32) \
	F(rep, vendor_id_h,                 15, 0,  8, 32) \
	F(rep, local_eecn,                  16, 0, 24, 32) \
	F(rep, vendor_id_m,                 19, 0,  8, 32) \
	F(rep, starting_psn,                20, 0, 24, 32) \
	F(rep, vendor_id_l,                 23, 0,  8, 32) \
	F(rep, responder_resources,         24, 0,  8,  8) \
	F(rep, initiator_depth,             25, 0,  8,  8) \
	F(rep, target_ack_delay,            26, 0,  5,  8) \
	F(rep, failover_accepted,           26, 5,  2,  8) \
	F(rep, flow_control,                26, 7,  1,  8) \
	F(rep, rnr_retry_count,             27, 0,  3,  8) \
	F(rep, srq,                         27, 3,  1,  8) \
	F(rep, local_ca_guid,               28, 0, 64, 64) \
	F(rtu, local_comm_id,                0, 0, 32, 32) \
	F(rtu, remote_comm_id,               4, 0, 32, 32) \
	F(dreq, local_comm_id,               0, 0, 32, 32) \
	F(dreq, remote_comm_id,              4, 0, 32, 32) \
	F(dreq, remote_qpn,                  8, 0, 24, 32) \
	F(drep, local_comm_id,               0, 0, 32, 32) \
	F(drep, remote_comm_id,              4, 0, 32, 32) \
	F(sidr_req, request_id,              0, 0, 32, 32) \
	F(sidr_req, pkey,                    4, 0, 16, 16) \
	F(sidr_req, service_id,              8, 0, 64, 64) \
	F(sidr_rep, request_id,              0, 0, 32, 32) \
	F(sidr_rep, status,                  4, 0,  8,  8) \
	F(sidr_rep, info_len,                5, 0,  8,  8) \
	F(sidr_rep, qpn,                     8, 0, 24, 32) \
	F(sidr_rep, service_id,             12, 0, 64, 64) \
	F(sidr_rep, qkey,                   20, 0, 32, 32)

/* The common MAD header: H(name, byte, bit, width, parameter bits); byte from MAD start. */
#define HDR_FIELDS(H) \
	H(base_version,    0, 0,  8,  8) \
	H(mgmt_class,      1, 0,  8,  8) \
	H(class_version,   2, 0,  8,  8) \
	H(method,          3, 0,  8,  8) \
	H(status,          4, 0, 16, 16) \
	H(class_specific,  6, 0, 16, 16) \
	H(tid,             8, 0, 64, 64) \
	H(attr_id,        16, 0, 16, 16) \
	H(attr_mod,       20, 0, 32, 32)

/* Byte arrays: B(msg, name, byte, length); byte from CM data start. */
#define CM_BYTES(B) \
	B(req, primary_local_gid,     56,  16) \
	B(req, primary_remote_gid,    72,  16) \
	B(req, alternate_local_gid,  100,  16) \
	B(req, alternate_remote_gid, 116,  16) \
	B(req, private_data,         140,  92) \
	B(mra, private_data,          10, 222) \
	B(rej, ari,                   12,  72) \
	B(rej, private_data,          84, 148) \
	B(rep, private_data,          36, 196) \
	B(rtu, private_data,           8, 224) \
	B(dreq, private_data,         12, 220) \
	B(drep, private_data,          8, 224) \
	B(sidr_req, private_data,     16, 216) \
	B(sidr_rep, info,             24,  72) \
	B(sidr_rep, private_data,     96, 136)

#define CM_OFF(byte) (DROCE_MAD_HDR_BYTES + (byte))

/* uint64_t wrappers so that one table drives every accessor pair */
#define F(msg, name, byte, bit, width, pbits) \
	static void set_##msg##_##name(void *m, uint64_t v) { droce_cm_##msg##_set_##name(m, v); } \
	static uint64_t get_##msg##_##name(const void *m) { return droce_cm_##msg##_##name(m); }
CM_FIELDS(F)
#undef F
#define H(name, byte, bit, width, pbits) \
	static void set_hdr_##name(void *m, uint64_t v) { droce_cm_mad_hdr_set_##name(m, v); } \
	static uint64_t get_hdr_##name(const void *m) { return droce_cm_mad_hdr_##name(m); }
HDR_FIELDS(H)
#undef H


static const struct bitfield_case fields[] = {
#define H(name, byte, bit, width, pb) \
	{ "hdr." #name, DROCE_MAD_BYTES, (byte) * 8 + (bit), width, pb, \
	  set_hdr_##name, get_hdr_##name },
	HDR_FIELDS(H)
#undef H
#define F(msg, name, byte, bit, width, pb) \
	{ #msg "." #name, DROCE_MAD_BYTES, CM_OFF(byte) * 8 + (bit), width, pb, \
	  set_##msg##_##name, get_##msg##_##name },
	CM_FIELDS(F)
#undef F
};

struct bytes_field {
	const char *name;
	unsigned int off;		/* from MAD byte 0 */
	unsigned int len;
	const uint8_t *(*get)(const void *m);
	void (*set)(void *m, const uint8_t *v);
};

#define B(msg, name, byte, len) \
	static const uint8_t *bget_##msg##_##name(const void *m) { return droce_cm_##msg##_##name(m); } \
	static void bset_##msg##_##name(void *m, const uint8_t *v) { droce_cm_##msg##_set_##name(m, v); }
CM_BYTES(B)
#undef B

static const struct bytes_field bytes_fields[] = {
#define B(msg, name, byte, len) \
	{ #msg "." #name, CM_OFF(byte), len, bget_##msg##_##name, bset_##msg##_##name },
	CM_BYTES(B)
#undef B
};

/* The message each field of the test tables belongs to, by its name prefix. */
static enum droce_cm_msg_type
type_of_name(const char *name)
{
	static const struct { const char *pfx; enum droce_cm_msg_type t; } map[] = {
		{ "req.", DROCE_CM_MSG_REQ }, { "mra.", DROCE_CM_MSG_MRA },
		{ "rej.", DROCE_CM_MSG_REJ }, { "rep.", DROCE_CM_MSG_REP },
		{ "rtu.", DROCE_CM_MSG_RTU }, { "dreq.", DROCE_CM_MSG_DREQ },
		{ "drep.", DROCE_CM_MSG_DREP }, { "sidr_req.", DROCE_CM_MSG_SIDR_REQ },
		{ "sidr_rep.", DROCE_CM_MSG_SIDR_REP },
	};
	unsigned int i;

	for (i = 0; i < DROCE_DIM(map); i++)
		if (strncmp(name, map[i].pfx, strlen(map[i].pfx)) == 0)
			return map[i].t;
	return DROCE_CM_MSG_COUNT;	/* the header: part of every message */
}

START_TEST(test_accessor_round_trips_and_leaves_neighbours_untouched)	/* _i: field */
{
	bitfield_check_round_trips(&fields[_i]);
}
END_TEST

START_TEST(test_accessor_masks_values_wider_than_the_field)	/* _i: field */
{
	bitfield_check_masks(&fields[_i]);
}
END_TEST

START_TEST(test_byte_fields_sit_at_their_offsets)	/* _i: bytes field */
{
	const struct bytes_field *f = &bytes_fields[_i];
	alignas(8) uint8_t raw[2 + DROCE_MAD_BYTES];
	uint8_t want[DROCE_MAD_BYTES], v[DROCE_MAD_BYTES];
	uint8_t *m = raw + 2;
	unsigned int i;

	ck_assert_uint_le(f->off + f->len, DROCE_MAD_BYTES);
	for (i = 0; i < f->len; i++)
		v[i] = (uint8_t)(i * 37 + 1);
	memset(raw, 0xee, sizeof(raw));
	memset(want, 0xee, sizeof(want));
	memcpy(want + f->off, v, f->len);
	f->set(m, v);
	ck_assert_msg(memcmp(m, want, DROCE_MAD_BYTES) == 0, "%s: wrong place", f->name);
	ck_assert_msg(f->get(m) == m + f->off, "%s: getter points elsewhere", f->name);
}
END_TEST

/* The bits of message @t the test tables name, as a 256-byte mask. */
static void
named_bits(enum droce_cm_msg_type t, uint8_t mask[DROCE_MAD_BYTES])
{
	unsigned int i;

	memset(mask, 0, DROCE_MAD_BYTES);
	for (i = 0; i < DROCE_DIM(fields); i++) {
		enum droce_cm_msg_type ft = type_of_name(fields[i].name);

		if (ft == t || ft == DROCE_CM_MSG_COUNT)
			bitfield_put(mask, fields[i].start, fields[i].width,
				     bitfield_ones(fields[i].width));
	}
	for (i = 0; i < DROCE_DIM(bytes_fields); i++)
		if (type_of_name(bytes_fields[i].name) == t)
			memset(mask + bytes_fields[i].off, 0xff, bytes_fields[i].len);
}

START_TEST(test_encoder_writes_exactly_the_named_bits)	/* _i: message type */
{
	struct droce_cm_msg msg;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES], want[DROCE_MAD_BYTES];

	/* every field of the decoded form at all ones: reserved bits must stay zero */
	memset(&msg, 0xff, sizeof(msg));
	msg.type = _i;
	ck_assert_int_eq(droce_cm_mad_build(&msg, mad, sizeof(mad)), DROCE_MAD_BYTES);
	named_bits(_i, want);
	ck_assert_msg(memcmp(mad, want, sizeof(mad)) == 0, "%s: reserved bits written",
		      droce_cm_msg_name(_i));
}
END_TEST

START_TEST(test_parser_ignores_reserved_bits)	/* _i: message type */
{
	struct droce_cm_msg msg;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES], out[DROCE_MAD_BYTES], want[DROCE_MAD_BYTES];
	struct droce_cm_mad_hdr *h = (void *)mad;

	memset(mad, 0xff, sizeof(mad));
	droce_cm_mad_hdr_set_base_version(h, 1);
	droce_cm_mad_hdr_set_mgmt_class(h, 0x07);
	droce_cm_mad_hdr_set_class_version(h, 2);
	droce_cm_mad_hdr_set_method(h, 0x03);
	droce_cm_mad_hdr_set_attr_id(h, droce_cm_msg_desc[_i].attr_id);
	/* the enumerations the parser reads must hold defined values */
	if (_i == DROCE_CM_MSG_MRA)
		droce_cm_mra_set_msg_mraed((void *)mad, DROCE_CM_REF_OTHER);
	if (_i == DROCE_CM_MSG_REJ) {
		droce_cm_rej_set_msg_rejected((void *)mad, DROCE_CM_REF_OTHER);
		droce_cm_rej_set_ari_len((void *)mad, DROCE_CM_ARI_BYTES);
	}
	if (_i == DROCE_CM_MSG_SIDR_REP)
		droce_cm_sidr_rep_set_info_len((void *)mad, DROCE_CM_ARI_BYTES);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &msg), DROCE_CM_MAD_OK);
	ck_assert_int_eq(msg.type, _i);
	ck_assert_int_eq(droce_cm_mad_build(&msg, out, sizeof(out)), DROCE_MAD_BYTES);
	/* the rebuilt MAD is the input with the reserved bits cleared */
	named_bits(_i, want);
	for (unsigned int b = 0; b < DROCE_MAD_BYTES; b++)
		want[b] &= mad[b];
	ck_assert_msg(memcmp(out, want, sizeof(out)) == 0, "%s", droce_cm_msg_name(_i));
}
END_TEST

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A valid MAD of type @t with random contents. */
static void
random_mad(enum droce_cm_msg_type t, uint64_t *seed, uint8_t mad[DROCE_MAD_BYTES])
{
	struct droce_cm_mad_hdr *h = (void *)mad;
	unsigned int i;

	for (i = 0; i < DROCE_MAD_BYTES; i++)
		mad[i] = (uint8_t)rnd(seed);
	droce_cm_mad_hdr_set_base_version(h, 1);
	droce_cm_mad_hdr_set_mgmt_class(h, 0x07);
	droce_cm_mad_hdr_set_class_version(h, 2);
	droce_cm_mad_hdr_set_method(h, 0x03);
	droce_cm_mad_hdr_set_attr_id(h, droce_cm_msg_desc[t].attr_id);
	if (t == DROCE_CM_MSG_MRA)
		droce_cm_mra_set_msg_mraed((void *)mad, rnd(seed) % 3);
	if (t == DROCE_CM_MSG_REJ) {
		droce_cm_rej_set_msg_rejected((void *)mad, rnd(seed) % 3);
		droce_cm_rej_set_ari_len((void *)mad, rnd(seed) % 73);
	}
	if (t == DROCE_CM_MSG_SIDR_REP)
		droce_cm_sidr_rep_set_info_len((void *)mad, rnd(seed) % 73);
}

START_TEST(test_decode_encode_round_trip_every_message)	/* _i: message type */
{
	uint64_t seed = 0x9e3779b97f4a7c15ull + _i;
	unsigned int n;

	for (n = 0; n < 200; n++) {
		alignas(8) uint8_t mad[DROCE_MAD_BYTES], out[DROCE_MAD_BYTES], again[DROCE_MAD_BYTES];
		struct droce_cm_msg a, b;

		random_mad(_i, &seed, mad);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &a), DROCE_CM_MAD_OK);
		ck_assert_int_eq(droce_cm_mad_build(&a, out, sizeof(out)), DROCE_MAD_BYTES);
		ck_assert_int_eq(droce_cm_mad_parse(out, sizeof(out), &b), DROCE_CM_MAD_OK);
		ck_assert_msg(memcmp(&a, &b, sizeof(a)) == 0, "%s: decode(encode(x)) != x",
			      droce_cm_msg_name(_i));
		ck_assert_int_eq(droce_cm_mad_build(&b, again, sizeof(again)), DROCE_MAD_BYTES);
		ck_assert_msg(memcmp(out, again, sizeof(out)) == 0, "%s: encoding not stable",
			      droce_cm_msg_name(_i));
	}
}
END_TEST

START_TEST(test_parse_and_build_take_buffers_of_any_alignment)
{
	alignas(8) uint8_t raw[DROCE_MAD_BYTES + 8], out[DROCE_MAD_BYTES + 8];
	struct droce_cm_msg m;
	unsigned int off;

	for (off = 0; off < 8; off++) {
		memset(raw, 0, sizeof(raw));
		memcpy(raw + off, golden_rep, sizeof(golden_rep));
		ck_assert_int_eq(droce_cm_mad_parse(raw + off, DROCE_MAD_BYTES, &m), DROCE_CM_MAD_OK);
		ck_assert_uint_eq(m.rep.local_ca_guid, 0x50540afffe4d0001ull);
		ck_assert_int_eq(droce_cm_mad_build(&m, out + off, DROCE_MAD_BYTES), DROCE_MAD_BYTES);
		ck_assert_mem_eq(out + off, raw + off, DROCE_MAD_BYTES);
	}
}
END_TEST

START_TEST(test_build_refuses_small_buffers_and_unknown_types)
{
	struct droce_cm_msg msg;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	memset(&msg, 0, sizeof(msg));
	msg.type = DROCE_CM_MSG_RTU;
	ck_assert_int_eq(droce_cm_mad_build(&msg, mad, DROCE_MAD_BYTES - 1), -ENOSPC);
	msg.type = DROCE_CM_MSG_COUNT;
	ck_assert_int_eq(droce_cm_mad_build(&msg, mad, sizeof(mad)), -EINVAL);
}
END_TEST

/* A golden MAD, zero-extended to 256 bytes. */
static void
golden(const uint8_t *g, size_t len, uint8_t mad[DROCE_MAD_BYTES])
{
	memset(mad, 0, DROCE_MAD_BYTES);
	memcpy(mad, g, len);
}

static void
check_golden_hdr(const struct droce_cm_msg *m, uint16_t attr)
{
	ck_assert_uint_eq(m->hdr.base_version, 1);
	ck_assert_uint_eq(m->hdr.mgmt_class, 0x07);
	ck_assert_uint_eq(m->hdr.class_version, 2);
	ck_assert_uint_eq(m->hdr.method, 0x03);
	ck_assert_uint_eq(m->hdr.status, 0);
	ck_assert_uint_eq(m->hdr.class_specific, 0);
	/* Linux: the active side's hi_tid << 32 | its local comm ID as stored */
	ck_assert_uint_eq(m->hdr.tid, 0x0000000208b019b4ull);
	ck_assert_uint_eq(m->hdr.attr_id, attr);
	ck_assert_uint_eq(m->hdr.attr_mod, 0);
}

/* Every byte of the golden MAD is what the encoder writes back. */
static void
check_rebuilds(const struct droce_cm_msg *m, const uint8_t mad[DROCE_MAD_BYTES])
{
	uint8_t out[DROCE_MAD_BYTES];

	ck_assert_int_eq(droce_cm_mad_build(m, out, sizeof(out)), DROCE_MAD_BYTES);
	ck_assert_msg(memcmp(out, mad, sizeof(out)) == 0, "%s: rebuilt MAD differs",
		      droce_cm_msg_name(m->type));
}

/*
 * ECE where Linux's CM puts it: the REQ's Vendor ID at MAD bytes 29-31, the
 * REP's in the reserved bytes 39 (high), 43, 47 (low), the options in the
 * header's AttributeModifier (20-23); decoded back, and zero for others.
 */
START_TEST(test_ece_is_encoded_and_decoded_in_req_and_rep)
{
	static const struct droce_cm_ece ece = { .vendor_id = 0x12c9b3, .options = 0xa1b2c3d4 };
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	struct droce_cm_msg m, d;
	struct droce_cm_ece got;

	memset(&m, 0, sizeof(m));
	m.type = DROCE_CM_MSG_REQ;
	droce_cm_mad_hdr_init(&m.hdr, DROCE_CM_MSG_REQ, 7);
	m.req.local_comm_id = 0x11223344;
	m.req.service_id = 0x1061c06;
	m.req.path_mtu = 3;
	droce_cm_msg_set_ece(&m, &ece);
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_uint_eq(mad[28], 0);
	ck_assert_uint_eq(mad[29], 0x12);
	ck_assert_uint_eq(mad[30], 0xc9);
	ck_assert_uint_eq(mad[31], 0xb3);
	ck_assert_uint_eq(mad[20], 0xa1);
	ck_assert_uint_eq(mad[23], 0xd4);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &d), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(d.req.vendor_id, 0x12c9b3);
	ck_assert_uint_eq(d.req.local_comm_id, 0x11223344);
	ck_assert_uint_eq(d.req.service_id, 0x1061c06);
	droce_cm_msg_ece(&d, &got);
	ck_assert_uint_eq(got.vendor_id, ece.vendor_id);
	ck_assert_uint_eq(got.options, ece.options);

	memset(&m, 0, sizeof(m));
	m.type = DROCE_CM_MSG_REP;
	droce_cm_mad_hdr_init(&m.hdr, DROCE_CM_MSG_REP, 7);
	m.rep.local_qpn = 0xffffff;
	m.rep.local_eecn = 0xffffff;
	m.rep.starting_psn = 0xffffff;
	droce_cm_msg_set_ece(&m, &ece);
	ck_assert_int_eq(droce_cm_mad_build(&m, mad, sizeof(mad)), DROCE_MAD_BYTES);
	ck_assert_uint_eq(mad[39], 0x12);
	ck_assert_uint_eq(mad[43], 0xc9);
	ck_assert_uint_eq(mad[47], 0xb3);
	ck_assert_uint_eq(mad[36], 0xff);	/* QPN, EECN and PSN untouched */
	ck_assert_uint_eq(mad[38], 0xff);
	ck_assert_uint_eq(mad[46], 0xff);
	ck_assert_uint_eq(mad[21], 0xb2);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &d), DROCE_CM_MAD_OK);
	ck_assert_uint_eq(d.rep.local_qpn, 0xffffff);
	ck_assert_uint_eq(d.rep.starting_psn, 0xffffff);
	droce_cm_msg_ece(&d, &got);
	ck_assert_uint_eq(got.vendor_id, ece.vendor_id);
	ck_assert_uint_eq(got.options, ece.options);

	/* an RTU carries none, whatever its header's modifier */
	memset(&m, 0, sizeof(m));
	m.type = DROCE_CM_MSG_RTU;
	m.hdr.attr_mod = 5;
	droce_cm_msg_ece(&m, &got);
	ck_assert_uint_eq(got.vendor_id, 0);
	ck_assert_uint_eq(got.options, 0);
}
END_TEST

START_TEST(test_golden_req_from_rxe_rping)
{
	static const uint8_t gid_client[16] = { [10] = 0xff, 0xff, 10, 77, 0, 2 };
	static const uint8_t gid_server[16] = { [10] = 0xff, 0xff, 10, 77, 0, 1 };
	static const uint8_t zero[16];
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	struct droce_cm_msg m;
	const struct droce_cm_req_info *r = &m.req;

	golden(golden_req, sizeof(golden_req), mad);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_MAD_OK);
	ck_assert_int_eq(m.type, DROCE_CM_MSG_REQ);
	check_golden_hdr(&m, 0x0010);
	ck_assert_uint_eq(r->local_comm_id, 0xb419b008);
	ck_assert_uint_eq(r->service_id, 0x0000000001061c06ull);	/* RDMA_PS_TCP, port 7174 */
	ck_assert_uint_eq(r->local_ca_guid, 0x50540afffe4d0002ull);	/* EUI-64 of 52:54:0a:4d:00:02 */
	ck_assert_uint_eq(r->local_qkey, 0);
	ck_assert_uint_eq(r->local_qpn, 0x1b);
	ck_assert_uint_eq(r->responder_resources, 1);
	ck_assert_uint_eq(r->local_eecn, 0);
	ck_assert_uint_eq(r->initiator_depth, 1);
	ck_assert_uint_eq(r->remote_eecn, 0);
	ck_assert_uint_eq(r->remote_cm_response_timeout, 20);	/* CMA_CM_RESPONSE_TIMEOUT */
	ck_assert_uint_eq(r->transport_type, DROCE_CM_TRANSPORT_RC);
	ck_assert_uint_eq(r->flow_control, 0);
	ck_assert_uint_eq(r->starting_psn, 0x45c325);
	ck_assert_uint_eq(r->local_cm_response_timeout, 20);
	ck_assert_uint_eq(r->retry_count, 7);
	ck_assert_uint_eq(r->pkey, 0xffff);
	ck_assert_uint_eq(r->path_mtu, 3);			/* IBV_MTU_1024 */
	ck_assert_uint_eq(r->rdc_exists, 0);
	ck_assert_uint_eq(r->rnr_retry_count, 7);
	ck_assert_uint_eq(r->max_cm_retries, 15);		/* CMA_MAX_CM_RETRIES */
	ck_assert_uint_eq(r->srq, 0);
	ck_assert_uint_eq(r->ext_transport_type, 0);
	ck_assert_uint_eq(r->primary_local_lid, 0xffff);	/* permissive: RoCE has no LIDs */
	ck_assert_uint_eq(r->primary_remote_lid, 0xffff);
	ck_assert_mem_eq(r->primary_local_gid, gid_client, 16);
	ck_assert_mem_eq(r->primary_remote_gid, gid_server, 16);
	/* tshark 4.0 shows 0x00714 here: it reads 24 bits, not the word's top 20 */
	ck_assert_uint_eq(r->primary_flow_label, 0x71456);
	ck_assert_uint_eq(r->primary_packet_rate, 0);
	ck_assert_uint_eq(r->primary_traffic_class, 0);
	ck_assert_uint_eq(r->primary_hop_limit, 64);
	ck_assert_uint_eq(r->primary_sl, 0);
	ck_assert_uint_eq(r->primary_subnet_local, 0);
	ck_assert_uint_eq(r->primary_local_ack_timeout, 19);
	ck_assert_uint_eq(r->alternate_local_lid, 0);
	ck_assert_uint_eq(r->alternate_remote_lid, 0);
	ck_assert_mem_eq(r->alternate_local_gid, zero, 16);
	ck_assert_mem_eq(r->alternate_remote_gid, zero, 16);
	ck_assert_uint_eq(r->alternate_flow_label, 0);
	ck_assert_uint_eq(r->alternate_local_ack_timeout, 0);
	ck_assert_uint_eq(r->sap_supported, 0);
	/* private data: the cma header (test_cm_ip.c decodes it), then zeros */
	ck_assert_uint_eq(r->private_data[0], 0x00);
	ck_assert_uint_eq(r->private_data[1], 0x40);
	check_rebuilds(&m, mad);
}
END_TEST

START_TEST(test_golden_rep_from_rxe_rping)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES], zero[DROCE_CM_REP_PDATA_BYTES] = { 0 };
	struct droce_cm_msg m;
	const struct droce_cm_rep_info *r = &m.rep;

	golden(golden_rep, sizeof(golden_rep), mad);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_MAD_OK);
	ck_assert_int_eq(m.type, DROCE_CM_MSG_REP);
	check_golden_hdr(&m, 0x0013);	/* a REP answers with the REQ's TID */
	ck_assert_uint_eq(r->local_comm_id, 0x7575ddf8);
	ck_assert_uint_eq(r->remote_comm_id, 0xb419b008);
	ck_assert_uint_eq(r->local_qkey, 0);
	ck_assert_uint_eq(r->local_qpn, 0x1b);
	ck_assert_uint_eq(r->local_eecn, 0);
	ck_assert_uint_eq(r->starting_psn, 0xc66f0f);
	ck_assert_uint_eq(r->responder_resources, 1);
	ck_assert_uint_eq(r->initiator_depth, 1);
	ck_assert_uint_eq(r->target_ack_delay, 15);
	ck_assert_uint_eq(r->failover_accepted, 0);
	ck_assert_uint_eq(r->flow_control, 0);
	ck_assert_uint_eq(r->rnr_retry_count, 7);
	ck_assert_uint_eq(r->srq, 0);
	ck_assert_uint_eq(r->local_ca_guid, 0x50540afffe4d0001ull);
	ck_assert_mem_eq(r->private_data, zero, sizeof(zero));
	check_rebuilds(&m, mad);
}
END_TEST

START_TEST(test_golden_rtu_dreq_drep_from_rxe_rping)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	struct droce_cm_msg m;

	golden(golden_rtu, sizeof(golden_rtu), mad);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_MAD_OK);
	ck_assert_int_eq(m.type, DROCE_CM_MSG_RTU);
	check_golden_hdr(&m, 0x0014);
	ck_assert_uint_eq(m.rtu.local_comm_id, 0xb419b008);
	ck_assert_uint_eq(m.rtu.remote_comm_id, 0x7575ddf8);
	check_rebuilds(&m, mad);

	golden(golden_dreq, sizeof(golden_dreq), mad);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_MAD_OK);
	ck_assert_int_eq(m.type, DROCE_CM_MSG_DREQ);
	check_golden_hdr(&m, 0x0015);
	ck_assert_uint_eq(m.dreq.local_comm_id, 0xb419b008);	/* the client disconnects */
	ck_assert_uint_eq(m.dreq.remote_comm_id, 0x7575ddf8);
	ck_assert_uint_eq(m.dreq.remote_qpn, 0x1b);
	check_rebuilds(&m, mad);

	golden(golden_drep, sizeof(golden_drep), mad);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_MAD_OK);
	ck_assert_int_eq(m.type, DROCE_CM_MSG_DREP);
	check_golden_hdr(&m, 0x0016);
	ck_assert_uint_eq(m.drep.local_comm_id, 0x7575ddf8);
	ck_assert_uint_eq(m.drep.remote_comm_id, 0xb419b008);
	check_rebuilds(&m, mad);
}
END_TEST

START_TEST(test_parse_refuses_every_short_and_long_length)	/* _i: message type */
{
	uint64_t seed = 42 + _i;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES + 64];
	struct droce_cm_msg m;
	uint32_t len;

	random_mad(_i, &seed, mad);
	memset(mad + DROCE_MAD_BYTES, 0, 64);
	for (len = 0; len < DROCE_MAD_BYTES; len++) {
		/* a copy of exactly len bytes: ASan sees any read past it */
		uint8_t *cut = malloc(len ? len : 1);

		memcpy(cut, mad, len);
		ck_assert_int_eq(droce_cm_mad_parse(cut, len, &m), DROCE_CM_DROP_TRUNC);
		free(cut);
	}
	ck_assert_int_eq(droce_cm_mad_parse(mad, DROCE_MAD_BYTES, &m), DROCE_CM_MAD_OK);
	for (len = DROCE_MAD_BYTES + 1; len <= sizeof(mad); len++)
		ck_assert_int_eq(droce_cm_mad_parse(mad, len, &m), DROCE_CM_DROP_LONG);
}
END_TEST

START_TEST(test_parse_refuses_bad_headers)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES], bad[DROCE_MAD_BYTES];
	struct droce_cm_mad_hdr *h = (void *)bad;
	struct droce_cm_msg m;
	unsigned int v;

	golden(golden_rtu, sizeof(golden_rtu), mad);
	for (v = 0; v < 256; v++) {
		memcpy(bad, mad, sizeof(bad));
		droce_cm_mad_hdr_set_base_version(h, v);
		ck_assert_int_eq(droce_cm_mad_parse(bad, sizeof(bad), &m),
				 v == 1 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_BASE_VERSION);
		memcpy(bad, mad, sizeof(bad));
		droce_cm_mad_hdr_set_mgmt_class(h, v);
		ck_assert_int_eq(droce_cm_mad_parse(bad, sizeof(bad), &m),
				 v == 7 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_MGMT_CLASS);
		memcpy(bad, mad, sizeof(bad));
		droce_cm_mad_hdr_set_class_version(h, v);
		ck_assert_int_eq(droce_cm_mad_parse(bad, sizeof(bad), &m),
				 v == 2 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_CLASS_VERSION);
		/* Get, Set, GetResp (0x81), ... : the CM only sends */
		memcpy(bad, mad, sizeof(bad));
		droce_cm_mad_hdr_set_method(h, v);
		ck_assert_int_eq(droce_cm_mad_parse(bad, sizeof(bad), &m),
				 v == 3 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_METHOD);
	}
	/* status, class-specific and attribute modifier are not the CM's business */
	memcpy(bad, mad, sizeof(bad));
	droce_cm_mad_hdr_set_status(h, 0xffff);
	droce_cm_mad_hdr_set_class_specific(h, 0xffff);
	droce_cm_mad_hdr_set_attr_mod(h, 0xffffffff);
	ck_assert_int_eq(droce_cm_mad_parse(bad, sizeof(bad), &m), DROCE_CM_MAD_OK);
}
END_TEST

START_TEST(test_parse_sorts_every_attribute_id)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	struct droce_cm_mad_hdr *h = (void *)mad;
	struct droce_cm_msg m;
	unsigned int attr;

	/* a header and an all-zero body: valid for every message */
	memset(mad, 0, sizeof(mad));
	memcpy(mad, golden_rtu, DROCE_MAD_HDR_BYTES);
	for (attr = 0; attr <= 0xffff; attr++) {
		enum droce_cm_drop want;

		droce_cm_mad_hdr_set_attr_id(h, attr);
		if (attr >= 0x0010 && attr <= 0x0018)
			want = DROCE_CM_MAD_OK;
		else if (attr == 0x0019 || attr == 0x001a)
			want = DROCE_CM_DROP_ATTR_REFUSED;	/* LAP, APR */
		else
			want = DROCE_CM_DROP_ATTR_UNKNOWN;	/* ClassPortInfo 0x0001 too */
		ck_assert_msg(droce_cm_mad_parse(mad, sizeof(mad), &m) == want, "attr %#x", attr);
		if (want == DROCE_CM_MAD_OK)
			ck_assert_uint_eq(droce_cm_msg_desc[m.type].attr_id, attr);
	}
}
END_TEST

START_TEST(test_parse_refuses_reserved_message_and_long_info)
{
	uint64_t seed = 7;
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	struct droce_cm_msg m;
	unsigned int v;

	random_mad(DROCE_CM_MSG_MRA, &seed, mad);
	droce_cm_mra_set_msg_mraed((void *)mad, 3);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_DROP_MSG_RESERVED);

	random_mad(DROCE_CM_MSG_REJ, &seed, mad);
	droce_cm_rej_set_msg_rejected((void *)mad, 3);
	ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m), DROCE_CM_DROP_MSG_RESERVED);
	droce_cm_rej_set_msg_rejected((void *)mad, 1);
	for (v = 0; v < 128; v++) {
		droce_cm_rej_set_ari_len((void *)mad, v);
		ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m),
				 v <= 72 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_INFO_LEN);
	}

	random_mad(DROCE_CM_MSG_SIDR_REP, &seed, mad);
	for (v = 0; v < 256; v++) {
		droce_cm_sidr_rep_set_info_len((void *)mad, v);
		ck_assert_int_eq(droce_cm_mad_parse(mad, sizeof(mad), &m),
				 v <= 72 ? DROCE_CM_MAD_OK : DROCE_CM_DROP_INFO_LEN);
	}
}
END_TEST

START_TEST(test_tables_pin_the_iba_numbers)
{
	static const struct { enum droce_cm_msg_type t; uint16_t attr, off, len; } want[] = {
		{ DROCE_CM_MSG_REQ,      0x0010, 164,  92 },
		{ DROCE_CM_MSG_MRA,      0x0011,  34, 222 },
		{ DROCE_CM_MSG_REJ,      0x0012, 108, 148 },
		{ DROCE_CM_MSG_REP,      0x0013,  60, 196 },
		{ DROCE_CM_MSG_RTU,      0x0014,  32, 224 },
		{ DROCE_CM_MSG_DREQ,     0x0015,  36, 220 },
		{ DROCE_CM_MSG_DREP,     0x0016,  32, 224 },
		{ DROCE_CM_MSG_SIDR_REQ, 0x0017,  40, 216 },
		{ DROCE_CM_MSG_SIDR_REP, 0x0018, 120, 136 },
	};
	enum droce_cm_msg_type t;
	unsigned int i, r;

	ck_assert_uint_eq(DROCE_DIM(want), DROCE_CM_MSG_COUNT);
	for (i = 0; i < DROCE_DIM(want); i++) {
		const struct droce_cm_msg_desc *d = &droce_cm_msg_desc[want[i].t];

		ck_assert_uint_eq(d->attr_id, want[i].attr);
		ck_assert_uint_eq(d->pdata_off, want[i].off);
		ck_assert_uint_eq(d->pdata_len, want[i].len);
		ck_assert_int_eq(droce_cm_msg_type_of(want[i].attr, &t), 0);
		ck_assert_int_eq(t, want[i].t);
	}
	ck_assert_int_eq(droce_cm_msg_type_of(0x0019, &t), -ENOENT);
	ck_assert_str_eq(droce_cm_msg_name(DROCE_CM_MSG_SIDR_REP), "SIDR_REP");
	ck_assert_str_eq(droce_cm_msg_name(DROCE_CM_MSG_COUNT), "?");

	/* REJ reasons rdma_cm applications see as the event status */
	ck_assert_int_eq(DROCE_CM_REJ_NO_QP, 1);
	ck_assert_int_eq(DROCE_CM_REJ_NO_RESOURCES, 3);
	ck_assert_int_eq(DROCE_CM_REJ_TIMEOUT, 4);
	ck_assert_int_eq(DROCE_CM_REJ_INVALID_COMM_ID, 6);
	ck_assert_int_eq(DROCE_CM_REJ_INVALID_SERVICE_ID, 8);
	ck_assert_int_eq(DROCE_CM_REJ_INVALID_TRANSPORT_TYPE, 9);
	ck_assert_int_eq(DROCE_CM_REJ_STALE_CONN, 10);
	ck_assert_int_eq(DROCE_CM_REJ_INVALID_MTU, 26);
	ck_assert_int_eq(DROCE_CM_REJ_CONSUMER_DEFINED, 28);
	ck_assert_int_eq(DROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED, 35);
	ck_assert_str_eq(droce_cm_rej_reason_name(10), "STALE_CONN");
	ck_assert_str_eq(droce_cm_rej_reason_name(34), "?");

	/* drop reasons: named, described, distinct */
	ck_assert_str_eq(droce_cm_drop_name(DROCE_CM_MAD_OK), "OK");
	for (r = 1; r < DROCE_CM_DROP_COUNT; r++) {
		ck_assert_str_ne(droce_cm_drop_name(r), "OK");
		ck_assert_uint_gt(strlen(droce_cm_drop_desc(r)), 10);
		for (i = 1; i < r; i++)
			ck_assert_str_ne(droce_cm_drop_name(r), droce_cm_drop_name(i));
	}
	ck_assert_str_eq(droce_cm_drop_name(DROCE_CM_DROP_COUNT), "UNKNOWN");

	/* 4.096 us * 2^t */
	ck_assert_uint_eq(droce_cm_time_ns(0), 4096);
	ck_assert_uint_eq(droce_cm_time_ns(20), 4096ull << 20);	/* 4.29 s */
	ck_assert_uint_eq(droce_cm_time_ns(31), 4096ull << 31);
	ck_assert_uint_eq(droce_cm_time_ns(32), 4096);			/* 5 bits */
}
END_TEST

TCase *
test_cm_mad_tcase(void)
{
	TCase *tc = tcase_create("mad");

	tcase_add_loop_test(tc, test_accessor_round_trips_and_leaves_neighbours_untouched, 0,
			    DROCE_DIM(fields));
	tcase_add_loop_test(tc, test_accessor_masks_values_wider_than_the_field, 0,
			    DROCE_DIM(fields));
	tcase_add_loop_test(tc, test_byte_fields_sit_at_their_offsets, 0, DROCE_DIM(bytes_fields));
	tcase_add_loop_test(tc, test_encoder_writes_exactly_the_named_bits, 0, DROCE_CM_MSG_COUNT);
	tcase_add_loop_test(tc, test_parser_ignores_reserved_bits, 0, DROCE_CM_MSG_COUNT);
	tcase_add_loop_test(tc, test_decode_encode_round_trip_every_message, 0, DROCE_CM_MSG_COUNT);
	tcase_add_test(tc, test_parse_and_build_take_buffers_of_any_alignment);
	tcase_add_test(tc, test_build_refuses_small_buffers_and_unknown_types);
	tcase_add_test(tc, test_ece_is_encoded_and_decoded_in_req_and_rep);
	tcase_add_test(tc, test_golden_req_from_rxe_rping);
	tcase_add_test(tc, test_golden_rep_from_rxe_rping);
	tcase_add_test(tc, test_golden_rtu_dreq_drep_from_rxe_rping);
	tcase_add_loop_test(tc, test_parse_refuses_every_short_and_long_length, 0,
			    DROCE_CM_MSG_COUNT);
	tcase_add_test(tc, test_parse_refuses_bad_headers);
	tcase_add_test(tc, test_parse_sorts_every_attribute_id);
	tcase_add_test(tc, test_parse_refuses_reserved_message_and_long_info);
	tcase_add_test(tc, test_tables_pin_the_iba_numbers);
	return tc;
}
