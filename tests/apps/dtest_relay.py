#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""dtest_relay.py LISTEN_ADDR SERVER_ADDR SERVER_LOG

Hands DAPL's dtest client its server's parameters only once the server
listens for the connection (tests/apps/dapl.sh). dtest's server writes its
address to the client over TCP port 15828 first and creates its rdma_cm
listener (dat_psp_create) after: a client quick enough sends its REQ to
no listener, gets REJ reason 8 (invalid service ID, as on Linux), fails,
and the server waits for a connection for ever. So: listen on
LISTEN_ADDR:15828 (the client runs with -h LISTEN_ADDR), fetch the
server's 128-byte message from SERVER_ADDR:15828, wait until the server's
line-buffered SERVER_LOG says it is waiting for the connect request, then
give the client the message, which names the server's own address.
Exits 1 if any step takes more than 30 s.
"""

import socket
import sys
import time

PORT = 15828		# dtest's CONN_PORT
MSG_SIZE = 128		# its CONN_MSG_SIZE
READY = "Server waiting for connect request"
LIMIT = 30.0


def fetch(addr):
    """The server's message, once its TCP listener is up."""
    end = time.monotonic() + LIMIT
    while True:
        try:
            with socket.create_connection((addr, PORT), timeout=LIMIT) as s:
                msg = b""
                while len(msg) < MSG_SIZE:
                    part = s.recv(MSG_SIZE - len(msg))
                    if not part:
                        raise OSError("server closed after %d bytes" % len(msg))
                    msg += part
                return msg
        except ConnectionRefusedError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


def wait_ready(log):
    end = time.monotonic() + LIMIT
    while time.monotonic() < end:
        with open(log, errors="replace") as f:
            if READY in f.read():
                return
        time.sleep(0.05)
    raise TimeoutError("the server did not say it listens")


def main():
    listen_addr, server_addr, log = sys.argv[1:4]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lsn:
        lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsn.bind((listen_addr, PORT))
        lsn.listen(1)
        print("listening", flush=True)
        msg = fetch(server_addr)
        wait_ready(log)
        lsn.settimeout(LIMIT)
        conn, _ = lsn.accept()
        with conn:
            conn.sendall(msg)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, TimeoutError) as e:
        print("dtest_relay: %s" % e, file=sys.stderr)
        sys.exit(1)
