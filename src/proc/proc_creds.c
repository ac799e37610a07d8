// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_creds.h"

/* The fields of "Uid:\treal\teffective\tsaved\tfs": which is which. */
enum { ID_REAL, ID_EFFECTIVE, ID_SAVED, ID_FS, NR_IDS };

static bool parse_ids(const char *at, unsigned long ids[NR_IDS])
{
	char *end;
	int i;

	for (i = 0; i < NR_IDS; i++) {
		ids[i] = strtoul(at, &end, 10);
		if (end == at)
			return false;
		at = end;
	}
	return true;
}

static void parse_groups(const char *at, struct proc_creds *creds)
{
	char *end;

	for (;;) {
		unsigned long group = strtoul(at, &end, 10);

		if (end == at)
			return;
		at = end;
		if (creds->nr_groups == PROC_CREDS_MAX_GROUPS) {
			creds->groups_cut = true;
			return;
		}
		creds->groups[creds->nr_groups++] = (gid_t)group;
	}
}

int proc_creds__parse(FILE *status, struct proc_creds *creds)
{
	unsigned long ids[NR_IDS];
	bool uid = false, gid = false, groups = false;
	char *line = NULL;
	size_t size = 0;

	memset(creds, 0, sizeof(*creds));
	creds->ns_pid = -1;
	while (getline(&line, &size, status) > 0) {
		if (!strncmp(line, "Uid:", 4) && parse_ids(line + 4, ids)) {
			creds->uid = (uid_t)ids[ID_REAL];
			creds->fsuid = (uid_t)ids[ID_FS];
			uid = true;
		} else if (!strncmp(line, "Gid:", 4) && parse_ids(line + 4, ids)) {
			creds->fsgid = (gid_t)ids[ID_FS];
			gid = true;
		} else if (!strncmp(line, "Groups:", 7)) {
			parse_groups(line + 7, creds);
			groups = true;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* The last one is its PID in its innermost namespace. */
			char *last = strrchr(line, '\t') ?: line + 6;

			creds->ns_pid = strtol(last, NULL, 10);
		}
	}
	free(line);
	return uid && gid && groups ? 0 : -EINVAL;
}

int proc_creds__read(uint32_t pid, struct proc_creds *creds)
{
	char path[32];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = proc_creds__parse(f, creds);
	fclose(f);
	return err;
}

static bool in_group(const struct proc_creds *creds, gid_t gid)
{
	size_t i;

	if (creds->fsgid == gid)
		return true;
	for (i = 0; i < creds->nr_groups; i++) {
		if (creds->groups[i] == gid)
			return true;
	}
	return false;
}

bool proc_creds__may_read(const struct proc_creds *creds, const struct stat *st)
{
	if (creds->fsuid == 0)
		return true;
	if (creds->fsuid == st->st_uid)
		return st->st_mode & S_IRUSR;
	/*
	 * A member of a group the file denies is refused even where others may
	 * read, as the kernel does; with groups cut short a membership cannot
	 * be ruled out, so group and others' bits must both allow.
	 */
	if (in_group(creds, st->st_gid))
		return st->st_mode & S_IRGRP;
	if (creds->groups_cut)
		return (st->st_mode & S_IRGRP) && (st->st_mode & S_IROTH);
	return st->st_mode & S_IROTH;
}

int proc_creds__check_fd(uint32_t pid, int fd)
{
	struct proc_creds creds;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	err = proc_creds__read(pid, &creds);
	if (err == -ENOENT || err == -ESRCH) {
		/* Reaped: no credentials to ask, so what anyone may read. */
		memset(&creds, 0, sizeof(creds));
		creds.fsuid = (uid_t)-1;
		creds.fsgid = (gid_t)-1;
	} else if (err) {
		return err;
	}
	return proc_creds__may_read(&creds, &st) ? 0 : -EACCES;
}
