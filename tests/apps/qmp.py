#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# qmp.py SOCKET COMMAND...: QEMU's machine protocol for the app tests. Each
# COMMAND is a QMP command as JSON, or "wait-migrate": poll query-migrate
# until it ends. Prints each reply as one JSON line; exits 1 on an error
# reply or a migration that did not complete.
import json
import socket
import sys
import time

sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
f = sock.makefile("rw")


def reply():
    while True:
        m = json.loads(f.readline())
        if "event" not in m:
            return m


def call(cmd):
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    return reply()


reply()  # the greeting
call({"execute": "qmp_capabilities"})
status = 0
for arg in sys.argv[2:]:
    if arg == "wait-migrate":
        for _ in range(1500):
            r = call({"execute": "query-migrate"})
            if r.get("return", {}).get("status") in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.2)
        if r.get("return", {}).get("status") != "completed":
            status = 1
    else:
        r = call(json.loads(arg))
        if "error" in r:
            status = 1
    print(json.dumps(r), flush=True)
sys.exit(status)
