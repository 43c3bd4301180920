/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_WIRE_PSN_H
#define DROCE_WIRE_PSN_H

/**
 * @file
 * 24-bit packet sequence numbers and the AETH syndrome (IBA 9.7.5): ACK with
 * credit count, RNR NAK with its timer code, NAK with its error code.
 */

#include <stdint.h>

#include "droce_wire_hdr.h"

/** PSNs are 24-bit serial numbers (IBA 9.7.1). */
static inline uint32_t
droce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_24BIT_MASK;
}

/**
 * Compare in the top 24 bits of an int32_t: > 0 if @p a is after @p b, 0 if
 * equal, < 0 if before. Valid while the two are less than 2^23 apart.
 */
static inline int32_t
droce_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}

/** Forward distance from @p b to @p a, 0 .. 2^24 - 1. */
static inline uint32_t
droce_psn_diff(uint32_t a, uint32_t b)
{
	return (a - b) & DROCE_24BIT_MASK;
}

/** AETH syndrome: type in bits 6-5, value in bits 4-0 (bit 7 reserved). */
#define DROCE_AETH_TYPE_MASK	0x60
#define DROCE_AETH_VALUE_MASK	0x1f

enum droce_aeth_type {
	DROCE_AETH_ACK     = 0x00,	/**< value: credit count code */
	DROCE_AETH_RNR_NAK = 0x20,	/**< value: RNR timer code */
	DROCE_AETH_RSVD    = 0x40,
	DROCE_AETH_NAK     = 0x60,	/**< value: enum droce_nak_code */
};

/** NAK codes (IBA table 47). */
enum droce_nak_code {
	DROCE_NAK_PSN_SEQ     = 0,	/**< PSN sequence error */
	DROCE_NAK_INVALID_REQ = 1,	/**< invalid request */
	DROCE_NAK_REM_ACCESS  = 2,	/**< remote access error */
	DROCE_NAK_REM_OP      = 3,	/**< remote operational error */
	DROCE_NAK_INVALID_RD  = 4,	/**< invalid RD request */
};

/** Credit code 31: the responder does not use end-to-end flow control. */
#define DROCE_AETH_CREDITS_UNLIMITED 0x1f

static inline uint8_t droce_aeth_type(uint8_t syndrome) { return syndrome & DROCE_AETH_TYPE_MASK; }
static inline uint8_t droce_aeth_value(uint8_t syndrome) { return syndrome & DROCE_AETH_VALUE_MASK; }

static inline uint8_t
droce_aeth_syn_ack(uint8_t credit_code)
{
	return DROCE_AETH_ACK | (credit_code & DROCE_AETH_VALUE_MASK);
}

static inline uint8_t
droce_aeth_syn_rnr(uint8_t timer_code)
{
	return DROCE_AETH_RNR_NAK | (timer_code & DROCE_AETH_VALUE_MASK);
}

static inline uint8_t
droce_aeth_syn_nak(enum droce_nak_code code)
{
	return DROCE_AETH_NAK | ((uint8_t)code & DROCE_AETH_VALUE_MASK);
}

/**
 * Microseconds an RNR timer code asks the requester to wait (IBA table 45).
 * Code 0 is the longest, 655.36 ms; code 25 is 61.44 ms.
 */
uint32_t droce_rnr_timer_usec(uint8_t code);

/** Smallest RNR timer code whose delay is at least @p usec (code 0 if none). */
uint8_t droce_rnr_timer_code(uint32_t usec);

/**
 * Receive credits an ACK credit code stands for (IBA table 46): 0, 1, 2, 3,
 * 4, 6, 8, 12, ... 32768. Code 31 (unlimited) returns UINT32_MAX.
 */
uint32_t droce_aeth_credits(uint8_t code);

/** Largest credit code whose count does not exceed @p credits. */
uint8_t droce_aeth_credit_code(uint32_t credits);

/** NAK code name ("PSN_SEQ"), or "RESERVED". */
const char *droce_nak_code_name(uint8_t code);

#endif /* DROCE_WIRE_PSN_H */
