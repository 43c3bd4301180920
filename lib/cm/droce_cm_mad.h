/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CM_MAD_H
#define DROCE_CM_MAD_H

/**
 * @file
 * Communication Management MADs (IBA vol 1 ch. 12 and 13.4): the 24-byte
 * common MAD header and the CM messages REQ, MRA, REJ, REP, RTU, DREQ,
 * DREP, SIDR_REQ and SIDR_REP, each exactly 256 bytes on the wire, big
 * endian. LAP and APR (alternate paths) are recognized and refused.
 *
 * Each message has a wire struct (bytes and big-endian words, never
 * bitfields), and one field table, an X-macro, from which everything else
 * is generated: the accessor pair of every field, the decoded host-order
 * struct, the decoder and the encoder. A field is named once, in its table
 * row: (message, kind, name, struct member, mask). Kinds:
 *   B8     bits @c mask of a byte
 *   W16    bits @c mask of a big-endian 16-bit word
 *   W32    bits @c mask of a big-endian 32-bit word
 *   U64    a 64-bit field stored as two 32-bit words member_hi, member_lo
 *          (CM messages only promise 4-byte alignment of 64-bit fields)
 *   BYTES  @c mask bytes copied as they are (GIDs, private data, ARI)
 * Bits of a word that no row names are reserved: the encoder writes zero
 * and the decoder ignores them, as receivers must ignore reserved fields.
 *
 * droce_cm_mad_parse() checks the length first, then the header, then the
 * attribute and the message's enumerated values, and only then decodes.
 * It never reads past @c len and never trusts a length field inside the
 * MAD. Parse and build take buffers of any alignment (they work on an
 * aligned copy); the accessors want the wire structs 2-byte aligned.
 * Stateless; any thread may call them.
 */

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#include "droce_core.h"

#define DROCE_MAD_BYTES		256	/**< every MAD on QP1 (IBA 13.4) */
#define DROCE_MAD_HDR_BYTES	24	/**< common MAD header */
#define DROCE_CM_DATA_BYTES	(DROCE_MAD_BYTES - DROCE_MAD_HDR_BYTES)	/**< 232 */

#define DROCE_MAD_BASE_VERSION	1
#define DROCE_MAD_CLASS_CM	0x07	/**< Communication Management class */
#define DROCE_MAD_CM_CLASS_VERSION 2	/**< IBA 1.2 and later; Linux sends 2 */
#define DROCE_MAD_METHOD_SEND	0x03	/**< every CM message is a Send */

#define DROCE_CM_ARI_BYTES	72	/**< REJ ARI, SIDR_REP and APR additional information */
#define DROCE_CM_GID_BYTES	16

/** LAP and APR: known attributes the CM refuses (no alternate paths on RoCE). */
#define DROCE_CM_ATTR_LAP	0x0019
#define DROCE_CM_ATTR_APR	0x001a

/**
 * The CM messages: A(SYM, sym, attribute ID, private data bytes). The
 * private data sizes are IBA's (Linux: enum ib_cm_data_size).
 */
#define DROCE_CM_MSGS(A) \
	A(REQ,      req,      0x0010,  92) \
	A(MRA,      mra,      0x0011, 222) \
	A(REJ,      rej,      0x0012, 148) \
	A(REP,      rep,      0x0013, 196) \
	A(RTU,      rtu,      0x0014, 224) \
	A(DREQ,     dreq,     0x0015, 220) \
	A(DREP,     drep,     0x0016, 224) \
	A(SIDR_REQ, sidr_req, 0x0017, 216) \
	A(SIDR_REP, sidr_rep, 0x0018, 136)

/** The CM messages, densely numbered (not their attribute IDs). */
enum droce_cm_msg_type {
#define A(SYM, sym, attr, pdata) DROCE_CM_MSG_##SYM,
	DROCE_CM_MSGS(A)
#undef A
	DROCE_CM_MSG_COUNT
};

/** Attribute IDs of the CM messages. */
enum droce_cm_attr {
#define A(SYM, sym, attr, pdata) DROCE_CM_ATTR_##SYM = attr,
	DROCE_CM_MSGS(A)
#undef A
};

/** Private data bytes of each message. */
enum droce_cm_pdata_bytes {
#define A(SYM, sym, attr, pdata) DROCE_CM_##SYM##_PDATA_BYTES = pdata,
	DROCE_CM_MSGS(A)
#undef A
};

/** REJ "Message Rejected" and MRA "Message MRAed" (2 bits; 3 is reserved). */
enum droce_cm_msg_ref {
	DROCE_CM_REF_REQ = 0,
	DROCE_CM_REF_REP = 1,
	DROCE_CM_REF_OTHER = 2,		/**< REJ: other; MRA: LAP */
};

/** REQ Transport Service Type (2 bits). 3 with Extended Transport Type 1 is XRC. */
enum droce_cm_transport {
	DROCE_CM_TRANSPORT_RC = 0,
	DROCE_CM_TRANSPORT_UC = 1,
	DROCE_CM_TRANSPORT_RD = 2,
	DROCE_CM_TRANSPORT_EXT = 3,
};

/**
 * REJ reasons (IBA ch. 12; Linux: enum ib_cm_rej_reason).
 * X(sym, code)
 */
#define DROCE_CM_REJ_REASONS(X) \
	X(NO_QP,                     1) \
	X(NO_EEC,                    2) \
	X(NO_RESOURCES,              3) \
	X(TIMEOUT,                   4) \
	X(UNSUPPORTED,               5) \
	X(INVALID_COMM_ID,           6) \
	X(INVALID_COMM_INSTANCE,     7) \
	X(INVALID_SERVICE_ID,        8) \
	X(INVALID_TRANSPORT_TYPE,    9) \
	X(STALE_CONN,               10) \
	X(RDC_NOT_EXIST,            11) \
	X(INVALID_GID,              12) \
	X(INVALID_LID,              13) \
	X(INVALID_SL,               14) \
	X(INVALID_TRAFFIC_CLASS,    15) \
	X(INVALID_HOP_LIMIT,        16) \
	X(INVALID_PACKET_RATE,      17) \
	X(INVALID_ALT_GID,          18) \
	X(INVALID_ALT_LID,          19) \
	X(INVALID_ALT_SL,           20) \
	X(INVALID_ALT_TRAFFIC_CLASS, 21) \
	X(INVALID_ALT_HOP_LIMIT,    22) \
	X(INVALID_ALT_PACKET_RATE,  23) \
	X(PORT_CM_REDIRECT,         24) \
	X(PORT_REDIRECT,            25) \
	X(INVALID_MTU,              26) \
	X(INSUFFICIENT_RESP_RESOURCES, 27) \
	X(CONSUMER_DEFINED,         28) \
	X(INVALID_RNR_RETRY,        29) \
	X(DUPLICATE_LOCAL_COMM_ID,  30) \
	X(INVALID_CLASS_VERSION,    31) \
	X(INVALID_FLOW_LABEL,       32) \
	X(INVALID_ALT_FLOW_LABEL,   33) \
	X(VENDOR_OPTION_NOT_SUPPORTED, 35)

enum droce_cm_rej_reason {
#define X(sym, code) DROCE_CM_REJ_##sym = code,
	DROCE_CM_REJ_REASONS(X)
#undef X
};

/** SIDR_REP status (Linux: enum ib_cm_sidr_status). */
enum droce_cm_sidr_status {
	DROCE_CM_SIDR_SUCCESS = 0,
	DROCE_CM_SIDR_UNSUPPORTED = 1,	/**< no such service ID */
	DROCE_CM_SIDR_REJECT = 2,
	DROCE_CM_SIDR_NO_QP = 3,
	DROCE_CM_SIDR_REDIRECT = 4,
	DROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/**
 * Why a MAD was not accepted by droce_cm_mad_parse(), in the order checked.
 * R(sym, description)
 */
#define DROCE_CM_MAD_DROPS(R) \
	R(TRUNC,          "shorter than a MAD (256 bytes)") \
	R(LONG,           "longer than a MAD (256 bytes)") \
	R(BASE_VERSION,   "MAD base version is not 1") \
	R(MGMT_CLASS,     "management class is not CM (0x07)") \
	R(CLASS_VERSION,  "CM class version is not 2") \
	R(METHOD,         "method is not Send (0x03)") \
	R(ATTR_UNKNOWN,   "attribute ID is not a CM message") \
	R(ATTR_REFUSED,   "LAP or APR: alternate paths are not supported") \
	R(MSG_RESERVED,   "MRA or REJ names the reserved message 3") \
	R(INFO_LEN,       "REJ ARI or SIDR_REP additional information over 72 bytes")

enum droce_cm_drop {
	DROCE_CM_MAD_OK = 0,
#define R(sym, desc) DROCE_CM_DROP_##sym,
	DROCE_CM_MAD_DROPS(R)
#undef R
	DROCE_CM_DROP_COUNT
};

/** Identifier of a drop reason ("TRUNC"), "OK" for DROCE_CM_MAD_OK. */
const char *droce_cm_drop_name(enum droce_cm_drop r);
/** One-line description of a drop reason. */
const char *droce_cm_drop_desc(enum droce_cm_drop r);

/* ------------------------------------------------------------------------
 * Wire structs. Offsets in comments are from the start of the MAD.
 * ------------------------------------------------------------------------ */

/** Common MAD header (IBA 13.4). */
struct droce_cm_mad_hdr {
	uint8_t    base_version;
	uint8_t    mgmt_class;
	uint8_t    class_version;
	uint8_t    method;		/* R:1 Method:7 */
	rte_be16_t status;
	rte_be16_t class_specific;
	rte_be32_t tid_hi;		/* TransactionID, 64 bits at 8 */
	rte_be32_t tid_lo;
	rte_be16_t attr_id;
	rte_be16_t resv;
	rte_be32_t attr_mod;
} DROCE_WIRE_PACKED;

/** One path of a REQ (primary at 76, alternate at 120), 44 bytes. */
struct droce_cm_path_wire {
	rte_be16_t local_lid;		/* 0xffff on RoCE: LIDs are not used */
	rte_be16_t remote_lid;
	uint8_t    local_gid[DROCE_CM_GID_BYTES];
	uint8_t    remote_gid[DROCE_CM_GID_BYTES];
	rte_be32_t flow_w;		/* FlowLabel:20 resv:6 PacketRate:6 */
	uint8_t    tclass;
	uint8_t    hop_limit;
	uint8_t    sl_b;		/* SL:4 SubnetLocal:1 resv:3 */
	uint8_t    ack_b;		/* LocalAckTimeout:5 resv:3 (alternate: resv:2 SAP:1 resv:0) */
} DROCE_WIRE_PACKED;

/** REQ, attribute 0x0010 (IBA table 106). */
struct droce_cm_req {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;	/* 24 */
	rte_be32_t vendor_w;		/* 28: resv:8 VendorID:24 (ECE) */
	rte_be32_t service_id_hi;	/* 32 */
	rte_be32_t service_id_lo;
	rte_be32_t ca_guid_hi;		/* 40: Local CA GUID */
	rte_be32_t ca_guid_lo;
	rte_be32_t resv48;
	rte_be32_t qkey;		/* 52: Local Q_Key */
	rte_be32_t qpn_w;		/* 56: LocalQPN:24 ResponderResources:8 */
	rte_be32_t eecn_w;		/* 60: LocalEECN:24 InitiatorDepth:8 */
	rte_be32_t reecn_w;		/* 64: RemoteEECN:24 RemoteCMRespTimeout:5 TST:2 EEFC:1 */
	rte_be32_t psn_w;		/* 68: StartingPSN:24 LocalCMRespTimeout:5 RetryCount:3 */
	rte_be16_t pkey;		/* 72 */
	uint8_t    mtu_b;		/* 74: PathMTU:4 RDCExists:1 RNRRetryCount:3 */
	uint8_t    retries_b;		/* 75: MaxCMRetries:4 SRQ:1 ExtTransportType:3 */
	struct droce_cm_path_wire primary;	/* 76 */
	struct droce_cm_path_wire alternate;	/* 120 */
	uint8_t    private_data[DROCE_CM_REQ_PDATA_BYTES];	/* 164 */
} DROCE_WIRE_PACKED;

/** MRA, attribute 0x0011 (IBA table 107). */
struct droce_cm_mra {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t    msg_b;		/* 32: MessageMRAed:2 resv:6 */
	uint8_t    timeout_b;		/* 33: ServiceTimeout:5 resv:3 */
	uint8_t    private_data[DROCE_CM_MRA_PDATA_BYTES];	/* 34 */
} DROCE_WIRE_PACKED;

/** REJ, attribute 0x0012 (IBA table 108). */
struct droce_cm_rej {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t    msg_b;		/* 32: MessageRejected:2 resv:6 */
	uint8_t    info_b;		/* 33: RejectedInfoLength:7 resv:1 */
	rte_be16_t reason;		/* 34 */
	uint8_t    ari[DROCE_CM_ARI_BYTES];	/* 36 */
	uint8_t    private_data[DROCE_CM_REJ_PDATA_BYTES];	/* 108 */
} DROCE_WIRE_PACKED;

/** REP, attribute 0x0013 (IBA table 110). */
struct droce_cm_rep {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	rte_be32_t qkey;		/* 32: Local Q_Key */
	rte_be32_t qpn_w;		/* 36: LocalQPN:24 VendorID[23:16] */
	rte_be32_t eecn_w;		/* 40: LocalEECN:24 VendorID[15:8] */
	rte_be32_t psn_w;		/* 44: StartingPSN:24 VendorID[7:0] */
	uint8_t    responder_resources;	/* 48 */
	uint8_t    initiator_depth;	/* 49 */
	uint8_t    ack_b;		/* 50: TargetAckDelay:5 FailoverAccepted:2 EEFC:1 */
	uint8_t    rnr_b;		/* 51: RNRRetryCount:3 SRQ:1 resv:4 */
	rte_be32_t ca_guid_hi;		/* 52: Local CA GUID */
	rte_be32_t ca_guid_lo;
	uint8_t    private_data[DROCE_CM_REP_PDATA_BYTES];	/* 60 */
} DROCE_WIRE_PACKED;

/** RTU, attribute 0x0014 (IBA table 111). */
struct droce_cm_rtu {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t    private_data[DROCE_CM_RTU_PDATA_BYTES];	/* 32 */
} DROCE_WIRE_PACKED;

/** DREQ, attribute 0x0015 (IBA table 112). */
struct droce_cm_dreq {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	rte_be32_t qpn_w;		/* 32: RemoteQPN/EECN:24 resv:8 */
	uint8_t    private_data[DROCE_CM_DREQ_PDATA_BYTES];	/* 36 */
} DROCE_WIRE_PACKED;

/** DREP, attribute 0x0016 (IBA table 113). */
struct droce_cm_drep {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t local_comm_id;
	rte_be32_t remote_comm_id;
	uint8_t    private_data[DROCE_CM_DREP_PDATA_BYTES];	/* 32 */
} DROCE_WIRE_PACKED;

/** SIDR_REQ, attribute 0x0017 (IBA table 119). */
struct droce_cm_sidr_req {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t request_id;		/* 24 */
	rte_be16_t pkey;		/* 28 */
	rte_be16_t resv30;
	rte_be32_t service_id_hi;	/* 32 */
	rte_be32_t service_id_lo;
	uint8_t    private_data[DROCE_CM_SIDR_REQ_PDATA_BYTES];	/* 40 */
} DROCE_WIRE_PACKED;

/** SIDR_REP, attribute 0x0018 (IBA table 120). */
struct droce_cm_sidr_rep {
	struct droce_cm_mad_hdr hdr;
	rte_be32_t request_id;		/* 24 */
	uint8_t    status;		/* 28 */
	uint8_t    info_len;		/* 29: AdditionalInformationLength */
	rte_be16_t resv30;
	rte_be32_t qpn_w;		/* 32: QPN:24 resv:8 */
	rte_be32_t service_id_hi;	/* 36 */
	rte_be32_t service_id_lo;
	rte_be32_t qkey;		/* 44 */
	uint8_t    info[DROCE_CM_ARI_BYTES];	/* 48 */
	uint8_t    private_data[DROCE_CM_SIDR_REP_PDATA_BYTES];	/* 120 */
} DROCE_WIRE_PACKED;

static_assert(sizeof(struct droce_cm_mad_hdr) == DROCE_MAD_HDR_BYTES, "MAD header is 24 bytes");
static_assert(alignof(struct droce_cm_mad_hdr) == 2, "a MAD after BTH+DETH sits at 2 mod 4");
static_assert(sizeof(struct droce_cm_path_wire) == 44, "a REQ path is 44 bytes");
#define A(SYM, sym, attr, pdata) \
	static_assert(sizeof(struct droce_cm_##sym) == DROCE_MAD_BYTES, #SYM " is 256 bytes"); \
	static_assert(alignof(struct droce_cm_##sym) == 2, #SYM " must tolerate 2 mod 4"); \
	static_assert(offsetof(struct droce_cm_##sym, private_data) + (pdata) == DROCE_MAD_BYTES, \
		      #SYM " private data ends the MAD");
DROCE_CM_MSGS(A)
#undef A

/* ------------------------------------------------------------------------
 * Field tables: X(msg, kind, name, member, mask). See the file comment.
 * ------------------------------------------------------------------------ */

#define DROCE_MAD_HDR_FIELDS(X) \
	X(mad_hdr, B8,    base_version,   base_version,   0xff) \
	X(mad_hdr, B8,    mgmt_class,     mgmt_class,     0xff) \
	X(mad_hdr, B8,    class_version,  class_version,  0xff) \
	X(mad_hdr, B8,    method,         method,         0xff) \
	X(mad_hdr, W16,   status,         status,         0xffff) \
	X(mad_hdr, W16,   class_specific, class_specific, 0xffff) \
	X(mad_hdr, U64,   tid,            tid,            0) \
	X(mad_hdr, W16,   attr_id,        attr_id,        0xffff) \
	X(mad_hdr, W32,   attr_mod,       attr_mod,       0xffffffff)

#define DROCE_CM_PATH_FIELDS(X, msg, p) \
	X(msg, W16,   p##_local_lid,         p.local_lid,  0xffff) \
	X(msg, W16,   p##_remote_lid,        p.remote_lid, 0xffff) \
	X(msg, BYTES, p##_local_gid,         p.local_gid,  DROCE_CM_GID_BYTES) \
	X(msg, BYTES, p##_remote_gid,        p.remote_gid, DROCE_CM_GID_BYTES) \
	X(msg, W32,   p##_flow_label,        p.flow_w,     0xfffff000) \
	X(msg, W32,   p##_packet_rate,       p.flow_w,     0x0000003f) \
	X(msg, B8,    p##_traffic_class,     p.tclass,     0xff) \
	X(msg, B8,    p##_hop_limit,         p.hop_limit,  0xff) \
	X(msg, B8,    p##_sl,                p.sl_b,       0xf0) \
	X(msg, B8,    p##_subnet_local,      p.sl_b,       0x08) \
	X(msg, B8,    p##_local_ack_timeout, p.ack_b,      0xf8)

#define DROCE_CM_REQ_FIELDS(X) \
	X(req, W32,   local_comm_id,              local_comm_id, 0xffffffff) \
	X(req, W32,   vendor_id,                  vendor_w,      0x00ffffff) \
	X(req, U64,   service_id,                 service_id,    0) \
	X(req, U64,   local_ca_guid,              ca_guid,       0) \
	X(req, W32,   local_qkey,                 qkey,          0xffffffff) \
	X(req, W32,   local_qpn,                  qpn_w,         0xffffff00) \
	X(req, W32,   responder_resources,        qpn_w,         0x000000ff) \
	X(req, W32,   local_eecn,                 eecn_w,        0xffffff00) \
	X(req, W32,   initiator_depth,            eecn_w,        0x000000ff) \
	X(req, W32,   remote_eecn,                reecn_w,       0xffffff00) \
	X(req, W32,   remote_cm_response_timeout, reecn_w,       0x000000f8) \
	X(req, W32,   transport_type,             reecn_w,       0x00000006) \
	X(req, W32,   flow_control,               reecn_w,       0x00000001) \
	X(req, W32,   starting_psn,               psn_w,         0xffffff00) \
	X(req, W32,   local_cm_response_timeout,  psn_w,         0x000000f8) \
	X(req, W32,   retry_count,                psn_w,         0x00000007) \
	X(req, W16,   pkey,                       pkey,          0xffff) \
	X(req, B8,    path_mtu,                   mtu_b,         0xf0) \
	X(req, B8,    rdc_exists,                 mtu_b,         0x08) \
	X(req, B8,    rnr_retry_count,            mtu_b,         0x07) \
	X(req, B8,    max_cm_retries,             retries_b,     0xf0) \
	X(req, B8,    srq,                        retries_b,     0x08) \
	X(req, B8,    ext_transport_type,         retries_b,     0x07) \
	DROCE_CM_PATH_FIELDS(X, req, primary) \
	DROCE_CM_PATH_FIELDS(X, req, alternate) \
	X(req, B8,    sap_supported,              alternate.ack_b, 0x04) \
	X(req, BYTES, private_data,               private_data,  DROCE_CM_REQ_PDATA_BYTES)

#define DROCE_CM_MRA_FIELDS(X) \
	X(mra, W32,   local_comm_id,   local_comm_id,  0xffffffff) \
	X(mra, W32,   remote_comm_id,  remote_comm_id, 0xffffffff) \
	X(mra, B8,    msg_mraed,       msg_b,          0xc0) \
	X(mra, B8,    service_timeout, timeout_b,      0xf8) \
	X(mra, BYTES, private_data,    private_data,   DROCE_CM_MRA_PDATA_BYTES)

#define DROCE_CM_REJ_FIELDS(X) \
	X(rej, W32,   local_comm_id,  local_comm_id,  0xffffffff) \
	X(rej, W32,   remote_comm_id, remote_comm_id, 0xffffffff) \
	X(rej, B8,    msg_rejected,   msg_b,          0xc0) \
	X(rej, B8,    ari_len,        info_b,         0xfe) \
	X(rej, W16,   reason,         reason,         0xffff) \
	X(rej, BYTES, ari,            ari,            DROCE_CM_ARI_BYTES) \
	X(rej, BYTES, private_data,   private_data,   DROCE_CM_REJ_PDATA_BYTES)

#define DROCE_CM_REP_FIELDS(X) \
	X(rep, W32,   local_comm_id,       local_comm_id,       0xffffffff) \
	X(rep, W32,   remote_comm_id,      remote_comm_id,      0xffffffff) \
	X(rep, W32,   local_qkey,          qkey,                0xffffffff) \
	X(rep, W32,   local_qpn,           qpn_w,               0xffffff00) \
	X(rep, W32,   vendor_id_h,         qpn_w,               0x000000ff) \
	X(rep, W32,   local_eecn,          eecn_w,              0xffffff00) \
	X(rep, W32,   vendor_id_m,         eecn_w,              0x000000ff) \
	X(rep, W32,   starting_psn,        psn_w,               0xffffff00) \
	X(rep, W32,   vendor_id_l,         psn_w,               0x000000ff) \
	X(rep, B8,    responder_resources, responder_resources, 0xff) \
	X(rep, B8,    initiator_depth,     initiator_depth,     0xff) \
	X(rep, B8,    target_ack_delay,    ack_b,               0xf8) \
	X(rep, B8,    failover_accepted,   ack_b,               0x06) \
	X(rep, B8,    flow_control,        ack_b,               0x01) \
	X(rep, B8,    rnr_retry_count,     rnr_b,               0xe0) \
	X(rep, B8,    srq,                 rnr_b,               0x10) \
	X(rep, U64,   local_ca_guid,       ca_guid,             0) \
	X(rep, BYTES, private_data,        private_data,        DROCE_CM_REP_PDATA_BYTES)

#define DROCE_CM_RTU_FIELDS(X) \
	X(rtu, W32,   local_comm_id,  local_comm_id,  0xffffffff) \
	X(rtu, W32,   remote_comm_id, remote_comm_id, 0xffffffff) \
	X(rtu, BYTES, private_data,   private_data,   DROCE_CM_RTU_PDATA_BYTES)

#define DROCE_CM_DREQ_FIELDS(X) \
	X(dreq, W32,   local_comm_id,  local_comm_id,  0xffffffff) \
	X(dreq, W32,   remote_comm_id, remote_comm_id, 0xffffffff) \
	X(dreq, W32,   remote_qpn,     qpn_w,          0xffffff00) \
	X(dreq, BYTES, private_data,   private_data,   DROCE_CM_DREQ_PDATA_BYTES)

#define DROCE_CM_DREP_FIELDS(X) \
	X(drep, W32,   local_comm_id,  local_comm_id,  0xffffffff) \
	X(drep, W32,   remote_comm_id, remote_comm_id, 0xffffffff) \
	X(drep, BYTES, private_data,   private_data,   DROCE_CM_DREP_PDATA_BYTES)

#define DROCE_CM_SIDR_REQ_FIELDS(X) \
	X(sidr_req, W32,   request_id,   request_id,   0xffffffff) \
	X(sidr_req, W16,   pkey,         pkey,         0xffff) \
	X(sidr_req, U64,   service_id,   service_id,   0) \
	X(sidr_req, BYTES, private_data, private_data, DROCE_CM_SIDR_REQ_PDATA_BYTES)

#define DROCE_CM_SIDR_REP_FIELDS(X) \
	X(sidr_rep, W32,   request_id,   request_id,   0xffffffff) \
	X(sidr_rep, B8,    status,       status,       0xff) \
	X(sidr_rep, B8,    info_len,     info_len,     0xff) \
	X(sidr_rep, W32,   qpn,          qpn_w,        0xffffff00) \
	X(sidr_rep, U64,   service_id,   service_id,   0) \
	X(sidr_rep, W32,   qkey,         qkey,         0xffffffff) \
	X(sidr_rep, BYTES, info,         info,         DROCE_CM_ARI_BYTES) \
	X(sidr_rep, BYTES, private_data, private_data, DROCE_CM_SIDR_REP_PDATA_BYTES)

/* ------------------------------------------------------------------------
 * Generated accessor pairs: droce_cm_<msg>_<name>() and
 * droce_cm_<msg>_set_<name>(), the header's as droce_cm_mad_hdr_<name>().
 * BYTES fields get a pointer and a setter that copies the whole field.
 * ------------------------------------------------------------------------ */

#define DROCE_CM_SHIFT_(mask) ((unsigned int)__builtin_ctzll(mask))

#define DROCE_CM_ACC_B8(pfx, st, name, member, mask) \
	static inline uint8_t \
	pfx##name(const struct st *m) \
	{ \
		return (uint8_t)((m->member & (mask)) >> DROCE_CM_SHIFT_(mask)); \
	} \
	static inline void \
	pfx##set_##name(struct st *m, uint8_t v) \
	{ \
		m->member = (uint8_t)((m->member & ~(mask)) | \
				      (((unsigned int)v << DROCE_CM_SHIFT_(mask)) & (mask))); \
	}

#define DROCE_CM_ACC_W16(pfx, st, name, member, mask) \
	static inline uint16_t \
	pfx##name(const struct st *m) \
	{ \
		return (uint16_t)((rte_be_to_cpu_16(m->member) & (mask)) >> DROCE_CM_SHIFT_(mask)); \
	} \
	static inline void \
	pfx##set_##name(struct st *m, uint16_t v) \
	{ \
		uint16_t w = rte_be_to_cpu_16(m->member); \
		w = (uint16_t)((w & ~(mask)) | (((unsigned int)v << DROCE_CM_SHIFT_(mask)) & (mask))); \
		m->member = rte_cpu_to_be_16(w); \
	}

#define DROCE_CM_ACC_W32(pfx, st, name, member, mask) \
	static inline uint32_t \
	pfx##name(const struct st *m) \
	{ \
		return (rte_be_to_cpu_32(m->member) & (uint32_t)(mask)) >> DROCE_CM_SHIFT_(mask); \
	} \
	static inline void \
	pfx##set_##name(struct st *m, uint32_t v) \
	{ \
		uint32_t w = rte_be_to_cpu_32(m->member); \
		w = (w & ~(uint32_t)(mask)) | ((v << DROCE_CM_SHIFT_(mask)) & (uint32_t)(mask)); \
		m->member = rte_cpu_to_be_32(w); \
	}

#define DROCE_CM_ACC_U64(pfx, st, name, member, mask) \
	static inline uint64_t \
	pfx##name(const struct st *m) \
	{ \
		return ((uint64_t)rte_be_to_cpu_32(m->member##_hi) << 32) | \
		       rte_be_to_cpu_32(m->member##_lo); \
	} \
	static inline void \
	pfx##set_##name(struct st *m, uint64_t v) \
	{ \
		m->member##_hi = rte_cpu_to_be_32((uint32_t)(v >> 32)); \
		m->member##_lo = rte_cpu_to_be_32((uint32_t)v); \
	}

#define DROCE_CM_ACC_BYTES(pfx, st, name, member, len) \
	static inline const uint8_t * \
	pfx##name(const struct st *m) \
	{ \
		return m->member; \
	} \
	static inline void \
	pfx##set_##name(struct st *m, const uint8_t *v) \
	{ \
		memcpy(m->member, v, (len)); \
	}

#define DROCE_CM_ACC_(msg, kind, name, member, mask) \
	DROCE_CM_ACC_##kind(droce_cm_##msg##_, droce_cm_##msg, name, member, mask)

DROCE_MAD_HDR_FIELDS(DROCE_CM_ACC_)
DROCE_CM_REQ_FIELDS(DROCE_CM_ACC_)
DROCE_CM_MRA_FIELDS(DROCE_CM_ACC_)
DROCE_CM_REJ_FIELDS(DROCE_CM_ACC_)
DROCE_CM_REP_FIELDS(DROCE_CM_ACC_)
DROCE_CM_RTU_FIELDS(DROCE_CM_ACC_)
DROCE_CM_DREQ_FIELDS(DROCE_CM_ACC_)
DROCE_CM_DREP_FIELDS(DROCE_CM_ACC_)
DROCE_CM_SIDR_REQ_FIELDS(DROCE_CM_ACC_)
DROCE_CM_SIDR_REP_FIELDS(DROCE_CM_ACC_)

/* ------------------------------------------------------------------------
 * Decoded messages: one host-order member per table row.
 * ------------------------------------------------------------------------ */

#define DROCE_CM_DECL_B8(name, mask)	uint8_t name;
#define DROCE_CM_DECL_W16(name, mask)	uint16_t name;
#define DROCE_CM_DECL_W32(name, mask)	uint32_t name;
#define DROCE_CM_DECL_U64(name, mask)	uint64_t name;
#define DROCE_CM_DECL_BYTES(name, len)	uint8_t name[len];
#define DROCE_CM_DECL_(msg, kind, name, member, mask) DROCE_CM_DECL_##kind(name, mask)

/** The common MAD header, decoded. */
struct droce_cm_mad_hdr_info {
	DROCE_MAD_HDR_FIELDS(DROCE_CM_DECL_)
};

/** Decoded REQ (and so on for each message). */
struct droce_cm_req_info { DROCE_CM_REQ_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_mra_info { DROCE_CM_MRA_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_rej_info { DROCE_CM_REJ_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_rep_info { DROCE_CM_REP_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_rtu_info { DROCE_CM_RTU_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_dreq_info { DROCE_CM_DREQ_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_drep_info { DROCE_CM_DREP_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_sidr_req_info { DROCE_CM_SIDR_REQ_FIELDS(DROCE_CM_DECL_) };
struct droce_cm_sidr_rep_info { DROCE_CM_SIDR_REP_FIELDS(DROCE_CM_DECL_) };

/** A decoded CM MAD: the header and the message @c type names. */
struct droce_cm_msg {
	enum droce_cm_msg_type type;
	struct droce_cm_mad_hdr_info hdr;
	union {
		struct droce_cm_req_info req;
		struct droce_cm_mra_info mra;
		struct droce_cm_rej_info rej;
		struct droce_cm_rep_info rep;
		struct droce_cm_rtu_info rtu;
		struct droce_cm_dreq_info dreq;
		struct droce_cm_drep_info drep;
		struct droce_cm_sidr_req_info sidr_req;
		struct droce_cm_sidr_rep_info sidr_rep;
	};
};

/**
 * Enhanced Connection Establishment (ECE): a vendor ID and options the two
 * sides' consumers exchange in the REQ and the REP. As Linux's CM puts it:
 * the 24-bit Vendor ID field (the REP's is split over three reserved bytes,
 * high, middle, low) and the MAD header's AttributeModifier for the options.
 */
struct droce_cm_ece {
	uint32_t vendor_id;		/**< 24 bits; 0: none */
	uint32_t options;
};

/** The ECE a decoded REQ or REP carries; zero for other messages. */
void droce_cm_msg_ece(const struct droce_cm_msg *msg, struct droce_cm_ece *ece);

/** Put @p ece into a REQ or REP being built; other messages are left as they are. */
void droce_cm_msg_set_ece(struct droce_cm_msg *msg, const struct droce_cm_ece *ece);

/** Per-message facts, indexed by enum droce_cm_msg_type. */
struct droce_cm_msg_desc {
	const char *name;		/**< "REQ" */
	uint16_t attr_id;
	uint16_t pdata_off;		/**< offset of the private data in the MAD */
	uint16_t pdata_len;
};

extern const struct droce_cm_msg_desc droce_cm_msg_desc[DROCE_CM_MSG_COUNT];

/** Name of a message type, "?" if out of range. */
const char *droce_cm_msg_name(enum droce_cm_msg_type t);

/**
 * The message type of CM attribute @p attr_id.
 * @return 0, or -ENOENT for an attribute that is not a CM message
 *         (including LAP and APR).
 */
int droce_cm_msg_type_of(uint16_t attr_id, enum droce_cm_msg_type *type);

/** Name of a REJ reason ("STALE_CONN"), "?" for an undefined code. */
const char *droce_cm_rej_reason_name(uint16_t reason);

/**
 * Validate and decode a MAD received on QP1.
 * @param buf  the MAD (the UD payload, GRH excluded)
 * @param len  bytes available at @p buf
 * @param out  filled only when DROCE_CM_MAD_OK is returned
 * @return DROCE_CM_MAD_OK, or why the MAD is dropped.
 */
enum droce_cm_drop droce_cm_mad_parse(const void *buf, uint32_t len, struct droce_cm_msg *out);

/**
 * Fill @p hdr for a CM message of @p type: base version 1, class CM, class
 * version 2, method Send, status 0, attribute of @p type, transaction @p tid.
 */
void droce_cm_mad_hdr_init(struct droce_cm_mad_hdr_info *hdr, enum droce_cm_msg_type type,
			   uint64_t tid);

/**
 * Encode @p msg into @p buf: its header as given (droce_cm_mad_hdr_init()
 * sets the usual one), the message's fields, reserved bits zero.
 * @return DROCE_MAD_BYTES, -ENOSPC if @p cap is smaller, -EINVAL for an
 *         unknown message type.
 */
int droce_cm_mad_build(const struct droce_cm_msg *msg, void *buf, uint32_t cap);

/**
 * An IBA time exponent in nanoseconds: 4.096 us * 2^@p t (CM response
 * timeouts, service timeout, packet lifetime, local ACK timeout). @p t is
 * masked to 5 bits; 31 is about 2.4 hours.
 */
static inline uint64_t
droce_cm_time_ns(uint8_t t)
{
	return 4096ull << (t & 0x1f);
}

#endif /* DROCE_CM_MAD_H */
