/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CONFIG_H
#define DROCE_CONFIG_H

/**
 * @file
 * Compile-time limits, as DPDK's config/rte_config.h. Runtime settings
 * (port, addresses, lcores) live in droced.conf.
 */

/** Largest frame the engine builds or accepts: 4096 path MTU + headers + VLAN. */
#define DROCE_MAX_FRAME_BYTES	4096 + 128

#endif /* DROCE_CONFIG_H */
