/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Address handles (an ibv_ah_attr checked and turned into the transport's
 * address vector) and multicast attach/detach of UD QPs.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_wire_gid.h"
#include "verbs_dev_priv.h"

/* the DSCP stays the QP's; only the ECN field follows the reaction point */
void
dev_av_ecn(struct droce_av *av, uint8_t rp_was, uint8_t rp_now)
{
	unsigned int bit = 1u << DROCE_TCLASS_PRIO(av->tclass);

	if (rp_now & bit)
		av->tclass = (uint8_t)((av->tclass & ~DROCE_ECN_MASK) | DROCE_ECN_ECT0);
	else if (rp_was & bit)
		av->tclass = (uint8_t)(av->tclass & ~DROCE_ECN_MASK);
}

int
dev_av_from_ah_attr(struct droce_dev *dev, const struct ibv_ah_attr *ah, struct droce_av *av)
{
	const uint8_t *dgid = ah->grh.dgid.raw;

	if (!ah->is_global || ah->grh.sgid_index >= dev->conf.n_gids ||
	    (ah->port_num != 0 && ah->port_num != 1))
		return EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(av->smac, dev->conf.mac, 6);
	memcpy(av->sgid, dev->conf.gid[ah->grh.sgid_index], 16);
	memcpy(av->dgid, dgid, 16);
	av->flow_label = ah->grh.flow_label & 0xfffff;
	av->tclass = ah->grh.traffic_class;
	dev_av_ecn(av, 0, dev->conf.ecn_rp_enable);
	av->hop_limit = ah->grh.hop_limit;
	av->ipv6 = !droce_gid_is_ipv4(dgid);
	if (droce_gid_is_ipv4(dgid) != droce_gid_is_ipv4(av->sgid))
		return EINVAL;		/* IPv4 to IPv6: no such path */
	/* the MAC may not be known yet: resolved again when a packet leaves */
	if (droce_gid_mcast_mac(dgid, av->dmac) < 0)
		dev->conf.port_ops->resolve(dev->conf.port_arg, dgid, av->dmac);
	return 0;
}

int
dev_create_ah(struct droce_client *cl, const struct droce_ctrl_create_ah_req *req,
	      struct droce_ctrl_create_ah_rep *rep)
{
	struct dev_pd *pd = dev_obj_get(cl, req->pd_handle, OBJ_PD);
	struct dev_ah *ah;
	int ret;

	if (pd == NULL)
		return EINVAL;
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return ENOMEM;
	ret = dev_av_from_ah_attr(cl->dev, &req->attr, &ah->av);
	if (ret == 0 && dev_obj_add(cl->dev, cl, &ah->o, OBJ_AH) < 0)
		ret = ENOMEM;
	if (ret != 0) {
		free(ah);
		return ret;
	}
	ah->pd = pd;
	pd->refs++;
	rep->ah_handle = ah->o.handle;
	return 0;
}

int
dev_mcast(struct droce_client *cl, const struct droce_ctrl_mcast_req *req, bool attach)
{
	struct droce_dev *dev = cl->dev;
	struct dev_qp *qp = dev_obj_get(cl, req->qp_handle, OBJ_QP);
	int ret;

	if (qp == NULL || qp->tqp.attr.type != IBV_QPT_UD || !droce_gid_is_mcast(req->gid.raw))
		return EINVAL;
	ret = attach ? droce_mcast_attach(dev->mcast, req->gid.raw, qp) :
		       droce_mcast_detach(dev->mcast, req->gid.raw, qp);
	if (ret < 0)
		return -ret;
	if (ret == 1 && attach)
		dev->conf.port_ops->mcast_join(dev->conf.port_arg, req->gid.raw);
	if (ret == 1 && !attach)
		dev->conf.port_ops->mcast_leave(dev->conf.port_arg, req->gid.raw);
	return 0;
}
