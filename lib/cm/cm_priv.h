/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef DROCE_CM_PRIV_H
#define DROCE_CM_PRIV_H

/* lib/cm internals shared by cm_id.c, cm_conn.c and cm_sidr.c. */

#include "droce_cm.h"

/* cm_id.c: the id table, sending, timers, events */
void cm_set_state(struct droce_cm_id *id, enum droce_cm_state s);
struct droce_cm_id *cm_id_alloc(struct droce_cm *cm);
void cm_id_free(struct droce_cm_id *id);
struct droce_cm_id *cm_find_local(struct droce_cm *cm, uint32_t local_id,
				  const struct droce_cm_addr *from);
uint64_t cm_new_tid(struct droce_cm *cm);
/* Stop the timer and go IDLE, or free the id if its owner is gone. */
void cm_go_idle(struct droce_cm_id *id);
/* A fresh message of @p type in transaction @p tid. */
void cm_msg_init(struct droce_cm_msg *m, enum droce_cm_msg_type type, uint64_t tid);

/* Send @p msg to @p id's peer; keep it in rt.tx when @p keep (retransmits, duplicates). */
void cm_send(struct droce_cm_id *id, const struct droce_cm_msg *msg, bool keep);
/* Send @p msg to @p to, outside any id. */
void cm_send_to(struct droce_cm *cm, const struct droce_cm_addr *to, const struct droce_cm_msg *msg);
/* Send rt.tx again. */
void cm_resend(struct droce_cm_id *id);

/* Wait @p timeout_ns for an answer to rt.tx, resending it @p retries times. */
void cm_timer_start(struct droce_cm_id *id, uint64_t timeout_ns, uint8_t retries, uint64_t now);
void cm_timer_stop(struct droce_cm_id *id);

/* Deliver an event unless the owner is gone; the caller must not touch @p id after. */
void cm_emit(struct droce_cm_id *id, enum droce_cm_event_type type, struct droce_cm_id *listen,
	     const struct droce_cm_msg *msg, const struct droce_cm_addr *from);

/* REJ to @p to outside any id (no listener, stale, unknown comm ID). */
void cm_issue_rej(struct droce_cm *cm, const struct droce_cm_addr *to, uint64_t tid,
		  uint32_t local_id, uint32_t remote_id, uint8_t msg_rejected, uint16_t reason);

/* The listener whose service ID covers @p service_id, or NULL. */
struct droce_cm_id *cm_find_listener(struct droce_cm *cm, uint64_t service_id);

/* Take one slot of @p listen's backlog for @p id; false if it is full. */
bool cm_backlog_take(struct droce_cm_id *listen, struct droce_cm_id *id);

/* Copy at most @p max bytes of private data; -EINVAL if @p len is larger. */
int cm_copy_pdata(uint8_t *dst, unsigned int max, const void *src, unsigned int len);

/* cm_conn.c: connections */
void cm_conn_rx(struct droce_cm *cm, const struct droce_cm_addr *from,
		const struct droce_cm_msg *msg, uint64_t now);
void cm_conn_timeout(struct droce_cm_id *id, uint64_t now);
void cm_conn_destroy(struct droce_cm_id *id, uint64_t now);

/* cm_sidr.c: service ID resolution */
void cm_sidr_rx(struct droce_cm *cm, const struct droce_cm_addr *from,
		const struct droce_cm_msg *msg, uint64_t now);
void cm_sidr_timeout(struct droce_cm_id *id, uint64_t now);
void cm_sidr_destroy(struct droce_cm_id *id, uint64_t now);

#endif /* DROCE_CM_PRIV_H */
