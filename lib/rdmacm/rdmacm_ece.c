/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Enhanced Connection Establishment (ECE), as rdma-core 44's librdmacm
 * offers it to applications that manage their QPs themselves (no id->qp):
 * a vendor ID and options set before rdma_connect / rdma_accept travel in
 * the REQ / REP (droced's CM puts them where Linux's does: the Vendor ID
 * field and the MAD header's attribute modifier), and the peer's arrive
 * with CONNECT_REQUEST / CONNECT_RESPONSE. droce's verbs have no ECE of
 * their own, so an id with a QP has nothing to negotiate: EINVAL, as
 * rdma-core answers there too.
 */

#include <errno.h>

#include <rdma/rdma_cma.h>

#include "rdmacm_priv.h"

RDMACM_EXPORT int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;

	if (i == NULL || id->qp != NULL || ece == NULL || ece->vendor_id == 0 ||
	    ece->comp_mask != 0)
		return rdmacm_err(EINVAL);
	i->local_ece.vendor_id = ece->vendor_id;
	i->local_ece.options = ece->options;
	return 0;
}

/* What the peer's REQ or REP said; vendor ID 0 when it sent none. */
RDMACM_EXPORT int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	struct rdmacm_id *i = (struct rdmacm_id *)id;

	if (i == NULL || id->qp != NULL || ece == NULL)
		return rdmacm_err(EINVAL);
	ece->vendor_id = i->remote_ece.vendor_id;
	ece->options = i->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

/* IBA's REJ reason 35, as rdma-core names it (lib/cm: DROCE_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED) */
#define RDMACM_REJ_VENDOR_OPTION_NOT_SUPPORTED	35

/* rdma_reject with REJ reason 35, "vendor option not supported". */
RDMACM_EXPORT int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdmacm_reject(id, private_data, private_data_len,
			     RDMACM_REJ_VENDOR_OPTION_NOT_SUPPORTED);
}
