/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * AETH syndrome tables (droce_wire_psn.h): RNR timer codes and ACK credit
 * codes. Constant data; any thread may call.
 */

#include "droce_wire_psn.h"

/* IBA table 45, in microseconds. Code 0 is the longest delay. */
static const uint32_t rnr_usec[32] = {
	655360,     10,     20,     30,     40,     60,     80,    120,
	   160,    240,    320,    480,    640,    960,   1280,   1920,
	  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
	 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
};

/* IBA table 46: credits per code; 31 means no end-to-end flow control. */
static const uint32_t credit_count[31] = {
	    0,     1,     2,     3,     4,     6,     8,    12,
	   16,    24,    32,    48,    64,    96,   128,   192,
	  256,   384,   512,   768,  1024,  1536,  2048,  3072,
	 4096,  6144,  8192, 12288, 16384, 24576, 32768,
};

static const char *const nak_name[] = {
	[DROCE_NAK_PSN_SEQ] = "PSN_SEQ",
	[DROCE_NAK_INVALID_REQ] = "INVALID_REQ",
	[DROCE_NAK_REM_ACCESS] = "REM_ACCESS",
	[DROCE_NAK_REM_OP] = "REM_OP",
	[DROCE_NAK_INVALID_RD] = "INVALID_RD",
};

uint32_t
droce_rnr_timer_usec(uint8_t code)
{
	return rnr_usec[code & DROCE_AETH_VALUE_MASK];
}

uint8_t
droce_rnr_timer_code(uint32_t usec)
{
	uint8_t code;

	for (code = 1; code < DROCE_DIM(rnr_usec); code++)
		if (rnr_usec[code] >= usec)
			return code;
	return 0;
}

uint32_t
droce_aeth_credits(uint8_t code)
{
	code &= DROCE_AETH_VALUE_MASK;
	return code == DROCE_AETH_CREDITS_UNLIMITED ? UINT32_MAX : credit_count[code];
}

uint8_t
droce_aeth_credit_code(uint32_t credits)
{
	uint8_t code = 0;

	if (credits == UINT32_MAX)
		return DROCE_AETH_CREDITS_UNLIMITED;	/* the inverse of droce_aeth_credits(31) */
	while (code + 1u < DROCE_DIM(credit_count) && credit_count[code + 1] <= credits)
		code++;
	return code;
}

const char *
droce_nak_code_name(uint8_t code)
{
	return code < DROCE_DIM(nak_name) ? nak_name[code] : "RESERVED";
}
