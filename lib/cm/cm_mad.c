/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * CM MAD codec (droce_cm_mad.h): the per-message descriptor table, the
 * parser and the encoder. Decoding and encoding are generated from the
 * field tables of the header, so a field is described in one place.
 * Stateless; any thread may call these.
 */

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "droce_cm_mad.h"

static const struct {
	const char *sym;
	const char *desc;
} drop_info[DROCE_CM_DROP_COUNT] = {
	[DROCE_CM_MAD_OK] = { "OK", "accepted" },
#define R(sym, desc) [DROCE_CM_DROP_##sym] = { #sym, desc },
	DROCE_CM_MAD_DROPS(R)
#undef R
};

const struct droce_cm_msg_desc droce_cm_msg_desc[DROCE_CM_MSG_COUNT] = {
#define A(SYM, sym, attr, pdata) \
	[DROCE_CM_MSG_##SYM] = { \
		.name = #SYM, \
		.attr_id = attr, \
		.pdata_off = offsetof(struct droce_cm_##sym, private_data), \
		.pdata_len = pdata, \
	},
	DROCE_CM_MSGS(A)
#undef A
};

const char *
droce_cm_drop_name(enum droce_cm_drop r)
{
	return (unsigned int)r < DROCE_CM_DROP_COUNT ? drop_info[r].sym : "UNKNOWN";
}

const char *
droce_cm_drop_desc(enum droce_cm_drop r)
{
	return (unsigned int)r < DROCE_CM_DROP_COUNT ? drop_info[r].desc : "unknown reason";
}

const char *
droce_cm_msg_name(enum droce_cm_msg_type t)
{
	return (unsigned int)t < DROCE_CM_MSG_COUNT ? droce_cm_msg_desc[t].name : "?";
}

int
droce_cm_msg_type_of(uint16_t attr_id, enum droce_cm_msg_type *type)
{
	/* the attributes are consecutive, 0x0010 .. 0x0018 */
	if (attr_id < DROCE_CM_ATTR_REQ || attr_id > DROCE_CM_ATTR_SIDR_REP)
		return -ENOENT;
	*type = (enum droce_cm_msg_type)(attr_id - DROCE_CM_ATTR_REQ);
	return 0;
}

static_assert(DROCE_CM_ATTR_SIDR_REP - DROCE_CM_ATTR_REQ == DROCE_CM_MSG_COUNT - 1,
	      "CM attribute IDs are consecutive and in enum order");

const char *
droce_cm_rej_reason_name(uint16_t reason)
{
	switch (reason) {
#define X(sym, code) case code: return #sym;
	DROCE_CM_REJ_REASONS(X)
#undef X
	default:
		return "?";
	}
}

/* ---- decode / encode, generated from the field tables ---- */

#define DEC_B8(msg, name)	out->name = droce_cm_##msg##_##name(in);
#define DEC_W16(msg, name)	out->name = droce_cm_##msg##_##name(in);
#define DEC_W32(msg, name)	out->name = droce_cm_##msg##_##name(in);
#define DEC_U64(msg, name)	out->name = droce_cm_##msg##_##name(in);
#define DEC_BYTES(msg, name)	memcpy(out->name, droce_cm_##msg##_##name(in), sizeof(out->name));
#define DEC_(msg, kind, name, member, mask) DEC_##kind(msg, name)

#define ENC_B8(msg, name)	droce_cm_##msg##_set_##name(out, in->name);
#define ENC_W16(msg, name)	droce_cm_##msg##_set_##name(out, in->name);
#define ENC_W32(msg, name)	droce_cm_##msg##_set_##name(out, in->name);
#define ENC_U64(msg, name)	droce_cm_##msg##_set_##name(out, in->name);
#define ENC_BYTES(msg, name)	droce_cm_##msg##_set_##name(out, in->name);
#define ENC_(msg, kind, name, member, mask) ENC_##kind(msg, name)

static void
hdr_decode(const struct droce_cm_mad_hdr *in, struct droce_cm_mad_hdr_info *out)
{
	DROCE_MAD_HDR_FIELDS(DEC_)
}

static void
hdr_encode(const struct droce_cm_mad_hdr_info *in, struct droce_cm_mad_hdr *out)
{
	DROCE_MAD_HDR_FIELDS(ENC_)
}

#define A(SYM, sym, attr, pdata) \
	static void \
	sym##_decode(const struct droce_cm_##sym *in, struct droce_cm_##sym##_info *out) \
	{ \
		DROCE_CM_##SYM##_FIELDS(DEC_) \
	} \
	static void \
	sym##_encode(const struct droce_cm_##sym##_info *in, struct droce_cm_##sym *out) \
	{ \
		DROCE_CM_##SYM##_FIELDS(ENC_) \
	}
DROCE_CM_MSGS(A)
#undef A

/* The enumerated values a message is read by; everything else is the state machine's. */
static enum droce_cm_drop
msg_check(enum droce_cm_msg_type type, const uint8_t *mad)
{
	switch (type) {
	case DROCE_CM_MSG_MRA:
		if (droce_cm_mra_msg_mraed((const struct droce_cm_mra *)mad) > DROCE_CM_REF_OTHER)
			return DROCE_CM_DROP_MSG_RESERVED;
		break;
	case DROCE_CM_MSG_REJ: {
		const struct droce_cm_rej *rej = (const struct droce_cm_rej *)mad;

		if (droce_cm_rej_msg_rejected(rej) > DROCE_CM_REF_OTHER)
			return DROCE_CM_DROP_MSG_RESERVED;
		if (droce_cm_rej_ari_len(rej) > DROCE_CM_ARI_BYTES)
			return DROCE_CM_DROP_INFO_LEN;
		break;
	}
	case DROCE_CM_MSG_SIDR_REP:
		if (droce_cm_sidr_rep_info_len((const struct droce_cm_sidr_rep *)mad) >
		    DROCE_CM_ARI_BYTES)
			return DROCE_CM_DROP_INFO_LEN;
		break;
	default:
		break;
	}
	return DROCE_CM_MAD_OK;
}

enum droce_cm_drop
droce_cm_mad_parse(const void *buf, uint32_t len, struct droce_cm_msg *out)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];
	const struct droce_cm_mad_hdr *h = (const struct droce_cm_mad_hdr *)mad;
	enum droce_cm_msg_type type;
	enum droce_cm_drop r;
	uint16_t attr;

	/* lengths first: everything below reads inside the 256 bytes */
	if (len < DROCE_MAD_BYTES)
		return DROCE_CM_DROP_TRUNC;
	if (len > DROCE_MAD_BYTES)
		return DROCE_CM_DROP_LONG;
	/* the wire structs want 2-byte alignment; a receive buffer need not have it */
	memcpy(mad, buf, DROCE_MAD_BYTES);
	if (droce_cm_mad_hdr_base_version(h) != DROCE_MAD_BASE_VERSION)
		return DROCE_CM_DROP_BASE_VERSION;
	if (droce_cm_mad_hdr_mgmt_class(h) != DROCE_MAD_CLASS_CM)
		return DROCE_CM_DROP_MGMT_CLASS;
	if (droce_cm_mad_hdr_class_version(h) != DROCE_MAD_CM_CLASS_VERSION)
		return DROCE_CM_DROP_CLASS_VERSION;
	if (droce_cm_mad_hdr_method(h) != DROCE_MAD_METHOD_SEND)
		return DROCE_CM_DROP_METHOD;
	attr = droce_cm_mad_hdr_attr_id(h);
	if (attr == DROCE_CM_ATTR_LAP || attr == DROCE_CM_ATTR_APR)
		return DROCE_CM_DROP_ATTR_REFUSED;
	if (droce_cm_msg_type_of(attr, &type) < 0)
		return DROCE_CM_DROP_ATTR_UNKNOWN;
	r = msg_check(type, mad);
	if (r != DROCE_CM_MAD_OK)
		return r;

	out->type = type;
	hdr_decode(h, &out->hdr);
	switch (type) {
#define A(SYM, sym, attr_, pdata) \
	case DROCE_CM_MSG_##SYM: \
		sym##_decode((const struct droce_cm_##sym *)mad, &out->sym); \
		break;
	DROCE_CM_MSGS(A)
#undef A
	default:
		break;
	}
	return DROCE_CM_MAD_OK;
}

void
droce_cm_mad_hdr_init(struct droce_cm_mad_hdr_info *hdr, enum droce_cm_msg_type type, uint64_t tid)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->base_version = DROCE_MAD_BASE_VERSION;
	hdr->mgmt_class = DROCE_MAD_CLASS_CM;
	hdr->class_version = DROCE_MAD_CM_CLASS_VERSION;
	hdr->method = DROCE_MAD_METHOD_SEND;
	hdr->tid = tid;
	hdr->attr_id = (unsigned int)type < DROCE_CM_MSG_COUNT ? droce_cm_msg_desc[type].attr_id : 0;
}

int
droce_cm_mad_build(const struct droce_cm_msg *msg, void *buf, uint32_t cap)
{
	alignas(8) uint8_t mad[DROCE_MAD_BYTES];

	if ((unsigned int)msg->type >= DROCE_CM_MSG_COUNT)
		return -EINVAL;
	if (cap < DROCE_MAD_BYTES)
		return -ENOSPC;
	memset(mad, 0, DROCE_MAD_BYTES);
	hdr_encode(&msg->hdr, (struct droce_cm_mad_hdr *)mad);
	switch (msg->type) {
#define A(SYM, sym, attr, pdata) \
	case DROCE_CM_MSG_##SYM: \
		sym##_encode(&msg->sym, (struct droce_cm_##sym *)mad); \
		break;
	DROCE_CM_MSGS(A)
#undef A
	default:
		return -EINVAL;
	}
	memcpy(buf, mad, DROCE_MAD_BYTES);	/* any alignment */
	return DROCE_MAD_BYTES;
}

void
droce_cm_msg_ece(const struct droce_cm_msg *msg, struct droce_cm_ece *ece)
{
	ece->vendor_id = 0;
	ece->options = 0;
	if (msg->type == DROCE_CM_MSG_REQ)
		ece->vendor_id = msg->req.vendor_id;
	else if (msg->type == DROCE_CM_MSG_REP)
		ece->vendor_id = (msg->rep.vendor_id_h << 16) | (msg->rep.vendor_id_m << 8) |
				 msg->rep.vendor_id_l;
	else
		return;
	ece->options = msg->hdr.attr_mod;
}

void
droce_cm_msg_set_ece(struct droce_cm_msg *msg, const struct droce_cm_ece *ece)
{
	if (msg->type == DROCE_CM_MSG_REQ) {
		msg->req.vendor_id = ece->vendor_id & 0xffffff;
	} else if (msg->type == DROCE_CM_MSG_REP) {
		msg->rep.vendor_id_h = (ece->vendor_id >> 16) & 0xff;
		msg->rep.vendor_id_m = (ece->vendor_id >> 8) & 0xff;
		msg->rep.vendor_id_l = ece->vendor_id & 0xff;
	} else {
		return;
	}
	msg->hdr.attr_mod = ece->options;
}
