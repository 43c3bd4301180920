/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CORE_H
#define DROCE_CORE_H

/**
 * @file
 * libc-only basics shared by every droce library, the engine and the shim:
 * compiler helpers, the wire-struct attribute and small arithmetic helpers.
 * Nothing here depends on DPDK, so the client side can include it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * Wire structs are packed but 2-aligned: after a 14-byte Ethernet header the
 * transport headers sit at 2 mod 4. We spell the attribute ourselves because
 * DPDK renamed its own in 25.03 and this project builds against 22.11.
 */
#define DROCE_WIRE_PACKED __attribute__((packed, aligned(2)))

#define DROCE_CACHE_LINE 64

#define droce_likely(x)   __builtin_expect(!!(x), 1)
#define droce_unlikely(x) __builtin_expect(!!(x), 0)

/** Number of elements of a true array (not a pointer). */
#define DROCE_DIM(a) (sizeof(a) / sizeof((a)[0]))

#define DROCE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DROCE_MAX(a, b) ((a) > (b) ? (a) : (b))

/** Stringify after macro expansion. */
#define DROCE_STR_(x) #x
#define DROCE_STR(x) DROCE_STR_(x)

/** The smallest power of two not below @p n (1 for 0); @p n at most 2^31. */
static inline uint32_t
droce_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/**
 * The IBA path MTU in bytes (256 to 4096) that an Ethernet MTU of
 * @p link_mtu leaves room for after RoCEv2's headers (80 bytes, as rxe
 * counts them). droced's device and droce-testpmd both use it.
 */
static inline uint32_t
droce_path_mtu_bytes(uint32_t link_mtu)
{
	uint32_t room = link_mtu > 80 ? link_mtu - 80 : 0, p = 4096;

	while (p > 256 && p > room)
		p >>= 1;
	return p;
}

#endif /* DROCE_CORE_H */
