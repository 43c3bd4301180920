/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The function-pointer tables and everything droce does not support.
 *
 * shim_ops_init() fills every slot of ibv_context.ops and struct
 * verbs_context: rdma-core's inline helpers call through them, and a NULL
 * slot would crash the caller. What droce does not do returns EOPNOTSUPP
 * (or NULL with errno EOPNOTSUPP), as rdma-core's own dummy ops do.
 *
 * The rest of the exported ABI that has no meaning here:
 *  - the IBVERBS_1.0 compatibility entry points (binaries linked in 2006
 *    against the 1.0 structs): ibv_get_device_list@IBVERBS_1.0 finds no
 *    device, so nothing else of that ABI can be reached; the rest fail
 *    cleanly;
 *  - IBVERBS_PRIVATE_34, the interface between libibverbs and its kernel
 *    providers (ibv_cmd_*, verbs_*): droce loads no provider; the calls
 *    fail with EOPNOTSUPP. ibv_query_gid_type lives in shim_query.c.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "shim_priv.h"

/* Fill a void *(*)(void) compat slot with a real function, as rdma-core does. */
#define COMPAT_FN(f) ((void *(*)(void))(void (*)(void))(f))

/* ---- unsupported verbs_context operations ---- */

static struct ibv_mr *
op_alloc_null_mr(struct ibv_pd *pd)
{
	(void)pd;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_read_counters(struct ibv_counters *counters, uint64_t *values, uint32_t n, uint32_t flags)
{
	(void)counters;
	(void)values;
	(void)n;
	(void)flags;
	return EOPNOTSUPP;
}

static int
op_attach_counters_point_flow(struct ibv_counters *counters, struct ibv_counter_attach_attr *attr,
			      struct ibv_flow *flow)
{
	(void)counters;
	(void)attr;
	(void)flow;
	return EOPNOTSUPP;
}

static struct ibv_counters *
op_create_counters(struct ibv_context *ctx, struct ibv_counters_init_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_destroy_counters(struct ibv_counters *counters)
{
	(void)counters;
	return EOPNOTSUPP;
}

static int
op_modify_flow_action_esp(struct ibv_flow_action *action, struct ibv_flow_action_esp_attr *attr)
{
	(void)action;
	(void)attr;
	return EOPNOTSUPP;
}

static int
op_destroy_flow_action(struct ibv_flow_action *action)
{
	(void)action;
	return EOPNOTSUPP;
}

static struct ibv_flow_action *
op_create_flow_action_esp(struct ibv_context *ctx, struct ibv_flow_action_esp_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)
{
	(void)srq;
	*bad_op = op;
	return EOPNOTSUPP;
}

static int
op_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table)
{
	(void)table;
	return EOPNOTSUPP;
}

static struct ibv_rwq_ind_table *
op_create_rwq_ind_table(struct ibv_context *ctx, struct ibv_rwq_ind_table_init_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_destroy_wq(struct ibv_wq *wq)
{
	(void)wq;
	return EOPNOTSUPP;
}

static int
op_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	(void)wq;
	(void)attr;
	return EOPNOTSUPP;
}

static struct ibv_wq *
op_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

/* The engine stamps CQEs with CLOCK_MONOTONIC ns (its "HCA clock", 1 GHz). */
static int
op_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	(void)ctx;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK &&
	    clock_gettime(CLOCK_MONOTONIC, &values->raw_clock) != 0)
		return errno;
	return 0;
}

static int
op_destroy_flow(struct ibv_flow *flow)
{
	(void)flow;
	return EOPNOTSUPP;
}

static struct ibv_flow *
op_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	(void)qp;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_qp *
op_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	(void)srq;
	(void)srq_num;
	return EOPNOTSUPP;	/* an XRC SRQ's number: droce has no XRC */
}

static struct ibv_xrcd *
op_open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

static int
op_close_xrcd(struct ibv_xrcd *xrcd)
{
	(void)xrcd;
	return EOPNOTSUPP;
}

void
shim_ops_init(struct verbs_context *v)
{
	struct ibv_context_ops *o = &v->context.ops;

	/* ibv_context.ops: live slots, and the compat slots rdma-core still fills */
	o->_compat_query_device = shim_query_device_1_1;
	o->_compat_query_port = shim_query_port_compat;
	o->_compat_alloc_pd = COMPAT_FN(shim_alloc_pd);
	o->_compat_dealloc_pd = COMPAT_FN(shim_dealloc_pd);
	o->_compat_reg_mr = COMPAT_FN(shim_reg_mr_iova2);
	o->_compat_rereg_mr = COMPAT_FN(shim_rereg_mr);
	o->_compat_dereg_mr = COMPAT_FN(shim_dereg_mr);
	o->alloc_mw = shim_alloc_mw;
	o->bind_mw = shim_bind_mw;
	o->dealloc_mw = shim_dealloc_mw;
	o->_compat_create_cq = COMPAT_FN(shim_create_cq);
	o->poll_cq = shim_poll_cq;
	o->req_notify_cq = shim_req_notify_cq;
	o->_compat_cq_event = COMPAT_FN(shim_get_cq_event);
	o->_compat_resize_cq = COMPAT_FN(shim_resize_cq);
	o->_compat_destroy_cq = COMPAT_FN(shim_destroy_cq);
	o->_compat_create_srq = COMPAT_FN(shim_create_srq);
	o->_compat_modify_srq = COMPAT_FN(shim_modify_srq);
	o->_compat_query_srq = COMPAT_FN(shim_query_srq);
	o->_compat_destroy_srq = COMPAT_FN(shim_destroy_srq);
	o->post_srq_recv = shim_post_srq_recv;
	o->_compat_create_qp = COMPAT_FN(shim_create_qp);
	o->_compat_query_qp = COMPAT_FN(shim_query_qp);
	o->_compat_modify_qp = COMPAT_FN(shim_modify_qp);
	o->_compat_destroy_qp = COMPAT_FN(shim_destroy_qp);
	o->post_send = shim_post_send;
	o->post_recv = shim_post_recv;
	o->_compat_create_ah = COMPAT_FN(shim_create_ah);
	o->_compat_destroy_ah = COMPAT_FN(shim_destroy_ah);
	o->_compat_attach_mcast = COMPAT_FN(shim_attach_mcast);
	o->_compat_detach_mcast = COMPAT_FN(shim_detach_mcast);
	o->_compat_async_event = COMPAT_FN(op_query_rt_values);	/* never called */

	/* struct verbs_context, in its order */
	v->query_port = shim_query_port;
	v->advise_mr = shim_advise_mr;
	v->alloc_null_mr = op_alloc_null_mr;
	v->read_counters = op_read_counters;
	v->attach_counters_point_flow = op_attach_counters_point_flow;
	v->create_counters = op_create_counters;
	v->destroy_counters = op_destroy_counters;
	v->reg_dm_mr = shim_reg_dm_mr;
	v->alloc_dm = shim_alloc_dm;
	v->free_dm = shim_free_dm;
	v->modify_flow_action_esp = op_modify_flow_action_esp;
	v->destroy_flow_action = op_destroy_flow_action;
	v->create_flow_action_esp = op_create_flow_action_esp;
	v->modify_qp_rate_limit = shim_modify_qp_rate_limit;
	v->alloc_parent_domain = shim_alloc_parent_domain;
	v->dealloc_td = shim_dealloc_td;
	v->alloc_td = shim_alloc_td;
	v->modify_cq = shim_modify_cq;
	v->post_srq_ops = op_post_srq_ops;
	v->destroy_rwq_ind_table = op_destroy_rwq_ind_table;
	v->create_rwq_ind_table = op_create_rwq_ind_table;
	v->destroy_wq = op_destroy_wq;
	v->modify_wq = op_modify_wq;
	v->create_wq = op_create_wq;
	v->query_rt_values = op_query_rt_values;
	v->create_cq_ex = shim_create_cq_ex;
	v->priv = NULL;		/* rdma-core's private part: nobody else reads it */
	v->query_device_ex = shim_query_device_ex;
	v->ibv_destroy_flow = op_destroy_flow;
	/* binaries built against libibverbs 1.1.8 look for the flow ops here */
	v->ABI_placeholder2 = (void (*)(void))op_destroy_flow;
	v->ibv_create_flow = op_create_flow;
	v->ABI_placeholder1 = (void (*)(void))op_create_flow;
	v->open_qp = op_open_qp;
	v->create_qp_ex = shim_create_qp_ex;
	v->get_srq_num = op_get_srq_num;
	v->create_srq_ex = shim_create_srq_ex;
	v->open_xrcd = op_open_xrcd;
	v->close_xrcd = op_close_xrcd;
}

/* ---- IBVERBS_1.0 ---- */

#define SHIM_COMPAT_PTR(sym)						\
	void *shim_##sym##_1_0(void);					\
	SHIM_SYMVER(shim_##sym##_1_0, ibv_##sym, "IBVERBS_1.0");	\
	SHIM_EXPORT void *						\
	shim_##sym##_1_0(void)						\
	{								\
		errno = EOPNOTSUPP;					\
		return NULL;						\
	}

#define SHIM_COMPAT_INT(sym, val)					\
	int shim_##sym##_1_0(void);					\
	SHIM_SYMVER(shim_##sym##_1_0, ibv_##sym, "IBVERBS_1.0");	\
	SHIM_EXPORT int							\
	shim_##sym##_1_0(void)						\
	{								\
		errno = EOPNOTSUPP;					\
		return (val);						\
	}

#define SHIM_COMPAT_VOID(sym)						\
	void shim_##sym##_1_0(void);					\
	SHIM_SYMVER(shim_##sym##_1_0, ibv_##sym, "IBVERBS_1.0");	\
	SHIM_EXPORT void						\
	shim_##sym##_1_0(void)						\
	{								\
	}

void **shim_get_device_list_1_0(int *num);
SHIM_SYMVER(shim_get_device_list_1_0, ibv_get_device_list, "IBVERBS_1.0");
SHIM_EXPORT void **
shim_get_device_list_1_0(int *num)
{
	if (num != NULL)
		*num = 0;
	return calloc(1, sizeof(void *));	/* NULL-terminated and empty */
}

void shim_free_device_list_1_0(void **list);
SHIM_SYMVER(shim_free_device_list_1_0, ibv_free_device_list, "IBVERBS_1.0");
SHIM_EXPORT void
shim_free_device_list_1_0(void **list)
{
	free(list);
}

uint64_t shim_get_device_guid_1_0(void);
SHIM_SYMVER(shim_get_device_guid_1_0, ibv_get_device_guid, "IBVERBS_1.0");
SHIM_EXPORT uint64_t
shim_get_device_guid_1_0(void)
{
	return 0;
}

SHIM_COMPAT_PTR(get_device_name)
SHIM_COMPAT_PTR(open_device)
SHIM_COMPAT_PTR(alloc_pd)
SHIM_COMPAT_PTR(reg_mr)
SHIM_COMPAT_PTR(create_cq)
SHIM_COMPAT_PTR(create_srq)
SHIM_COMPAT_PTR(create_qp)
SHIM_COMPAT_PTR(create_ah)
SHIM_COMPAT_INT(close_device, EOPNOTSUPP)
SHIM_COMPAT_INT(get_async_event, -1)
SHIM_COMPAT_INT(query_device, EOPNOTSUPP)
SHIM_COMPAT_INT(query_port, EOPNOTSUPP)
SHIM_COMPAT_INT(query_gid, -1)
SHIM_COMPAT_INT(query_pkey, -1)
SHIM_COMPAT_INT(dealloc_pd, EOPNOTSUPP)
SHIM_COMPAT_INT(dereg_mr, EOPNOTSUPP)
SHIM_COMPAT_INT(resize_cq, EOPNOTSUPP)
SHIM_COMPAT_INT(destroy_cq, EOPNOTSUPP)
SHIM_COMPAT_INT(get_cq_event, -1)
SHIM_COMPAT_INT(modify_srq, EOPNOTSUPP)
SHIM_COMPAT_INT(query_srq, EOPNOTSUPP)
SHIM_COMPAT_INT(destroy_srq, EOPNOTSUPP)
SHIM_COMPAT_INT(query_qp, EOPNOTSUPP)
SHIM_COMPAT_INT(modify_qp, EOPNOTSUPP)
SHIM_COMPAT_INT(destroy_qp, EOPNOTSUPP)
SHIM_COMPAT_INT(destroy_ah, EOPNOTSUPP)
SHIM_COMPAT_INT(attach_mcast, EOPNOTSUPP)
SHIM_COMPAT_INT(detach_mcast, EOPNOTSUPP)
SHIM_COMPAT_VOID(ack_async_event)
SHIM_COMPAT_VOID(ack_cq_events)

/* ibv_register_driver@IBVERBS_1.1 (no default version): pre-2007 providers. */
void shim_register_driver_1_1(const char *name, void *init_func);
SHIM_SYMVER(shim_register_driver_1_1, ibv_register_driver, "IBVERBS_1.1");
SHIM_EXPORT void
shim_register_driver_1_1(const char *name, void *init_func)
{
	(void)name;
	(void)init_func;
}

/* ---- IBVERBS_PRIVATE_34 ---- */

#define SHIM_PRIVATE_CMD(sym)		\
	int sym(void);			\
	SHIM_EXPORT int			\
	sym(void)			\
	{				\
		return EOPNOTSUPP;	\
	}

#define SHIM_PRIVATE_CMDS(X) \
	X(execute_ioctl) \
	X(ibv_cmd_advise_mr) \
	X(ibv_cmd_alloc_dm) \
	X(ibv_cmd_alloc_mw) \
	X(ibv_cmd_alloc_pd) \
	X(ibv_cmd_attach_mcast) \
	X(ibv_cmd_close_xrcd) \
	X(ibv_cmd_create_ah) \
	X(ibv_cmd_create_counters) \
	X(ibv_cmd_create_cq) \
	X(ibv_cmd_create_cq_ex) \
	X(ibv_cmd_create_flow) \
	X(ibv_cmd_create_flow_action_esp) \
	X(ibv_cmd_create_qp) \
	X(ibv_cmd_create_qp_ex) \
	X(ibv_cmd_create_qp_ex2) \
	X(ibv_cmd_create_rwq_ind_table) \
	X(ibv_cmd_create_srq) \
	X(ibv_cmd_create_srq_ex) \
	X(ibv_cmd_create_wq) \
	X(ibv_cmd_dealloc_mw) \
	X(ibv_cmd_dealloc_pd) \
	X(ibv_cmd_dereg_mr) \
	X(ibv_cmd_destroy_ah) \
	X(ibv_cmd_destroy_counters) \
	X(ibv_cmd_destroy_cq) \
	X(ibv_cmd_destroy_flow) \
	X(ibv_cmd_destroy_flow_action) \
	X(ibv_cmd_destroy_qp) \
	X(ibv_cmd_destroy_rwq_ind_table) \
	X(ibv_cmd_destroy_srq) \
	X(ibv_cmd_destroy_wq) \
	X(ibv_cmd_detach_mcast) \
	X(ibv_cmd_free_dm) \
	X(ibv_cmd_get_context) \
	X(ibv_cmd_modify_cq) \
	X(ibv_cmd_modify_flow_action_esp) \
	X(ibv_cmd_modify_qp) \
	X(ibv_cmd_modify_qp_ex) \
	X(ibv_cmd_modify_srq) \
	X(ibv_cmd_modify_wq) \
	X(ibv_cmd_open_qp) \
	X(ibv_cmd_open_xrcd) \
	X(ibv_cmd_poll_cq) \
	X(ibv_cmd_post_recv) \
	X(ibv_cmd_post_send) \
	X(ibv_cmd_post_srq_recv) \
	X(ibv_cmd_query_context) \
	X(ibv_cmd_query_device_any) \
	X(ibv_cmd_query_mr) \
	X(ibv_cmd_query_port) \
	X(ibv_cmd_query_qp) \
	X(ibv_cmd_query_srq) \
	X(ibv_cmd_read_counters) \
	X(ibv_cmd_reg_dm_mr) \
	X(ibv_cmd_reg_dmabuf_mr) \
	X(ibv_cmd_reg_mr) \
	X(ibv_cmd_req_notify_cq) \
	X(ibv_cmd_rereg_mr) \
	X(ibv_cmd_resize_cq)

SHIM_PRIVATE_CMDS(SHIM_PRIVATE_CMD)

/* Destroys after the daemon went away succeed (shim_call_destroy()). */
SHIM_EXPORT bool verbs_allow_disassociate_destroy = true;

unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link);
SHIM_EXPORT unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	(void)link;
	return num_attrs;
}

void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...);
SHIM_EXPORT void
__verbs_log(void *ctx, uint32_t level, const char *fmt, ...)
{
	(void)ctx;
	(void)level;
	(void)fmt;
}

void *_verbs_init_and_alloc_context(void);
SHIM_EXPORT void *
_verbs_init_and_alloc_context(void)
{
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...);
SHIM_EXPORT int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...)
{
	(void)buf;
	(void)size;
	(void)sysfs_dev;
	(void)fnfmt;
	errno = ENOENT;
	return -1;
}

void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *ctx, struct ibv_comp_channel *channel,
		   void *cq_context);
SHIM_EXPORT void
verbs_init_cq(struct ibv_cq *cq, struct ibv_context *ctx, struct ibv_comp_channel *channel,
	      void *cq_context)
{
	cq->context = ctx;
	cq->channel = channel;
	if (channel != NULL) {
		pthread_mutex_lock(&ctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
	}
	cq->cq_context = cq_context;
	cq->comp_events_completed = 0;
	cq->async_events_completed = 0;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
}

struct ibv_context *shim_open_device_1_1(struct ibv_device *device);
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);
SHIM_EXPORT struct ibv_context *
verbs_open_device(struct ibv_device *device, void *private_data)
{
	(void)private_data;
	return shim_open_device_1_1(device);
}

void verbs_register_driver_34(const void *ops);
SHIM_EXPORT void
verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

void verbs_set_ops(struct verbs_context *vctx, const void *ops);
SHIM_EXPORT void
verbs_set_ops(struct verbs_context *vctx, const void *ops)
{
	(void)vctx;
	(void)ops;
}

void verbs_uninit_context(struct verbs_context *vctx);
SHIM_EXPORT void
verbs_uninit_context(struct verbs_context *vctx)
{
	(void)vctx;
}
