/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Queries: device, port, GID table, P_Key table. Each is one control call
 * (QUERY_DEVICE, QUERY_PORT, QUERY_GID); the daemon's answers are
 * rdma-core's own structs. The return conventions are rdma-core's, which
 * differ per call: ibv_query_gid() and ibv_query_gid_type() return -1,
 * _ibv_query_gid_ex() a positive errno (ENODATA for an empty entry),
 * _ibv_query_gid_table() a count or a negative errno. No state; any thread.
 */

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "shim_priv.h"

/* Completion timestamps are engine nanoseconds: a 1 GHz "HCA clock", in kHz. */
#define SHIM_HCA_CORE_CLOCK_KHZ	1000000u

int
shim_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
		     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct droce_ctrl_query_device_rep rep;
	struct ibv_device_attr_ex full;
	int ret;

	if (input != NULL && input->comp_mask != 0)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	ret = shim_call(to_sctx(ctx), DROCE_CTRL_QUERY_DEVICE, NULL, 0, NULL, 0, &rep,
			sizeof(rep), NULL, 0);
	if (ret != 0)
		return ret;

	memset(&full, 0, sizeof(full));
	full.orig_attr = rep.attr;
	full.completion_timestamp_mask = UINT64_MAX;
	full.hca_core_clock = SHIM_HCA_CORE_CLOCK_KHZ;
	full.device_cap_flags_ex = rep.device_cap_flags_ex;
	full.phys_port_cnt_ex = rep.attr.phys_port_cnt;
	full.max_dm_size = SHIM_MAX_DM_SIZE;
	full.packet_pacing_caps = rep.packet_pacing_caps;
	/*
	 * On-demand paging (shim_odp.c): droced copies to and from the pages at
	 * each access, which works for every transfer but atomics (a copy
	 * through the kernel is not atomic against our CPUs: an atomic on an
	 * ODP MR is a remote access error). XRC: none (xrc_odp_caps 0).
	 */
	full.odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	full.odp_caps.per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_SRQ_RECV;
	full.odp_caps.per_transport_caps.uc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_SRQ_RECV;
	full.odp_caps.per_transport_caps.ud_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV;
	if (attr_size > sizeof(full))
		attr_size = sizeof(full);
	memcpy(attr, &full, attr_size);
	return 0;
}

int shim_query_device_1_1(struct ibv_context *ctx, struct ibv_device_attr *attr);
SHIM_SYMVER_DEFAULT(shim_query_device_1_1, ibv_query_device, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_device_1_1(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	return shim_query_device_ex(ctx, NULL, (struct ibv_device_attr_ex *)(void *)attr,
				    sizeof(*attr));
}

int
shim_query_port(struct ibv_context *ctx, uint8_t port_num, struct ibv_port_attr *attr,
		size_t attr_len)
{
	struct droce_ctrl_query_port_req req = { .port_num = port_num };
	struct droce_ctrl_query_port_rep rep;
	int ret;

	ret = shim_call(to_sctx(ctx), DROCE_CTRL_QUERY_PORT, &req, sizeof(req), NULL, 0, &rep,
			sizeof(rep), NULL, 0);
	if (ret != 0)
		return ret;
	/* Old binaries pass a shorter struct; newer ones may pass a longer one. */
	if (attr_len > sizeof(rep.attr)) {
		memset(attr, 0, attr_len);
		attr_len = sizeof(rep.attr);
	}
	memcpy(attr, &rep.attr, attr_len);
	return 0;
}

/* ibv_query_port@@IBVERBS_1.1 takes the struct as it was before port_cap_flags2. */
int shim_query_port_compat(struct ibv_context *ctx, uint8_t port_num,
			   struct _compat_ibv_port_attr *attr);
SHIM_SYMVER_DEFAULT(shim_query_port_compat, ibv_query_port, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_port_compat(struct ibv_context *ctx, uint8_t port_num,
		       struct _compat_ibv_port_attr *attr)
{
	return shim_query_port(ctx, port_num, (struct ibv_port_attr *)(void *)attr,
			       offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* One GID entry. @return 0, ENODATA for an empty slot, or another positive errno. */
int
shim_query_gid_entry(struct ibv_context *ctx, uint32_t port_num, uint32_t index,
		     struct ibv_gid_entry *entry)
{
	struct droce_ctrl_query_gid_req req = { .port_num = port_num, .index = index };
	struct droce_ctrl_query_gid_rep rep;
	int ret;

	ret = shim_call(to_sctx(ctx), DROCE_CTRL_QUERY_GID, &req, sizeof(req), NULL, 0, &rep,
			sizeof(rep), NULL, 0);
	if (ret != 0)
		return ret;
	memset(entry, 0, sizeof(*entry));
	entry->gid = rep.gid;
	entry->gid_index = index;
	entry->port_num = port_num;
	entry->gid_type = rep.gid_type;
	entry->ndev_ifindex = 0;	/* droce's port is no kernel netdev */
	return rep.valid ? 0 : ENODATA;
}

SHIM_EXPORT int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	int ret;

	if (flags != 0)
		return EINVAL;
	if (entry_size < sizeof(e))
		return EINVAL;
	ret = shim_query_gid_entry(ctx, port_num, gid_index, &e);
	if (ret != 0)
		return ret;
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

SHIM_EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, size_t max_entries,
		     uint32_t flags, size_t entry_size)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_gid_entry e;
	size_t n = 0;
	unsigned int port;
	int i, ret;

	if (flags != 0)
		return -EINVAL;
	if (entry_size < sizeof(e))
		return -EINVAL;
	ret = shim_query_device_1_1(ctx, &dattr);
	if (ret != 0)
		return -ret;
	for (port = 1; port <= dattr.phys_port_cnt; port++) {
		ret = shim_query_port(ctx, (uint8_t)port, &pattr, sizeof(pattr));
		if (ret != 0)
			return -ret;
		for (i = 0; i < pattr.gid_tbl_len; i++) {
			ret = shim_query_gid_entry(ctx, port, (uint32_t)i, &e);
			if (ret == ENODATA)
				continue;
			if (ret != 0)
				return -ret;
			if (n == max_entries)
				return -EINVAL;
			memset((char *)entries + n * entry_size, 0, entry_size);
			memcpy((char *)entries + n * entry_size, &e, sizeof(e));
			n++;
		}
	}
	return (ssize_t)n;
}

int shim_query_gid_1_1(struct ibv_context *ctx, uint8_t port_num, int index, union ibv_gid *gid);
SHIM_SYMVER_DEFAULT(shim_query_gid_1_1, ibv_query_gid, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_gid_1_1(struct ibv_context *ctx, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int ret;

	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = shim_query_gid_entry(ctx, port_num, (uint32_t)index, &e);
	if (ret == ENODATA) {		/* rdma-core: an empty slot reads as zeros */
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (ret != 0) {
		errno = ret;
		return -1;
	}
	*gid = e.gid;
	return 0;
}

/* IBVERBS_PRIVATE_34, but ibv_devinfo and librdmacm call it. */
SHIM_EXPORT int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port_num, unsigned int index,
		   enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int ret;

	ret = shim_query_gid_entry(ctx, port_num, index, &e);
	if (ret == ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret != 0) {
		errno = ret;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2 :
						      IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/*
 * RoCE has one P_Key, the default full-membership 0xffff, at index 0; the
 * control protocol has no P_Key query.
 */
int shim_query_pkey_1_1(struct ibv_context *ctx, uint8_t port_num, int index, __be16 *pkey);
SHIM_SYMVER_DEFAULT(shim_query_pkey_1_1, ibv_query_pkey, "IBVERBS_1.1");
SHIM_EXPORT int
shim_query_pkey_1_1(struct ibv_context *ctx, uint8_t port_num, int index, __be16 *pkey)
{
	(void)ctx;
	(void)port_num;
	if (index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);
	return 0;
}

int shim_get_pkey_index_1_5(struct ibv_context *ctx, uint8_t port_num, __be16 pkey);
SHIM_SYMVER_DEFAULT(shim_get_pkey_index_1_5, ibv_get_pkey_index, "IBVERBS_1.5");
SHIM_EXPORT int
shim_get_pkey_index_1_5(struct ibv_context *ctx, uint8_t port_num, __be16 pkey)
{
	__be16 p;
	int i, ret;

	for (i = 0;; i++) {
		ret = shim_query_pkey_1_1(ctx, port_num, i, &p);
		if (ret < 0)
			return ret;
		if (p == pkey)
			return i;
	}
}
