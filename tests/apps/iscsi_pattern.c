/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 *
 * iscsi_pattern: writes a seeded pattern to an iSCSI LUN through
 * libiscsi (iscsi:// over TCP or iser:// over RDMA) and reads it back,
 * checking every byte, with several commands in flight; or fills and
 * checks a local file (the LUN's backing file) with the same pattern.
 * libiscsi's own tools read only (iscsi-perf) or send no data, so none
 * of them can check what a WRITE carried.
 *
 *   iscsi_pattern [-i NAME] [-b BYTES] [-q DEPTH] [-n BYTES] [-s SEED] write|read URL
 *   iscsi_pattern [-n BYTES] [-s SEED] fill|check FILE
 *
 * -b is the size of each READ16/WRITE16 (a multiple of the block size),
 * -q how many are in flight, -n how much of the LUN from LBA 0 (default
 * all of it). A write ends with SYNCHRONIZE CACHE (inside the time). One
 * line on stdout: bytes, commands, seconds, MiB/s. Exit 0, or 1 with the
 * first difference (offset, got, wanted) on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

/* The pattern's 64-bit word at byte OFFSET (a multiple of 8): a mix of
 * the seed and the offset, so a block at the wrong place shows. */
static uint64_t pattern_word(uint64_t seed, uint64_t offset)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + (offset >> 3);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void pattern_fill(uint64_t seed, uint64_t offset, unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = pattern_word(seed, offset + i);

		memcpy(buf + i, &w, 8);
	}
}

/* 0, or 1 after saying where BUF first differs from the pattern. */
static int pattern_check(uint64_t seed, uint64_t offset, const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t want = pattern_word(seed, offset + i), got;

		memcpy(&got, buf + i, 8);
		if (got != want) {
			fprintf(stderr, "differs at byte %" PRIu64 ": got %016" PRIx64
				" want %016" PRIx64 "\n", offset + i, got, want);
			return 1;
		}
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct run {
	struct iscsi_context *iscsi;
	int lun, writing;
	uint32_t block;
	uint64_t seed, bytes, chunk;
	uint64_t next, done;	/* bytes submitted, bytes completed */
	int in_flight, failed;
	int unqueued;	/* libiscsi refused a command: its context is unsafe */
	unsigned char **free_bufs;	/* write buffers not in flight */
	int nfree;
};

struct command {
	struct run *run;
	uint64_t offset;
	uint32_t len;
	unsigned char *buf;
};

static void command_done(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
	struct scsi_task *task = data;
	struct command *cmd = priv;
	struct run *run = cmd->run;

	if (status != SCSI_STATUS_GOOD) {
		fprintf(stderr, "%s at byte %" PRIu64 " failed: %s\n",
			run->writing ? "WRITE16" : "READ16", cmd->offset, iscsi_get_error(iscsi));
		run->failed = 1;
	} else if (!run->writing) {
		if (task->datain.size != (int)cmd->len) {
			fprintf(stderr, "READ16 at byte %" PRIu64 " brought %d bytes, not %u\n",
				cmd->offset, task->datain.size, cmd->len);
			run->failed = 1;
		} else if (pattern_check(run->seed, cmd->offset, task->datain.data, cmd->len)) {
			run->failed = 1;
		}
	}
	if (cmd->buf)
		run->free_bufs[run->nfree++] = cmd->buf;
	run->done += cmd->len;
	run->in_flight--;
	scsi_free_scsi_task(task);
	free(cmd);
}

static int submit(struct run *run)
{
	struct command *cmd = calloc(1, sizeof(*cmd));
	uint64_t left = run->bytes - run->next;
	struct scsi_task *task;

	if (!cmd)
		return -1;
	cmd->run = run;
	cmd->offset = run->next;
	cmd->len = left < run->chunk ? left : run->chunk;
	if (run->writing) {
		cmd->buf = run->free_bufs[--run->nfree];
		pattern_fill(run->seed, cmd->offset, cmd->buf, cmd->len);
		task = iscsi_write16_task(run->iscsi, run->lun, cmd->offset / run->block,
					  cmd->buf, cmd->len, run->block, 0, 0, 0, 0, 0,
					  command_done, cmd);
	} else {
		task = iscsi_read16_task(run->iscsi, run->lun, cmd->offset / run->block,
					 cmd->len, run->block, 0, 0, 0, 0, 0, command_done, cmd);
	}
	if (!task) {
		fprintf(stderr, "queueing a command failed: %s\n", iscsi_get_error(run->iscsi));
		run->unqueued = 1;
		if (cmd->buf)
			run->free_bufs[run->nfree++] = cmd->buf;
		free(cmd);
		return -1;
	}
	run->next += cmd->len;
	run->in_flight++;
	return 0;
}

/* Every command of RUN, DEPTH at a time; 0 when all came back good. */
static int drive(struct run *run, int depth)
{
	while (run->done < run->bytes && !run->failed) {
		while (run->in_flight < depth && run->next < run->bytes)
			if (submit(run))
				return -1;
		struct pollfd pfd = {
			.fd = iscsi_get_fd(run->iscsi),
			.events = iscsi_which_events(run->iscsi),
		};
		int n = poll(&pfd, 1, 20000);

		if (n == 0) {
			fprintf(stderr, "no completion in 20 s (%d in flight)\n", run->in_flight);
			return -1;
		}
		if (n < 0 && errno != EINTR) {
			perror("poll");
			return -1;
		}
		if (n > 0 && iscsi_service(run->iscsi, pfd.revents) < 0) {
			fprintf(stderr, "iscsi_service: %s\n", iscsi_get_error(run->iscsi));
			return -1;
		}
	}
	return run->failed ? -1 : 0;
}

static int on_lun(const char *initiator, const char *url_text, int writing, uint64_t seed,
		  uint64_t chunk, int depth, uint64_t bytes)
{
	struct iscsi_context *iscsi = iscsi_create_context(initiator);
	struct iscsi_url *url;
	struct scsi_task *task;
	struct run run = { .writing = writing, .seed = seed, .chunk = chunk };
	int status = 1;

	if (!iscsi) {
		fprintf(stderr, "iscsi_create_context failed\n");
		return 1;
	}
	url = iscsi_parse_full_url(iscsi, url_text);
	if (!url) {
		fprintf(stderr, "bad URL %s: %s\n", url_text, iscsi_get_error(iscsi));
		goto out_context;
	}
	iscsi_set_session_type(iscsi, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(iscsi, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	if (iscsi_full_connect_sync(iscsi, url->portal, url->lun)) {
		fprintf(stderr, "login failed: %s\n", iscsi_get_error(iscsi));
		goto out_url;
	}
	task = iscsi_readcapacity16_sync(iscsi, url->lun);
	struct scsi_readcapacity16 *cap = task && task->status == SCSI_STATUS_GOOD ?
		scsi_datain_unmarshall(task) : NULL;
	if (!cap) {
		fprintf(stderr, "READ CAPACITY(16) failed: %s\n", iscsi_get_error(iscsi));
		goto out_logout;
	}
	run.block = cap->block_length;
	uint64_t size = (cap->returned_lba + 1) * cap->block_length;
	scsi_free_scsi_task(task);
	run.bytes = bytes ? bytes : size;
	if (run.bytes > size || chunk % run.block || run.bytes % run.block) {
		fprintf(stderr, "-n %" PRIu64 " and -b %" PRIu64 " must be multiples of the"
			" block size %u, -n at most the LUN's %" PRIu64 "\n",
			run.bytes, chunk, run.block, size);
		goto out_logout;
	}
	run.iscsi = iscsi;
	run.lun = url->lun;
	run.free_bufs = calloc(depth, sizeof(*run.free_bufs));
	if (!run.free_bufs)
		goto out_logout;
	if (writing)
		for (; run.nfree < depth; run.nfree++)
			if (!(run.free_bufs[run.nfree] = malloc(chunk)))
				goto out_bufs;

	double t0 = now();
	int err = drive(&run, depth);

	if (!err && writing) {
		task = iscsi_synchronizecache10_sync(iscsi, run.lun, 0, 0, 0, 0);
		if (!task || task->status != SCSI_STATUS_GOOD) {
			fprintf(stderr, "SYNCHRONIZE CACHE failed: %s\n", iscsi_get_error(iscsi));
			err = -1;
		}
		if (task)
			scsi_free_scsi_task(task);
	}
	double t = now() - t0;

	if (!err) {
		printf("%s %" PRIu64 " bytes, %" PRIu64 " commands of %" PRIu64
		       ", depth %d: %.3f s, %.1f MiB/s\n", writing ? "write" : "read",
		       run.bytes, (run.bytes + chunk - 1) / chunk, chunk, depth, t,
		       run.bytes / t / (1 << 20));
		status = 0;
	}
	/* libiscsi 1.19's iSER transport leaves a PDU it failed to send on
	 * its wait list and its caller frees it: logging out or destroying
	 * the context then walks freed memory (SIGSEGV). Leave both to exit. */
	if (run.unqueued)
		exit(1);
out_bufs:
	/* buffers of commands still in flight go with the context */
	for (int i = 0; i < run.nfree; i++)
		free(run.free_bufs[i]);
	free(run.free_bufs);
out_logout:
	iscsi_logout_sync(iscsi);
out_url:
	iscsi_destroy_url(url);
out_context:
	iscsi_destroy_context(iscsi);
	return status;
}

static int on_file(const char *path, int filling, uint64_t seed, uint64_t bytes)
{
	int fd = open(path, filling ? O_WRONLY : O_RDONLY);
	size_t chunk = 1 << 20;
	unsigned char *buf = malloc(chunk);
	uint64_t offset = 0;
	int status = 1;

	if (fd < 0 || !buf) {
		perror(path);
		goto out;
	}
	if (!bytes) {
		off_t end = lseek(fd, 0, SEEK_END);

		if (end < 0) {
			perror(path);
			goto out;
		}
		bytes = end;
	}
	for (; offset < bytes; offset += chunk) {
		size_t len = bytes - offset < chunk ? bytes - offset : chunk;
		ssize_t n;

		if (filling) {
			pattern_fill(seed, offset, buf, len);
			n = pwrite(fd, buf, len, offset);
		} else {
			n = pread(fd, buf, len, offset);
		}
		if (n != (ssize_t)len) {
			fprintf(stderr, "%s: short %s at %" PRIu64 "\n", path,
				filling ? "write" : "read", offset);
			goto out;
		}
		if (!filling && pattern_check(seed, offset, buf, len))
			goto out;
	}
	if (filling && fsync(fd)) {
		perror(path);
		goto out;
	}
	status = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return status;
}

static void usage(void)
{
	fprintf(stderr, "usage: iscsi_pattern [-i NAME] [-b BYTES] [-q DEPTH] [-n BYTES]"
		" [-s SEED] write|read URL\n"
		"       iscsi_pattern [-n BYTES] [-s SEED] fill|check FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *initiator = "iqn.2026-01.org.droce:initiator";
	uint64_t chunk = 256 << 10, bytes = 0, seed = 1;
	int depth = 4, c;

	while ((c = getopt(argc, argv, "i:b:q:n:s:")) != -1) {
		switch (c) {
		case 'i': initiator = optarg; break;
		case 'b': chunk = strtoull(optarg, NULL, 0); break;
		case 'q': depth = atoi(optarg); break;
		case 'n': bytes = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || !chunk || chunk % 8 || depth < 1 || bytes % 8)
		usage();
	const char *op = argv[optind], *target = argv[optind + 1];

	if (!strcmp(op, "write") || !strcmp(op, "read"))
		return on_lun(initiator, target, op[0] == 'w', seed, chunk, depth, bytes);
	if (!strcmp(op, "fill") || !strcmp(op, "check"))
		return on_file(target, op[0] == 'f', seed, bytes);
	usage();
}
