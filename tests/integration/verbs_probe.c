/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * Small probes of droced's rules through the plain verbs API (run with
 * droce-run):
 *   verbs_probe qkey     a UD QP asks for a privileged Q_Key (high bit set):
 *                        prints "qkey ok" or "qkey EPERM" (CAP_NET_RAW rule)
 *   verbs_probe fatal    prints "waiting", then the next async event:
 *                        "event DEVICE_FATAL" when the daemon stops
 * (The SRQ limit event and memory windows moved to tests/verbs/.)
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

int
main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2 || ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 2;
	}
	if (strcmp(argv[1], "qkey") == 0) {
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
		struct ibv_qp_init_attr init = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};
		struct ibv_qp *qp = pd && cq ? ibv_create_qp(pd, &init) : NULL;
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					    .qkey = 0x80010000u };
		int ret;

		if (qp == NULL)
			return 2;
		ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY);
		printf("qkey %s\n", ret == 0 ? "ok" : ret == EPERM ? "EPERM" : strerror(ret));
		return 0;
	}
	if (strcmp(argv[1], "fatal") == 0) {
		struct ibv_async_event ev;

		printf("waiting\n");
		fflush(stdout);
		if (ibv_get_async_event(ctx, &ev) != 0)
			return 1;
		printf("event %s\n", ev.event_type == IBV_EVENT_DEVICE_FATAL ? "DEVICE_FATAL" :
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		return 0;
	}
	return 2;
}
