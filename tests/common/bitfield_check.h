/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_TEST_BITFIELD_CHECK_H
#define DROCE_TEST_BITFIELD_CHECK_H

/*
 * For the Check suites that pin wire layouts (tests/unit/wire's headers,
 * tests/unit/cm's MADs): a field described independently of the code under
 * test (its first bit and width, most significant bit first) and the checks
 * that its accessor pair round-trips every value, masks wider ones, and
 * leaves every other bit of the region, and the bytes around it, alone.
 */

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#define BITFIELD_MAX_BYTES 256	/* the largest region: a MAD */

struct bitfield_case {
	const char *name;
	unsigned int bytes;		/* the region the field lives in */
	unsigned int start;		/* first bit, from the region's bit 0 */
	unsigned int width;
	unsigned int pbits;		/* the setter parameter's bits; 1: a bool */
	void (*set)(void *region, uint64_t v);
	uint64_t (*get)(const void *region);
};

static inline uint64_t
bitfield_ones(unsigned int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* Write @p v into bits [start, start + width) of @p b, most significant bit first. */
static inline void
bitfield_put(uint8_t *b, unsigned int start, unsigned int width, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < width; i++) {
		unsigned int bit = start + i;
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));

		if ((v >> (width - 1 - i)) & 1)
			b[bit / 8] |= m;
		else
			b[bit / 8] &= (uint8_t)~m;
	}
}

/*
 * Set @p v on a region of @p bg bytes; check the bytes and the getter. The
 * region sits 2 bytes into an 8-aligned buffer: 2 mod 4, as behind
 * Ethernet + IP + UDP. What is stored is what the setter's parameter makes
 * of @p v (a bool, or a truncated integer), cut to the field's width.
 */
static inline void
bitfield_check_set(const struct bitfield_case *f, uint8_t bg, uint64_t v)
{
	alignas(8) uint8_t raw[2 + BITFIELD_MAX_BYTES + 2];
	uint8_t want[BITFIELD_MAX_BYTES];
	uint8_t *r = raw + 2;
	uint64_t param = f->pbits == 1 ? (v != 0) : (v & bitfield_ones(f->pbits));
	uint64_t stored = param & bitfield_ones(f->width);

	ck_assert_uint_le(f->bytes, BITFIELD_MAX_BYTES);
	memset(raw, bg, sizeof(raw));
	memset(want, bg, sizeof(want));
	bitfield_put(want, f->start, f->width, stored);
	f->set(r, v);
	ck_assert_msg(f->get(r) == stored, "%s: set %#llx on %#02x, got %#llx, want %#llx",
		      f->name, (unsigned long long)v, bg, (unsigned long long)f->get(r),
		      (unsigned long long)stored);
	ck_assert_msg(memcmp(r, want, f->bytes) == 0,
		      "%s: set %#llx on %#02x changed bits outside the field", f->name,
		      (unsigned long long)v, bg);
	ck_assert_msg(raw[0] == bg && raw[1] == bg && r[f->bytes] == bg,
		      "%s: wrote outside the region", f->name);
}

/* Edge and pattern values on four backgrounds. */
static inline void
bitfield_check_round_trips(const struct bitfield_case *f)
{
	static const uint8_t backgrounds[] = { 0x00, 0xff, 0x5a, 0xa5 };
	uint64_t max = bitfield_ones(f->width);
	const uint64_t values[] = {
		0, 1, max, max - 1, max >> 1, UINT64_C(1) << (f->width - 1),
		UINT64_C(0xa5a5a5a5a5a5a5a5) & max, UINT64_C(0x5a5a5a5a5a5a5a5a) & max,
		UINT64_C(0x0123456789abcdef) & max,
	};
	unsigned int b, v;

	for (b = 0; b < sizeof(backgrounds); b++)
		for (v = 0; v < sizeof(values) / sizeof(values[0]); v++)
			bitfield_check_set(f, backgrounds[b], values[v]);
}

/* Values wider than the field are cut to it, never spill into neighbours. */
static inline void
bitfield_check_masks(const struct bitfield_case *f)
{
	const uint64_t values[] = {
		UINT64_MAX, UINT64_C(0xaaaaaaaaaaaaaaaa), UINT64_C(0x5555555555555555),
		bitfield_ones(f->width) + 1,
	};
	unsigned int v;

	if (f->pbits == 1 || f->pbits == f->width)
		return;		/* bools and full-width parameters cannot overflow */
	for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		bitfield_check_set(f, 0x00, values[v]);
		bitfield_check_set(f, 0xff, values[v]);
	}
}

#endif /* DROCE_TEST_BITFIELD_CHECK_H */
