/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

/*
 * The shared-memory rings the device creates for clients: a sealed memfd
 * (it can neither shrink nor grow under us), mapped, its header written; the
 * geometry kept privately (struct droce_shm_view) so a client rewriting the header
 * cannot move a slot outside the mapping. A context's doorbell rings, one
 * per engine, share one memfd (one descriptor at HELLO), each mapped apart.
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "verbs_dev_priv.h"

int
dev_ring_create_n(struct droce_shm_view *rings, unsigned int n, enum droce_shm_kind kind,
		  uint32_t handle, uint32_t nslots, uint32_t slot_size, int *fd_out)
{
	uint64_t len = droce_shm_ring_bytes(nslots, slot_size);
	unsigned int k;
	int fd, ret;

	len = (len + 4095) & ~4095ull;
	fd = memfd_create("droce-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(len * n)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = -errno;
		goto err_close;
	}
	for (k = 0; k < n; k++) {
		struct droce_shm_view *ring = &rings[k];

		/* each ring its own mapping: each view is freed on its own */
		ring->r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(len * k));
		if (ring->r == MAP_FAILED) {
			ring->r = NULL;
			ret = -errno;
			goto err_unmap;
		}
		ring->map_len = len;
		ring->nslots = nslots;
		ring->log2_slot_size = 0;
		while ((1u << ring->log2_slot_size) < slot_size)
			ring->log2_slot_size++;
		ring->idx = 0;
		if (droce_shm_ring_init(ring->r, kind, handle, nslots, slot_size) < 0) {
			k++;
			ret = -EINVAL;
			goto err_unmap;
		}
	}
	*fd_out = fd;
	return 0;

err_unmap:
	while (k-- > 0)
		dev_ring_free(&rings[k]);
err_close:
	close(fd);
	return ret;
}

int
dev_ring_create(struct droce_shm_view *ring, enum droce_shm_kind kind, uint32_t handle,
		uint32_t nslots, uint32_t slot_size, int *fd_out)
{
	return dev_ring_create_n(ring, 1, kind, handle, nslots, slot_size, fd_out);
}

void
dev_ring_free(struct droce_shm_view *ring)
{
	if (ring->r != NULL)
		munmap(ring->r, ring->map_len);
	ring->r = NULL;
}
