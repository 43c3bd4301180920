/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The device (droce_verbs_dev.h), the control plane's root: what it
 * answers QUERY_DEVICE and QUERY_PORT with, its life (key table, multicast
 * table, handle table, its engine), port state and device-wide events, the
 * hooks droced's CM sets. Control requests are decoded in
 * verbs_dev_request.c; the data plane is the engine's (droce_engine.h).
 */

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_engine_priv.h"

/* IBA path MTU for an Ethernet MTU (droce_path_mtu_bytes()), as enum ibv_mtu. */
static enum ibv_mtu
dev_path_mtu(uint32_t link_mtu)
{
	return (enum ibv_mtu)(__builtin_ctz(droce_path_mtu_bytes(link_mtu)) - 7);	/* 256 = 2^8: 1 */
}

static void
dev_fill_attrs(struct droce_dev *dev)
{
	struct ibv_device_attr *a = &dev->attr;
	struct ibv_port_attr *p = &dev->port;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce 0.1");
	a->node_guid = htobe64(dev->conf.node_guid);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	/*
	 * No IEEE OUI: IBA A3.3.1 lets a device without vendor-specific drivers
	 * use 0xFFFFFF, as Linux Soft-RoCE does. Under it the part ID and version
	 * are ours: part 0, because tools that match part IDs alone (perftest)
	 * must not take droce for a real adapter; the version is the ABI a client
	 * programs, that of the shared-memory rings.
	 */
	a->vendor_id = 0xffffff;
	a->vendor_part_id = 0;
	a->hw_ver = DROCE_SHM_ABI_VERSION;
	a->max_qp = DEV_MAX_QP;
	a->max_qp_wr = DEV_MAX_QP_WR;
	/* port events: droce_dev_port_state() */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
			      IBV_DEVICE_PORT_ACTIVE_EVENT;
	a->max_sge = DROCE_SHM_MAX_SGE;
	a->max_sge_rd = DROCE_SHM_MAX_SGE;
	a->max_cq = DEV_MAX_QP * 2;
	a->max_cqe = DEV_MAX_CQE;
	a->max_mr = DROCE_MAX_MR;
	a->max_pd = DEV_MAX_QP;
	a->max_qp_rd_atom = DROCE_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = DROCE_MAX_QP_RD_ATOM * DEV_MAX_QP;
	a->max_qp_init_rd_atom = DROCE_MAX_QP_RD_ATOM;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_mw = DROCE_MAX_MW;
	a->max_mcast_grp = 256;
	a->max_mcast_qp_attach = 64;
	a->max_total_mcast_qp_attach = 256 * 64;
	a->max_ah = DEV_MAX_QP * 4;
	a->max_srq = DEV_MAX_QP;
	a->max_srq_wr = DEV_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_SHM_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;

	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = dev_path_mtu(dev->conf.link_mtu);
	p->gid_tbl_len = (int)dev->conf.n_gids;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->max_msg_sz = 1u << 31;
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	p->active_width = 2;		/* 4X */
	p->active_speed = 32;		/* EDR: what software can claim, roughly */
	p->phys_state = 5;		/* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;

	dev->qp_lim.max_mtu = p->active_mtu;
	dev->qp_lim.max_rd_atomic = DROCE_MAX_QP_RD_ATOM;
	dev->qp_lim.max_dest_rd_atomic = DROCE_MAX_QP_RD_ATOM;
	dev->qp_lim.phys_port_cnt = 1;
	dev->qp_lim.pkey_tbl_len = 1;
	dev->qp_lim.gid_tbl_len = (int)dev->conf.n_gids;
}

int
droce_dev_create(const struct droce_dev_conf *conf, struct droce_dev **out)
{
	struct droce_dev *dev;
	int ret;

	unsigned int e;

	if (conf->n_gids == 0 || conf->n_gids > DROCE_DEV_MAX_GIDS || conf->port_ops == NULL ||
	    conf->n_engines > DEV_MAX_ENGINES)
		return -EINVAL;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return -ENOMEM;
	dev->conf = *conf;
	if (conf->dcqcn.dce_tcp_rtt == 0)	/* never set: its minimum is 1 */
		droce_dcqcn_params_default(&dev->conf.dcqcn);
	dev_fill_attrs(dev);
	ret = droce_key_table_create(DROCE_MAX_MR, DROCE_MAX_MW, conf->seed, &dev->keys);
	if (ret < 0)
		goto err_free;
	ret = droce_mcast_create(dev->attr.max_mcast_grp, dev->attr.max_mcast_qp_attach,
				 &dev->mcast);
	if (ret < 0)
		goto err_keys;
	ret = -ENOMEM;
	dev->objs = calloc(DEV_MAX_OBJS, sizeof(*dev->objs));
	if (dev->objs == NULL)
		goto err_mcast;
	ret = dev_reclaim_init(dev);
	if (ret < 0)
		goto err_objs;
	dev->n_eng = conf->n_engines > 1 ? conf->n_engines : 1;
	for (e = 0; e < dev->n_eng; e++) {
		ret = engine_create(dev, e, &dev->eng[e]);
		if (ret < 0)
			goto err_engines;
	}
	*out = dev;
	return 0;

err_engines:
	while (e-- > 0)
		engine_destroy(dev->eng[e]);
	dev_reclaim_fini(dev);
err_objs:
	free(dev->objs);
err_mcast:
	droce_mcast_free(dev->mcast);
err_keys:
	droce_key_table_destroy(dev->keys);
err_free:
	free(dev);
	return ret;
}

void
droce_dev_destroy(struct droce_dev *dev)
{
	unsigned int e;

	if (dev == NULL)
		return;
	while (dev->clients != NULL)
		droce_dev_client_free(dev->clients);
	dev_reclaim_fini(dev);		/* the engines poll no more */
	for (e = 0; e < dev->n_eng; e++)
		engine_destroy(dev->eng[e]);
	free(dev->objs);
	droce_mcast_free(dev->mcast);
	droce_key_table_destroy(dev->keys);
	free(dev);
}

void
droce_dev_fatal(struct droce_dev *dev)
{
	struct droce_client *cl;

	for (cl = dev->clients; cl != NULL; cl = cl->next)
		dev_async_event(cl, IBV_EVENT_DEVICE_FATAL, 1);
}

void
droce_dev_port_state(struct droce_dev *dev, bool up)
{
	enum ibv_port_state state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	struct droce_client *cl;

	if (dev->port.state == state)
		return;
	dev->port.state = state;
	dev->port.phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
	for (cl = dev->clients; cl != NULL; cl = cl->next)
		dev_async_event(cl, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, 1);
}

void
droce_dev_qpn_held_set(struct droce_dev *dev, droce_qpn_held_fn fn, void *arg)
{
	dev->qpn_held = fn;
	dev->qpn_held_arg = arg;
}


enum ibv_mtu
droce_dev_active_mtu(const struct droce_dev *dev)
{
	return dev->port.active_mtu;
}

void
droce_dev_query(const struct droce_dev *dev, struct ibv_device_attr *attr,
		struct ibv_port_attr *port)
{
	*attr = dev->attr;
	*port = dev->port;
}


/* QP1 is the daemon's: its engine hands MADs to the CM and sends the CM's. */

void
droce_dev_gsi_set(struct droce_dev *dev, droce_gsi_rx_fn fn, void *arg)
{
	dev->eng[0]->gsi_rx = fn;	/* QP1 is engine 0's: droced's CM runs on its worker */
	dev->eng[0]->gsi_arg = arg;
}

int
droce_dev_gsi_send(struct droce_dev *dev, const uint8_t sgid[16], const uint8_t dgid[16],
		   uint32_t dqpn, uint8_t tclass, uint8_t hop_limit, const void *payload,
		   uint32_t len)
{
	return engine_gsi_send(dev->eng[0], sgid, dgid, dqpn, tclass, hop_limit, payload, len);
}
