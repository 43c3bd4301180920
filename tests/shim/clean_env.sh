#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
#
# clean_env.sh CMD [ARGS...]: run CMD without the LD_LIBRARY_PATH meson
# test adds for the libraries it built, so that what finds the shim is
# droce-run and nothing else.
unset LD_LIBRARY_PATH
exec "$@"
