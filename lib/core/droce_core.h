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

#endif /* DROCE_CORE_H */
