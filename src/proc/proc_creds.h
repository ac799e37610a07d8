/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a traced process could read a file itself. offcpu runs as root
 * and opens files a process names (its perf map, a debug file beside its
 * library, the files it mapped); what it reads of them reaches the
 * output, and offcpu serve hands that to any local user. So a file is
 * read on a process's behalf only where the process's own credentials
 * (fsuid, fsgid, supplementary groups, as /proc/PID/status gives them in
 * offcpu's user namespace) grant it read permission by the file's mode.
 * Owner and path checks alone do not hold: in a user namespace a user
 * bind-mounts a root-only file onto any path it owns.
 */
#ifndef OFFCPU_PROC_CREDS_H
#define OFFCPU_PROC_CREDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Of NGROUPS_MAX (65536): past these, only what the group and others may both read is read. */
#define PROC_CREDS_MAX_GROUPS 64

struct proc_creds {
	uid_t uid; /* real: who a perf map is written by */
	uid_t fsuid;
	gid_t fsgid;
	gid_t groups[PROC_CREDS_MAX_GROUPS];
	size_t nr_groups;
	bool groups_cut; /* more than PROC_CREDS_MAX_GROUPS */
	long ns_pid; /* the PID in its innermost PID namespace */
};

/* The Uid, Gid, Groups and NSpid lines of a /proc/PID/status file. -EINVAL if one is missing. */
int proc_creds__parse(FILE *status, struct proc_creds *creds);

/* proc_creds__parse of /proc/PID/status. */
int proc_creds__read(uint32_t pid, struct proc_creds *creds);

/*
 * Whether creds may read a file of this mode and owner, as the kernel
 * decides without ACLs: the owner's bits for its owner, the group's for a
 * member, the others' else; fsuid 0 reads anything. ACLs can only grant
 * more than the mode's group bits show, so leaving them out refuses, never
 * leaks.
 */
bool proc_creds__may_read(const struct proc_creds *creds, const struct stat *st);

/*
 * 0 if process pid may read the file open at fd, else -EACCES (-errno if
 * it cannot be told). Of a process already reaped, whose stacks are still
 * to be read, only what anyone may read (the others' bits).
 */
int proc_creds__check_fd(uint32_t pid, int fd);

#endif
