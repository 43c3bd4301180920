/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * droce_wire_opcode.h: the descriptor table. Loop tests run once per opcode
 * value; the list of valid opcodes and their header lengths is typed here a
 * second time from IBA vol 1 table 38 (and 1.5 for FLUSH and ATOMIC_WRITE,
 * annex A17.9.3 for the CNP) so that a slip in either copy shows.
 */

#include <string.h>

#include "droce_wire_opcode.h"
#include "test_wire.h"

static const struct {
	uint8_t code;
	const char *name;
	uint8_t hdr_len;	/* BTH + extension headers, IBA 9.2 */
} iba_opcodes[] = {
	{ 0x00, "RC_SEND_FIRST", 12 },
	{ 0x01, "RC_SEND_MIDDLE", 12 },
	{ 0x02, "RC_SEND_LAST", 12 },
	{ 0x03, "RC_SEND_LAST_IMM", 16 },
	{ 0x04, "RC_SEND_ONLY", 12 },
	{ 0x05, "RC_SEND_ONLY_IMM", 16 },
	{ 0x06, "RC_WRITE_FIRST", 28 },
	{ 0x07, "RC_WRITE_MIDDLE", 12 },
	{ 0x08, "RC_WRITE_LAST", 12 },
	{ 0x09, "RC_WRITE_LAST_IMM", 16 },
	{ 0x0a, "RC_WRITE_ONLY", 28 },
	{ 0x0b, "RC_WRITE_ONLY_IMM", 32 },
	{ 0x0c, "RC_READ_REQUEST", 28 },
	{ 0x0d, "RC_READ_RESPONSE_FIRST", 16 },
	{ 0x0e, "RC_READ_RESPONSE_MIDDLE", 12 },
	{ 0x0f, "RC_READ_RESPONSE_LAST", 16 },
	{ 0x10, "RC_READ_RESPONSE_ONLY", 16 },
	{ 0x11, "RC_ACKNOWLEDGE", 16 },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", 24 },
	{ 0x13, "RC_COMPARE_SWAP", 40 },
	{ 0x14, "RC_FETCH_ADD", 40 },
	{ 0x16, "RC_SEND_LAST_INV", 16 },
	{ 0x17, "RC_SEND_ONLY_INV", 16 },
	{ 0x1c, "RC_FLUSH", 32 },
	{ 0x1d, "RC_ATOMIC_WRITE", 28 },
	{ 0x20, "UC_SEND_FIRST", 12 },
	{ 0x21, "UC_SEND_MIDDLE", 12 },
	{ 0x22, "UC_SEND_LAST", 12 },
	{ 0x23, "UC_SEND_LAST_IMM", 16 },
	{ 0x24, "UC_SEND_ONLY", 12 },
	{ 0x25, "UC_SEND_ONLY_IMM", 16 },
	{ 0x26, "UC_WRITE_FIRST", 28 },
	{ 0x27, "UC_WRITE_MIDDLE", 12 },
	{ 0x28, "UC_WRITE_LAST", 12 },
	{ 0x29, "UC_WRITE_LAST_IMM", 16 },
	{ 0x2a, "UC_WRITE_ONLY", 28 },
	{ 0x2b, "UC_WRITE_ONLY_IMM", 32 },
	{ 0x64, "UD_SEND_ONLY", 20 },
	{ 0x65, "UD_SEND_ONLY_IMM", 24 },
	{ 0x81, "CNP", 28 },
};

#define FAMILY_MASK \
	(DROCE_OPF_SEND | DROCE_OPF_WRITE | DROCE_OPF_READ | DROCE_OPF_READ_RESP | \
	 DROCE_OPF_ATOMIC | DROCE_OPF_ATOMIC_ACK | DROCE_OPF_ACK | DROCE_OPF_FLUSH | \
	 DROCE_OPF_ATOMIC_WR | DROCE_OPF_CNP)

static bool
has(const struct droce_opcode_desc *d, enum droce_xhdr x)
{
	return d->xhdrs & (1u << x);
}

static bool
name_has(const struct droce_opcode_desc *d, const char *part)
{
	return strstr(d->name, part) != NULL;
}

START_TEST(test_opcode_desc_is_consistent)	/* once per opcode value _i */
{
	const struct droce_opcode_desc *d = &droce_opcode_desc[_i];
	unsigned int x, end = DROCE_BTH_BYTES;

	if (!(d->flags & DROCE_OPF_VALID)) {
		ck_assert_ptr_null(d->name);
		ck_assert_uint_eq(d->flags, 0);
		ck_assert_uint_eq(d->xhdrs, 0);
		return;
	}
	ck_assert_ptr_nonnull(d->name);
	ck_assert_uint_eq(d->xhdrs >> DROCE_X_COUNT, 0);
	for (x = 0; x < DROCE_X_COUNT; x++) {	/* enum order = IBA order */
		if (!has(d, x)) {
			ck_assert_msg(d->off[x] == 0, "%s: absent %s at %u", d->name,
				      droce_xhdr_name[x], d->off[x]);
			continue;
		}
		ck_assert_msg(d->off[x] == end, "%s: %s at %u, want %u", d->name,
			      droce_xhdr_name[x], d->off[x], end);
		end += droce_xhdr_bytes[x];
	}
	ck_assert_uint_eq(d->hdr_len, end);
	ck_assert_ptr_eq(droce_opcode((uint8_t)_i), d);
}
END_TEST

START_TEST(test_table_holds_exactly_the_iba_opcodes)
{
	unsigned int op, i, nvalid = 0;

	for (op = 0; op < 256; op++) {
		const struct droce_opcode_desc *d = droce_opcode((uint8_t)op);
		bool want = false;

		for (i = 0; i < DROCE_DIM(iba_opcodes); i++) {
			if (iba_opcodes[i].code != op)
				continue;
			want = true;
			ck_assert_msg(d->flags & DROCE_OPF_VALID, "0x%02x %s missing", op,
				      iba_opcodes[i].name);
			ck_assert_str_eq(d->name, iba_opcodes[i].name);
			ck_assert_msg(d->hdr_len == iba_opcodes[i].hdr_len,
				      "%s: hdr_len %u, want %u", d->name, d->hdr_len,
				      iba_opcodes[i].hdr_len);
		}
		if (!want)
			ck_assert_msg(!(d->flags & DROCE_OPF_VALID),
				      "0x%02x (%s) is not an IBA opcode", op, d->name);
		nvalid += !!(d->flags & DROCE_OPF_VALID);
	}
	ck_assert_uint_eq(nvalid, DROCE_DIM(iba_opcodes));
}
END_TEST

START_TEST(test_opcode_enum_names_its_descriptor)
{
#define OP(sym, code, xh, fl) \
	ck_assert_str_eq(droce_opcode_desc[DROCE_OP_##sym].name, #sym);
	DROCE_OPCODES(OP)
#undef OP
	ck_assert_uint_eq(DROCE_OP_RC_ACKNOWLEDGE, 0x11);
	ck_assert_uint_eq(DROCE_OP_UC_WRITE_ONLY_IMM, 0x2b);
	ck_assert_uint_eq(DROCE_OP_UD_SEND_ONLY_IMM, 0x65);
	ck_assert_uint_eq(DROCE_OP_CNP, 0x81);
}
END_TEST

START_TEST(test_xhdr_sizes_match_the_wire_structs)
{
	ck_assert_uint_eq(DROCE_X_COUNT, 9);
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_DETH], sizeof(struct droce_deth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_FETH], sizeof(struct droce_feth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_RETH], sizeof(struct droce_reth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_ATMETH], sizeof(struct droce_atmeth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_AETH], sizeof(struct droce_aeth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_ATMACK], sizeof(struct droce_atmack));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_IMMDT], sizeof(struct droce_immdt));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_IETH], sizeof(struct droce_ieth));
	ck_assert_uint_eq(droce_xhdr_bytes[DROCE_X_CNPPAD], 16);
	ck_assert_str_eq(droce_xhdr_name[DROCE_X_DETH], "DETH");
	ck_assert_str_eq(droce_xhdr_name[DROCE_X_CNPPAD], "CNPPAD");
	/* IBA 9.2 order: DETH first, FETH before RETH before ImmDt, AETH before AtomicAckETH */
	ck_assert_int_lt(DROCE_X_DETH, DROCE_X_FETH);
	ck_assert_int_lt(DROCE_X_FETH, DROCE_X_RETH);
	ck_assert_int_lt(DROCE_X_RETH, DROCE_X_IMMDT);
	ck_assert_int_lt(DROCE_X_AETH, DROCE_X_ATMACK);
}
END_TEST

START_TEST(test_write_only_imm_header_is_32_bytes)
{
	const struct droce_opcode_desc *d = droce_opcode(DROCE_OP_RC_WRITE_ONLY_IMM);

	ck_assert_uint_eq(d->hdr_len, 32);
	ck_assert_uint_eq(d->off[DROCE_X_RETH], 12);
	ck_assert_uint_eq(d->off[DROCE_X_IMMDT], 28);
	ck_assert_uint_eq(droce_opcode(DROCE_OP_UC_WRITE_ONLY_IMM)->hdr_len, 32);
}
END_TEST

START_TEST(test_ud_send_only_imm_header_is_24_bytes)
{
	const struct droce_opcode_desc *d = droce_opcode(DROCE_OP_UD_SEND_ONLY_IMM);

	ck_assert_uint_eq(d->hdr_len, 24);
	ck_assert_uint_eq(d->off[DROCE_X_DETH], 12);
	ck_assert_uint_eq(d->off[DROCE_X_IMMDT], 20);
}
END_TEST

START_TEST(test_atomic_acknowledge_header_is_24_bytes)
{
	const struct droce_opcode_desc *d = droce_opcode(DROCE_OP_RC_ATOMIC_ACKNOWLEDGE);

	ck_assert_uint_eq(d->hdr_len, 24);
	ck_assert_uint_eq(d->off[DROCE_X_AETH], 12);
	ck_assert_uint_eq(d->off[DROCE_X_ATMACK], 16);
}
END_TEST

START_TEST(test_flush_puts_feth_at_12_and_reth_at_16)
{
	const struct droce_opcode_desc *d = droce_opcode(DROCE_OP_RC_FLUSH);

	ck_assert_uint_eq(d->off[DROCE_X_FETH], 12);
	ck_assert_uint_eq(d->off[DROCE_X_RETH], 16);
	ck_assert_uint_eq(d->hdr_len, 32);
	ck_assert(!(d->flags & DROCE_OPF_PAYLOAD));
}
END_TEST

START_TEST(test_cnp_header_is_28_bytes)
{
	const struct droce_opcode_desc *d = droce_opcode(DROCE_OP_CNP);

	ck_assert_uint_eq(d->hdr_len, 28);
	ck_assert_uint_eq(d->off[DROCE_X_CNPPAD], 12);
	ck_assert_uint_eq(d->flags & (DROCE_OPF_REQ | DROCE_OPF_RESP | DROCE_OPF_PAYLOAD), 0);
	ck_assert(d->flags & DROCE_OPF_CNP);
	ck_assert_uint_eq(droce_opcode_transport(DROCE_OP_CNP), DROCE_TR_CNP);
}
END_TEST

/*
 * The flags of every valid opcode follow from its family and position:
 * one family each; REQ/RESP by family; PAYLOAD only where IBA allows data;
 * START/END from the _FIRST/_MIDDLE/_LAST/_ONLY suffix; each extension
 * header exactly where IBA 9.2 puts it; a receive completion only at the
 * end of a SEND or of a WRITE with immediate, always with a receive WQE.
 */
START_TEST(test_opcode_flags_follow_from_family_and_position)	/* _i: defined opcode */
{
	const uint8_t op = tw_opcodes[_i];
	const struct droce_opcode_desc *d = droce_opcode(op);
	uint32_t fl = d->flags, fam = fl & FAMILY_MASK;
	bool first, middle, last, start, end, imm;

	ck_assert(fl & DROCE_OPF_VALID);
	ck_assert_msg(fam != 0 && (fam & (fam - 1)) == 0, "%s: family %#x", d->name, fam);

	if (fam == DROCE_OPF_CNP)
		ck_assert_msg(!(fl & (DROCE_OPF_REQ | DROCE_OPF_RESP)), "%s", d->name);
	else if (fam & (DROCE_OPF_READ_RESP | DROCE_OPF_ATOMIC_ACK | DROCE_OPF_ACK))
		ck_assert_msg((fl & (DROCE_OPF_REQ | DROCE_OPF_RESP)) == DROCE_OPF_RESP, "%s",
			      d->name);
	else
		ck_assert_msg((fl & (DROCE_OPF_REQ | DROCE_OPF_RESP)) == DROCE_OPF_REQ, "%s",
			      d->name);

	ck_assert_msg(!!(fl & DROCE_OPF_PAYLOAD) ==
		      !!(fam & (DROCE_OPF_SEND | DROCE_OPF_WRITE | DROCE_OPF_READ_RESP |
				DROCE_OPF_ATOMIC_WR)), "%s: PAYLOAD", d->name);

	first = name_has(d, "_FIRST");
	middle = name_has(d, "_MIDDLE");
	last = name_has(d, "_LAST");
	start = !!(fl & DROCE_OPF_START);
	end = !!(fl & DROCE_OPF_END);
	if (first)
		ck_assert_msg(start && !end, "%s: FIRST", d->name);
	else if (middle)
		ck_assert_msg(!start && !end, "%s: MIDDLE", d->name);
	else if (last)
		ck_assert_msg(!start && end, "%s: LAST", d->name);
	else		/* _ONLY, and single-packet operations */
		ck_assert_msg(start && end, "%s: ONLY", d->name);

	imm = name_has(d, "_IMM");
	ck_assert_msg(has(d, DROCE_X_IMMDT) == imm, "%s: ImmDt", d->name);
	ck_assert_msg(!!(fl & DROCE_OPF_IMM) == imm, "%s: IMM", d->name);
	ck_assert_msg(has(d, DROCE_X_IETH) == name_has(d, "_INV"), "%s: IETH", d->name);
	ck_assert_msg(!!(fl & DROCE_OPF_INV) == name_has(d, "_INV"), "%s: INV", d->name);
	ck_assert_msg(has(d, DROCE_X_DETH) == (droce_opcode_transport(op) == DROCE_TR_UD),
		      "%s: DETH", d->name);
	ck_assert_msg(has(d, DROCE_X_FETH) == (fam == DROCE_OPF_FLUSH), "%s: FETH", d->name);
	ck_assert_msg(has(d, DROCE_X_RETH) ==
		      ((fam == DROCE_OPF_WRITE && start) || fam == DROCE_OPF_READ ||
		       fam == DROCE_OPF_FLUSH || fam == DROCE_OPF_ATOMIC_WR), "%s: RETH", d->name);
	ck_assert_msg(has(d, DROCE_X_ATMETH) == (fam == DROCE_OPF_ATOMIC), "%s: AtomicETH",
		      d->name);
	ck_assert_msg(has(d, DROCE_X_AETH) ==
		      (fam == DROCE_OPF_ACK || fam == DROCE_OPF_ATOMIC_ACK ||
		       (fam == DROCE_OPF_READ_RESP && !middle)), "%s: AETH", d->name);
	ck_assert_msg(has(d, DROCE_X_ATMACK) == (fam == DROCE_OPF_ATOMIC_ACK), "%s: AtomicAckETH",
		      d->name);
	ck_assert_msg(has(d, DROCE_X_CNPPAD) == (fam == DROCE_OPF_CNP), "%s: CNP pad", d->name);

	ck_assert_msg(!!(fl & DROCE_OPF_RECV_COMP) ==
		      ((fam == DROCE_OPF_SEND && end) || (fam == DROCE_OPF_WRITE && imm)),
		      "%s: RECV_COMP", d->name);
	if (fl & DROCE_OPF_RECV_COMP)
		ck_assert_msg(fl & DROCE_OPF_RQ_WQE, "%s: completes without a WQE", d->name);
	if (fl & DROCE_OPF_RQ_WQE)
		ck_assert_msg(fam == DROCE_OPF_SEND || (fam == DROCE_OPF_WRITE && imm),
			      "%s: RQ_WQE on an opcode that never uses one", d->name);
	if (fam == DROCE_OPF_SEND && start)
		ck_assert_msg(fl & DROCE_OPF_RQ_WQE, "%s: a SEND starts without a WQE", d->name);
}
END_TEST

START_TEST(test_transport_matches_the_name_prefix)
{
	unsigned int op;

	for (op = 0; op < 256; op++) {
		const struct droce_opcode_desc *d = droce_opcode((uint8_t)op);
		enum droce_transport t = droce_opcode_transport((uint8_t)op);

		ck_assert_uint_eq(t, op & 0xe0);
		if (!(d->flags & DROCE_OPF_VALID))
			continue;
		if (strncmp(d->name, "RC_", 3) == 0)
			ck_assert_uint_eq(t, DROCE_TR_RC);
		else if (strncmp(d->name, "UC_", 3) == 0)
			ck_assert_uint_eq(t, DROCE_TR_UC);
		else if (strncmp(d->name, "UD_", 3) == 0)
			ck_assert_uint_eq(t, DROCE_TR_UD);
		else
			ck_assert_msg(strcmp(d->name, "CNP") == 0 && t == DROCE_TR_CNP, "%s",
				      d->name);
		ck_assert_msg(t != DROCE_TR_RD, "%s: RoCE has no RD", d->name);
	}
}
END_TEST

START_TEST(test_uc_has_no_read_atomic_ack_flush_or_invalidate)
{
	const uint32_t forbidden = DROCE_OPF_READ | DROCE_OPF_READ_RESP | DROCE_OPF_ATOMIC |
				   DROCE_OPF_ATOMIC_ACK | DROCE_OPF_ACK | DROCE_OPF_FLUSH |
				   DROCE_OPF_ATOMIC_WR | DROCE_OPF_INV | DROCE_OPF_RESP;
	unsigned int op, n = 0;

	for (op = DROCE_TR_UC; op < DROCE_TR_UC + 0x20; op++) {
		const struct droce_opcode_desc *d = droce_opcode((uint8_t)op);

		if (!(d->flags & DROCE_OPF_VALID))
			continue;
		n++;
		ck_assert_msg(!(d->flags & forbidden), "%s: flags %#x", d->name, d->flags);
	}
	ck_assert_uint_eq(n, 12);	/* SEND and WRITE families only */
}
END_TEST

START_TEST(test_ud_has_only_send_only_with_deth)
{
	unsigned int op, n = 0;

	for (op = DROCE_TR_UD; op < DROCE_TR_UD + 0x20; op++) {
		const struct droce_opcode_desc *d = droce_opcode((uint8_t)op);

		if (!(d->flags & DROCE_OPF_VALID))
			continue;
		n++;
		ck_assert(d->flags & DROCE_OPF_SEND);
		ck_assert_uint_eq(d->flags & (DROCE_OPF_START | DROCE_OPF_END),
				  DROCE_OPF_START | DROCE_OPF_END);
		ck_assert_uint_eq(d->off[DROCE_X_DETH], DROCE_BTH_BYTES);
		ck_assert(d->flags & DROCE_OPF_RECV_COMP);
	}
	ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(test_receive_flags_sit_on_the_right_opcodes)
{
	/* completes a receive WQE */
	static const uint8_t comp[] = {
		0x02, 0x03, 0x04, 0x05, 0x09, 0x0b, 0x16, 0x17,
		0x22, 0x23, 0x24, 0x25, 0x29, 0x2b, 0x64, 0x65,
	};
	/* never touch the receive queue */
	static const uint8_t no_wqe[] = {
		0x06, 0x07, 0x08, 0x0a, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x1c, 0x1d, 0x26, 0x27, 0x28, 0x2a, 0x81,
	};
	unsigned int i;

	for (i = 0; i < DROCE_DIM(comp); i++) {
		const struct droce_opcode_desc *d = droce_opcode(comp[i]);

		ck_assert_msg(d->flags & DROCE_OPF_RECV_COMP, "%s", d->name);
		ck_assert_msg(d->flags & DROCE_OPF_RQ_WQE, "%s", d->name);
	}
	for (i = 0; i < DROCE_DIM(no_wqe); i++) {
		const struct droce_opcode_desc *d = droce_opcode(no_wqe[i]);

		ck_assert_msg(!(d->flags & (DROCE_OPF_RQ_WQE | DROCE_OPF_RECV_COMP)), "%s",
			      d->name);
	}
	/* a multi-packet SEND takes its WQE at the first packet */
	ck_assert(droce_opcode(DROCE_OP_RC_SEND_FIRST)->flags & DROCE_OPF_RQ_WQE);
	ck_assert(!(droce_opcode(DROCE_OP_RC_SEND_FIRST)->flags & DROCE_OPF_RECV_COMP));
	ck_assert(droce_opcode(DROCE_OP_UC_SEND_FIRST)->flags & DROCE_OPF_RQ_WQE);
	/* ATOMIC_WRITE carries data but is not a SEND */
	ck_assert(droce_opcode(DROCE_OP_RC_ATOMIC_WRITE)->flags & DROCE_OPF_PAYLOAD);
	ck_assert(droce_opcode(DROCE_OP_RC_ATOMIC_WRITE)->flags & DROCE_OPF_ATOMIC_WR);
}
END_TEST

START_TEST(test_opcode_init_is_idempotent_and_rederives_offsets)
{
	static struct droce_opcode_desc saved[256];
	struct droce_opcode_desc *flush = &droce_opcode_desc[DROCE_OP_RC_FLUSH];

	memcpy(saved, droce_opcode_desc, sizeof(saved));
	droce_wire_opcode_init();
	ck_assert_mem_eq(saved, droce_opcode_desc, sizeof(saved));

	flush->hdr_len = 0;
	flush->off[DROCE_X_RETH] = 0;
	flush->off[DROCE_X_DETH] = 99;		/* an absent header */
	droce_opcode_desc[0x15].hdr_len = 0;	/* an invalid opcode */
	droce_wire_opcode_init();
	ck_assert_mem_eq(saved, droce_opcode_desc, sizeof(saved));
}
END_TEST

TCase *
test_wire_opcode_tcase(void)
{
	TCase *tc = tcase_create("opcode");

	tcase_add_loop_test(tc, test_opcode_desc_is_consistent, 0, 256);
	tcase_add_test(tc, test_table_holds_exactly_the_iba_opcodes);
	tcase_add_test(tc, test_opcode_enum_names_its_descriptor);
	tcase_add_test(tc, test_xhdr_sizes_match_the_wire_structs);
	tcase_add_test(tc, test_write_only_imm_header_is_32_bytes);
	tcase_add_test(tc, test_ud_send_only_imm_header_is_24_bytes);
	tcase_add_test(tc, test_atomic_acknowledge_header_is_24_bytes);
	tcase_add_test(tc, test_flush_puts_feth_at_12_and_reth_at_16);
	tcase_add_test(tc, test_cnp_header_is_28_bytes);
	tcase_add_loop_test(tc, test_opcode_flags_follow_from_family_and_position,
			    0, (int)tw_opcode_count);
	tcase_add_test(tc, test_transport_matches_the_name_prefix);
	tcase_add_test(tc, test_uc_has_no_read_atomic_ack_flush_or_invalidate);
	tcase_add_test(tc, test_ud_has_only_send_only_with_deth);
	tcase_add_test(tc, test_receive_flags_sit_on_the_right_opcodes);
	tcase_add_test(tc, test_opcode_init_is_idempotent_and_rederives_offsets);
	return tc;
}
