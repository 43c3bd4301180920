/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_WIRE_OPCODE_H
#define DROCE_WIRE_OPCODE_H

/**
 * @file
 * The BTH opcode table: one descriptor per opcode value saying which
 * extension headers follow the BTH, where each sits, and what the packet
 * means to the transport. Code asks the table (d->flags & DROCE_OPF_RQ_WQE)
 * instead of listing opcodes. Offsets are derived once at start-up from the
 * header list, never typed in (IBA vol 1 table 38 and section 9.2).
 */

#include <stdint.h>

#include "droce_wire_hdr.h"

/** Extension headers in the order they follow the BTH (IBA 9.2, FETH before RETH). */
#define DROCE_XHDRS(X) \
	X(DETH,   DROCE_DETH_BYTES) \
	X(FETH,   DROCE_FETH_BYTES) \
	X(RETH,   DROCE_RETH_BYTES) \
	X(ATMETH, DROCE_ATMETH_BYTES) \
	X(AETH,   DROCE_AETH_BYTES) \
	X(ATMACK, DROCE_ATMACK_BYTES) \
	X(IMMDT,  DROCE_IMMDT_BYTES) \
	X(IETH,   DROCE_IETH_BYTES) \
	X(CNPPAD, DROCE_CNPPAD_BYTES)

enum droce_xhdr {
#define X(sym, bytes) DROCE_X_##sym,
	DROCE_XHDRS(X)
#undef X
	DROCE_X_COUNT
};

#define DROCE_XH(sym) (1u << DROCE_X_##sym)

/** Sizes of the extension headers, indexed by enum droce_xhdr. */
extern const uint8_t droce_xhdr_bytes[DROCE_X_COUNT];
/** Names of the extension headers, indexed by enum droce_xhdr. */
extern const char *const droce_xhdr_name[DROCE_X_COUNT];

/** Opcode properties. */
enum droce_opf {
	DROCE_OPF_VALID      = 1u << 0,	/**< the opcode exists */
	DROCE_OPF_PAYLOAD    = 1u << 1,	/**< carries payload after its headers */
	DROCE_OPF_REQ        = 1u << 2,	/**< requester → responder */
	DROCE_OPF_RESP       = 1u << 3,	/**< responder → requester */
	DROCE_OPF_SEND       = 1u << 4,
	DROCE_OPF_WRITE      = 1u << 5,
	DROCE_OPF_READ       = 1u << 6,	/**< READ request */
	DROCE_OPF_READ_RESP  = 1u << 7,
	DROCE_OPF_ATOMIC     = 1u << 8,	/**< CMP_SWP or FETCH_ADD request */
	DROCE_OPF_ATOMIC_ACK = 1u << 9,
	DROCE_OPF_ACK        = 1u << 10,	/**< plain ACK / NAK */
	DROCE_OPF_FLUSH      = 1u << 11,
	DROCE_OPF_ATOMIC_WR  = 1u << 12,	/**< ATOMIC_WRITE, 8-byte payload */
	DROCE_OPF_IMM        = 1u << 13,	/**< carries immediate data */
	DROCE_OPF_INV        = 1u << 14,	/**< carries an R_Key to invalidate */
	DROCE_OPF_START      = 1u << 15,	/**< FIRST or ONLY packet of a message */
	DROCE_OPF_END        = 1u << 16,	/**< LAST or ONLY packet of a message */
	DROCE_OPF_RQ_WQE     = 1u << 17,	/**< its message uses a receive WQE (taken at START) */
	DROCE_OPF_RECV_COMP  = 1u << 18,	/**< completes that receive WQE */
	DROCE_OPF_CNP        = 1u << 19,	/**< congestion notification */
};

#define DROCE_OPF_FIRST  DROCE_OPF_START
#define DROCE_OPF_MIDDLE 0
#define DROCE_OPF_LAST   DROCE_OPF_END
#define DROCE_OPF_ONLY   (DROCE_OPF_START | DROCE_OPF_END)
#define DROCE_OPF_SEND_  (DROCE_OPF_PAYLOAD | DROCE_OPF_REQ | DROCE_OPF_SEND | DROCE_OPF_RQ_WQE)
#define DROCE_OPF_WRITE_ (DROCE_OPF_PAYLOAD | DROCE_OPF_REQ | DROCE_OPF_WRITE)
#define DROCE_OPF_RDRSP_ (DROCE_OPF_PAYLOAD | DROCE_OPF_RESP | DROCE_OPF_READ_RESP)
#define DROCE_OPF_WRIMM_ (DROCE_OPF_IMM | DROCE_OPF_RQ_WQE | DROCE_OPF_RECV_COMP)

/** Transport service, the top three opcode bits (IBA table 38). */
enum droce_transport {
	DROCE_TR_RC  = 0x00,
	DROCE_TR_UC  = 0x20,
	DROCE_TR_RD  = 0x40,
	DROCE_TR_UD  = 0x60,
	DROCE_TR_CNP = 0x80,
};
#define DROCE_TR_MASK 0xe0

/* The SEND and WRITE families, shared by RC and UC (T = RC or UC). */
#define DROCE_OPCODES_SEND_WRITE(OP, T, base) \
	OP(T##_SEND_FIRST,          (base) + 0x00, 0,                DROCE_OPF_SEND_ | DROCE_OPF_FIRST) \
	OP(T##_SEND_MIDDLE,         (base) + 0x01, 0,                DROCE_OPF_SEND_ | DROCE_OPF_MIDDLE) \
	OP(T##_SEND_LAST,           (base) + 0x02, 0,                DROCE_OPF_SEND_ | DROCE_OPF_LAST | DROCE_OPF_RECV_COMP) \
	OP(T##_SEND_LAST_IMM,       (base) + 0x03, DROCE_XH(IMMDT),  DROCE_OPF_SEND_ | DROCE_OPF_LAST | DROCE_OPF_RECV_COMP | DROCE_OPF_IMM) \
	OP(T##_SEND_ONLY,           (base) + 0x04, 0,                DROCE_OPF_SEND_ | DROCE_OPF_ONLY | DROCE_OPF_RECV_COMP) \
	OP(T##_SEND_ONLY_IMM,       (base) + 0x05, DROCE_XH(IMMDT),  DROCE_OPF_SEND_ | DROCE_OPF_ONLY | DROCE_OPF_RECV_COMP | DROCE_OPF_IMM) \
	OP(T##_WRITE_FIRST,         (base) + 0x06, DROCE_XH(RETH),   DROCE_OPF_WRITE_ | DROCE_OPF_FIRST) \
	OP(T##_WRITE_MIDDLE,        (base) + 0x07, 0,                DROCE_OPF_WRITE_ | DROCE_OPF_MIDDLE) \
	OP(T##_WRITE_LAST,          (base) + 0x08, 0,                DROCE_OPF_WRITE_ | DROCE_OPF_LAST) \
	OP(T##_WRITE_LAST_IMM,      (base) + 0x09, DROCE_XH(IMMDT),  DROCE_OPF_WRITE_ | DROCE_OPF_LAST | DROCE_OPF_WRIMM_) \
	OP(T##_WRITE_ONLY,          (base) + 0x0a, DROCE_XH(RETH),   DROCE_OPF_WRITE_ | DROCE_OPF_ONLY) \
	OP(T##_WRITE_ONLY_IMM,      (base) + 0x0b, DROCE_XH(RETH) | DROCE_XH(IMMDT), DROCE_OPF_WRITE_ | DROCE_OPF_ONLY | DROCE_OPF_WRIMM_)

/*      sym                           code  extension headers                    properties */
#define DROCE_OPCODES(OP) \
	DROCE_OPCODES_SEND_WRITE(OP, RC, DROCE_TR_RC) \
	OP(RC_READ_REQUEST,         0x0c, DROCE_XH(RETH),                    DROCE_OPF_REQ | DROCE_OPF_READ | DROCE_OPF_ONLY) \
	OP(RC_READ_RESPONSE_FIRST,  0x0d, DROCE_XH(AETH),                    DROCE_OPF_RDRSP_ | DROCE_OPF_FIRST) \
	OP(RC_READ_RESPONSE_MIDDLE, 0x0e, 0,                                 DROCE_OPF_RDRSP_ | DROCE_OPF_MIDDLE) \
	OP(RC_READ_RESPONSE_LAST,   0x0f, DROCE_XH(AETH),                    DROCE_OPF_RDRSP_ | DROCE_OPF_LAST) \
	OP(RC_READ_RESPONSE_ONLY,   0x10, DROCE_XH(AETH),                    DROCE_OPF_RDRSP_ | DROCE_OPF_ONLY) \
	OP(RC_ACKNOWLEDGE,          0x11, DROCE_XH(AETH),                    DROCE_OPF_RESP | DROCE_OPF_ACK | DROCE_OPF_ONLY) \
	OP(RC_ATOMIC_ACKNOWLEDGE,   0x12, DROCE_XH(AETH) | DROCE_XH(ATMACK), DROCE_OPF_RESP | DROCE_OPF_ATOMIC_ACK | DROCE_OPF_ONLY) \
	OP(RC_COMPARE_SWAP,         0x13, DROCE_XH(ATMETH),                  DROCE_OPF_REQ | DROCE_OPF_ATOMIC | DROCE_OPF_ONLY) \
	OP(RC_FETCH_ADD,            0x14, DROCE_XH(ATMETH),                  DROCE_OPF_REQ | DROCE_OPF_ATOMIC | DROCE_OPF_ONLY) \
	OP(RC_SEND_LAST_INV,        0x16, DROCE_XH(IETH),                    DROCE_OPF_SEND_ | DROCE_OPF_LAST | DROCE_OPF_RECV_COMP | DROCE_OPF_INV) \
	OP(RC_SEND_ONLY_INV,        0x17, DROCE_XH(IETH),                    DROCE_OPF_SEND_ | DROCE_OPF_ONLY | DROCE_OPF_RECV_COMP | DROCE_OPF_INV) \
	OP(RC_FLUSH,                0x1c, DROCE_XH(FETH) | DROCE_XH(RETH),   DROCE_OPF_REQ | DROCE_OPF_FLUSH | DROCE_OPF_ONLY) \
	OP(RC_ATOMIC_WRITE,         0x1d, DROCE_XH(RETH),                    DROCE_OPF_PAYLOAD | DROCE_OPF_REQ | DROCE_OPF_ATOMIC_WR | DROCE_OPF_ONLY) \
	DROCE_OPCODES_SEND_WRITE(OP, UC, DROCE_TR_UC) \
	OP(UD_SEND_ONLY,            0x64, DROCE_XH(DETH),                    DROCE_OPF_SEND_ | DROCE_OPF_ONLY | DROCE_OPF_RECV_COMP) \
	OP(UD_SEND_ONLY_IMM,        0x65, DROCE_XH(DETH) | DROCE_XH(IMMDT),  DROCE_OPF_SEND_ | DROCE_OPF_ONLY | DROCE_OPF_RECV_COMP | DROCE_OPF_IMM) \
	OP(CNP,                     0x81, DROCE_XH(CNPPAD),                  DROCE_OPF_CNP | DROCE_OPF_ONLY)

/** Opcode values by name: DROCE_OP_RC_SEND_FIRST ... */
enum droce_opcode {
#define OP(sym, code, xh, fl) DROCE_OP_##sym = (code),
	DROCE_OPCODES(OP)
#undef OP
};

/** What the transport needs to know about one opcode. */
struct droce_opcode_desc {
	const char *name;		/**< "RC_SEND_FIRST"; NULL if invalid */
	uint32_t flags;			/**< enum droce_opf */
	uint16_t xhdrs;			/**< DROCE_XH() set */
	uint8_t hdr_len;		/**< BTH plus extension headers */
	uint8_t off[DROCE_X_COUNT];	/**< offset of each present header from the BTH */
};

/** Indexed by opcode value; filled at load time (a constructor), read-only after. */
extern struct droce_opcode_desc droce_opcode_desc[256];

/** (Re)derive offsets and lengths; runs automatically at load, idempotent. */
void droce_wire_opcode_init(void);

static inline const struct droce_opcode_desc *
droce_opcode(uint8_t opcode)
{
	return &droce_opcode_desc[opcode];
}

static inline enum droce_transport
droce_opcode_transport(uint8_t opcode)
{
	return (enum droce_transport)(opcode & DROCE_TR_MASK);
}

#endif /* DROCE_WIRE_OPCODE_H */
