/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef TEST_WIRE_H
#define TEST_WIRE_H

/*
 * Shared by the lib/wire unit tests: one TCase constructor per topic file,
 * golden frames taken from real captures, and helpers that build frames and
 * parse them from the very end of readable memory.
 */

#include <check.h>
#include <stdint.h>

#include "droce_wire.h"

TCase *test_wire_hdr_tcase(void);
TCase *test_wire_opcode_tcase(void);
TCase *test_wire_icrc_tcase(void);
TCase *test_wire_parse_tcase(void);
TCase *test_wire_psn_tcase(void);
TCase *test_wire_gid_tcase(void);

/* ---- golden frames (test_wire_frames.c); each names its capture ---- */

struct tw_golden {
	const char *what;		/* "rc_send_pingpong.pcap #5: RC ACK" */
	const uint8_t *bytes;
	uint32_t caplen;		/* bytes captured */
	uint32_t wire_len;		/* bytes on the wire */
};

extern const struct tw_golden tw_rc_ack;		/* IPv4 RC ACKNOWLEDGE */
extern const struct tw_golden tw_rc_atomic_ack;	/* IPv4 RC ATOMIC_ACKNOWLEDGE */
extern const struct tw_golden tw_rc_cmp_swap;		/* IPv4 RC COMPARE_SWAP */
extern const struct tw_golden tw_rc_read_req;		/* IPv4 RC READ_REQUEST */
extern const struct tw_golden tw_ud_send;		/* IPv4 UD SEND_ONLY (CM MAD on QP1) */
extern const struct tw_golden tw_ud_send_bad_icrc;	/* IPv4 UD SEND_ONLY, corrupted ICRC */
extern const struct tw_golden tw_rc_write_first_snap;	/* snap-truncated RC WRITE_FIRST */
extern const struct tw_golden tw_ipv6_send;		/* IPv6 RC SEND_ONLY, Python reference */

/* Every defined opcode value, in table order: loop tests index this, not 0..255. */
extern const uint8_t tw_opcodes[];
extern const unsigned int tw_opcode_count;

/* Golden frames whose ICRC is correct and which are captured whole. */
extern const struct tw_golden *const tw_golden_good[];
extern const unsigned int tw_golden_good_count;

/* ---- helpers (test_wire_frames.c) ---- */

#define TW_FRAME_MAX 2048

/** Reference ICRC: a bitwise CRC-32 over 8 x 0xff and the masked bytes (A17.3.3). */
uint32_t tw_ref_icrc(const uint8_t *l3, uint32_t len);

/** What an IPv4 header's checksum field must hold (RFC 1071), computed without DPDK. */
uint16_t tw_ipv4_csum(const uint8_t *ip);

/** Fill @p pkt with distinctive field values; @p seed picks the pattern (0: all ones). */
void tw_pkt_fill(struct droce_pkt *pkt, uint8_t opcode, uint32_t flags, uint32_t payload_len,
		 unsigned int seed);

/** Build a whole frame: headers, a payload pattern, zero pad and ICRC. Returns its length. */
uint32_t tw_frame_build(struct droce_pkt *pkt, uint8_t *buf, uint32_t cap);

/** After a test edits a frame: recompute the IPv4 checksum (if IPv4) and the ICRC. */
void tw_frame_fix(uint8_t *frame, uint32_t len);

/**
 * Parse @p caplen bytes of @p frame placed so that the byte after them is
 * unreadable: once at the end of a page followed by a PROT_NONE page (any
 * build), once in an exact-size malloc() block (byte-exact under ASan). Both
 * results must agree; the first is returned.
 */
enum droce_wire_drop tw_parse_guarded(struct droce_pkt *pkt, const uint8_t *frame,
				      uint32_t caplen, uint32_t wire_len);

/** Assert that a parsed packet carries what the built one held (absent xhdrs ignored). */
void tw_assert_pkt_matches(const struct droce_pkt *got, const struct droce_pkt *want);

/** Offset of the IP header of an Ethernet frame (14, or 18 with one 802.1Q tag). */
uint32_t tw_l3_off(const uint8_t *frame);

#endif /* TEST_WIRE_H */
