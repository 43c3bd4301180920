/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */
#ifndef TEST_CTRL_H
#define TEST_CTRL_H

/*
 * Shared by the lib/ctrl unit tests: one TCase constructor per topic and
 * helpers around socketpair(AF_UNIX, SOCK_SEQPACKET), the socket type the
 * daemon listens on.
 */

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_core.h"
#include "droce_ctrl.h"

TCase *test_ctrl_names_tcase(void);
TCase *test_ctrl_msg_tcase(void);
TCase *test_ctrl_malformed_tcase(void);
TCase *test_ctrl_call_tcase(void);

/** A connected SOCK_SEQPACKET pair, close-on-exec. */
void tc_pair(int sv[2]);

/** Descriptors open in this process (entries of /proc/self/fd). */
unsigned int tc_open_fds(void);

/** sendmsg() @p len raw bytes as one datagram, with @p nfds descriptors. @return 0 or -errno. */
int tc_send_raw(int sock, const void *data, size_t len, const int *fds, unsigned int nfds);

/** A memfd holding @p text. */
int tc_memfd(const char *text);

/** Whether @p a and @p b are the same open file (same device and inode). */
bool tc_same_file(int a, int b);

#endif /* TEST_CTRL_H */
