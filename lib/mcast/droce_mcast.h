/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_MCAST_H
#define DROCE_MCAST_H

/**
 * @file
 * Multicast groups of one device: MGID -> the UD QPs attached to it.
 *
 * A QP attached twice to a group is one member (it gets one copy). The
 * first attach to a group and the last detach are reported to the caller,
 * which then programs the NIC's multicast MAC filter and sends the IGMP /
 * MLD report. Received packets addressed to a group are delivered to every
 * member (droce_mcast_members()).
 *
 * Not thread-safe: the control thread changes the table only through the
 * worker that also reads it (a command on the worker's queue).
 */

#include <stdbool.h>
#include <stdint.h>

#include "droce_wire_gid.h"

struct droce_mcast;

/**
 * Create a table for @p max_groups groups of at most @p max_members QPs.
 * @return 0, -EINVAL (a zero limit) or -ENOMEM.
 */
int droce_mcast_create(uint32_t max_groups, uint32_t max_members, struct droce_mcast **out);

void droce_mcast_free(struct droce_mcast *m);

/**
 * Attach @p qp to group @p mgid.
 * @return 1 if the group is new on this device, 0 if it existed (attaching
 *         a member again changes nothing), -EINVAL if @p mgid is not a
 *         multicast GID, -ENOMEM if the group or member limit is reached.
 */
int droce_mcast_attach(struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES], void *qp);

/**
 * Detach @p qp from group @p mgid.
 * @return 1 if the group is now empty and gone, 0 if it has other members,
 *         -EINVAL if @p qp was not attached to @p mgid.
 */
int droce_mcast_detach(struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES], void *qp);

/**
 * Detach @p qp from every group (its QP is being destroyed); @p gone is
 * called with each group that became empty.
 */
void droce_mcast_detach_all(struct droce_mcast *m, void *qp,
			    void (*gone)(const uint8_t mgid[DROCE_GID_BYTES], void *arg), void *arg);

/**
 * Members of @p mgid: up to @p max of them into @p qps.
 * @return the number of members (0 if the group does not exist here).
 */
unsigned int droce_mcast_members(const struct droce_mcast *m, const uint8_t mgid[DROCE_GID_BYTES],
				 void **qps, unsigned int max);

/** Whether @p qp is a member of any group (a walk of the table: control path only). */
bool droce_mcast_qp_attached(const struct droce_mcast *m, const void *qp);

/** Number of groups with at least one member. */
uint32_t droce_mcast_groups(const struct droce_mcast *m);

#endif /* DROCE_MCAST_H */
