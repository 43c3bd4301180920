/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The opcode descriptor table (droce_wire_opcode.h). It is written once, by
 * a load-time constructor, before any lcore or thread exists; afterwards
 * every thread only reads it.
 */

#include "droce_wire_opcode.h"

const uint8_t droce_xhdr_bytes[DROCE_X_COUNT] = {
#define X(sym, bytes) [DROCE_X_##sym] = (bytes),
	DROCE_XHDRS(X)
#undef X
};

const char *const droce_xhdr_name[DROCE_X_COUNT] = {
#define X(sym, bytes) [DROCE_X_##sym] = #sym,
	DROCE_XHDRS(X)
#undef X
};

struct droce_opcode_desc droce_opcode_desc[256] = {
#define OP(sym, code, xh, fl) \
	[code] = { .name = #sym, .xhdrs = (xh), .flags = (fl) | DROCE_OPF_VALID },
	DROCE_OPCODES(OP)
#undef OP
};

void
droce_wire_opcode_init(void)
{
	unsigned int op, x;

	for (op = 0; op < DROCE_DIM(droce_opcode_desc); op++) {
		struct droce_opcode_desc *d = &droce_opcode_desc[op];
		uint8_t off = DROCE_BTH_BYTES;

		for (x = 0; x < DROCE_X_COUNT; x++) {
			d->off[x] = 0;
			if (d->xhdrs & (1u << x)) {
				d->off[x] = off;
				off += droce_xhdr_bytes[x];
			}
		}
		d->hdr_len = off;
	}
}

static void __attribute__((constructor))
wire_opcode_ctor(void)
{
	droce_wire_opcode_init();
}
