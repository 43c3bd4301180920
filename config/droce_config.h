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
#define DROCE_MAX_FRAME_BYTES	(4096 + 128)

/*
 * Verbs object limits (lib/verbs). MRs and MWs draw their keys from one
 * 24-bit index space (index 0 is never handed out), so their sum must stay
 * below 2^24; the key table costs about 24 bytes per entry.
 */
/** Memory regions the engine holds at once (ibv_query_device max_mr). */
#define DROCE_MAX_MR		65536
/** Memory windows the engine holds at once (ibv_query_device max_mw). */
#define DROCE_MAX_MW		16384
/**
 * RDMA READ and atomic requests outstanding per QP, as initiator
 * (max_qp_init_rd_atom) and as responder (max_qp_rd_atom).
 */
#define DROCE_MAX_QP_RD_ATOM	128	/* as Linux Soft-RoCE: perftest RTS uses the peer's value */

/* Device limits reported by ibv_query_device and enforced by droced. */
#define DROCE_MAX_QP		(1u << 14)	/**< QPs per device (max_qp) */
#define DROCE_MAX_QP_WR		4096		/**< WRs per send or receive queue */
/*
 * Entries per CQ: libfabric's ofi_rxm sizes its CQ for 256 peers of 384
 * sends and receives each (196 608 entries); a ring's pages are the
 * client's memfd (64 bytes an entry), touched once when it is made.
 */
#define DROCE_MAX_CQE		(1u << 20)
#define DROCE_MAX_SRQ_WR	4096		/**< WRs per SRQ */
#define DROCE_MAX_OBJS		(1u << 17)	/**< handles of all kinds, all clients */

#endif /* DROCE_CONFIG_H */
