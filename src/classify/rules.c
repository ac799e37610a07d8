// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify/pg_events.h"
#include "classify/reads.h"
#include "classify/rules.h"
#include "lib/array.h"

static const char *const base_classes[] = {
	"cpu",	"sleep", "lock",   "io",	"net",	"poll",
	"pipe", "child", "signal", "pagefault", "idle", "other",
};

#define MAX_TOKENS 16
#define MAX_SYMBOL 512

bool rules__valid_class(const char *wait_class)
{
	size_t base = strcspn(wait_class, ":"), i;
	const char *detail = wait_class + base;

	for (i = 0; i < ARRAY_SIZE(base_classes); i++) {
		if (strlen(base_classes[i]) == base && !strncmp(wait_class, base_classes[i], base))
			break;
	}
	if (i == ARRAY_SIZE(base_classes))
		return false;
	if (!*detail)
		return true;
	/* A detail is a short word: it becomes a label and a flame graph frame. */
	if (!detail[1] || strlen(detail) > 64)
		return false;
	for (detail++; *detail; detail++) {
		if (!isalnum((unsigned char)*detail) && !strchr("_-.", *detail))
			return false;
	}
	return true;
}

bool rules__symbol_matches(const char *glob, const char *sym)
{
	char base[MAX_SYMBOL];
	size_t len = strcspn(sym, ".");

	if (!fnmatch(glob, sym, 0))
		return true;
	if (!sym[len] || len >= sizeof(base))
		return false;
	memcpy(base, sym, len);
	base[len] = '\0';
	return !fnmatch(glob, base, 0);
}

bool rules__frames_match(const char *glob, const struct frame *frames, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (frames[i].sym && rules__symbol_matches(glob, frames[i].sym))
			return true;
	}
	return false;
}

bool rules__match(const struct wait_rule *rule, const struct frame *kernel, size_t nr_kernel,
		  const struct frame *user, size_t nr_user)
{
	const struct frame *frames = rule->scope == RULE_KERNEL ? kernel : user;
	size_t nr = rule->scope == RULE_KERNEL ? nr_kernel : nr_user, i;

	if (rule->scope == RULE_LABEL)
		return false;
	for (i = 0; i < rule->nr_globs; i++) {
		if (!rules__frames_match(rule->globs[i], frames, nr))
			return false;
	}
	return rule->nr_globs > 0;
}

bool rules__label_matches(const struct wait_rule *rule, const char *value)
{
	return rule->scope == RULE_LABEL && value && rule->nr_globs == 1 &&
	       !fnmatch(rule->globs[0], value, 0);
}

static void rule_free(struct wait_rule *rule)
{
	size_t i;

	for (i = 0; i < rule->nr_globs; i++)
		free(rule->globs[i]);
	free(rule->globs);
	free(rule->wait_class);
	free(rule->label);
}

/* Splits on blanks, up to a '#'; returns the number of tokens or -E2BIG. */
static int tokenize(char *line, char **tokens)
{
	int n = 0;
	char *save = NULL, *tok;

	line[strcspn(line, "#\n")] = '\0';
	for (tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_TOKENS)
			return -E2BIG;
		tokens[n++] = tok;
	}
	return n;
}

static int parse_rule(char **tokens, int n, struct wait_rule *rule, const char **why)
{
	int i;

	memset(rule, 0, sizeof(*rule));
	if (n < 3) {
		*why = "expected: kernel|user GLOB [GLOB...] CLASS[:DETAIL]";
		return -EINVAL;
	}
	if (!strcmp(tokens[0], "kernel")) {
		rule->scope = RULE_KERNEL;
	} else if (!strcmp(tokens[0], "user")) {
		rule->scope = RULE_USER;
	} else if (!strcmp(tokens[0], "label")) {
		/* The class of a wait whose label NAME matches GLOB. */
		rule->scope = RULE_LABEL;
		if (n != 4) {
			*why = "expected: label NAME GLOB CLASS[:DETAIL]";
			return -EINVAL;
		}
	} else {
		*why = "a rule starts with 'kernel', 'user', 'label', 'process' or 'read'";
		return -EINVAL;
	}
	if (!rules__valid_class(tokens[n - 1])) {
		*why = "unknown wait class (cpu, sleep, lock, io, net, poll, pipe, child, signal, "
		       "pagefault, idle, other, each with an optional :detail)";
		return -EINVAL;
	}
	rule->wait_class = strdup(tokens[n - 1]);
	rule->globs = calloc(n - 2, sizeof(*rule->globs));
	if (!rule->wait_class || !rule->globs)
		goto nomem;
	if (rule->scope == RULE_LABEL) {
		rule->label = strdup(tokens[1]);
		if (!rule->label)
			goto nomem;
		tokens++;
		n--;
	}
	for (i = 1; i < n - 1; i++) {
		rule->globs[rule->nr_globs] = strdup(tokens[i]);
		if (!rule->globs[rule->nr_globs])
			goto nomem;
		rule->nr_globs++;
	}
	return 0;
nomem:
	rule_free(rule);
	*why = "out of memory";
	return -ENOMEM;
}

int rules__parse(FILE *file, struct rule_set *set, unsigned int *bad_line, const char **why)
{
	struct rule_set added = { 0 };
	char *line = NULL, *tokens[MAX_TOKENS];
	size_t size = 0, cap = 0, i;
	unsigned int number = 0;
	int n, err = 0, read_errno;

	for (;;) {
		struct wait_rule *grown;

		errno = 0;
		if (getline(&line, &size, file) < 0)
			break;
		number++;
		n = tokenize(line, tokens);
		if (n == 0)
			continue;
		if (n < 0) {
			*why = "too many globs on one line";
			err = -EINVAL;
			break;
		}
		if (!strcmp(tokens[0], "process") || !strcmp(tokens[0], "read")) {
			err = !strcmp(tokens[0], "process")
				  ? reads__parse_process(tokens, n, &added, why)
				  : reads__parse_read(tokens, n, &added, why);
			if (err)
				break;
			continue;
		}
		if (added.nr == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(added.rules, cap * sizeof(*grown));
			if (!grown) {
				*why = "out of memory";
				err = -ENOMEM;
				break;
			}
			added.rules = grown;
		}
		err = parse_rule(tokens, n, &added.rules[added.nr], why);
		if (err)
			break;
		added.nr++;
	}
	read_errno = errno;
	free(line);
	/*
	 * getline's -1 is also a failed read (EIO, EISDIR for a directory) or
	 * a line it had no memory for; glibc 2.36 sets no error flag for the
	 * latter. Only the end of the file is the end of the rules.
	 */
	if (!err && !feof(file)) {
		*why = "the file cannot be read to its end";
		err = -(read_errno ?: EIO);
	}
	if (!err) {
		struct wait_rule *all =
		    realloc(set->rules, (set->nr + added.nr + 1) * sizeof(*all));

		/* A file of comments adds nothing to copy (found by tests/fuzz/fuzz_rules). */
		struct read_group *groups =
		    all ? realloc(set->groups,
				  (set->nr_groups + added.nr_groups + 1) * sizeof(*groups))
			: NULL;

		if (all)
			set->rules = all;
		if (groups) {
			if (added.nr)
				memcpy(all + set->nr, added.rules, added.nr * sizeof(*all));
			set->nr += added.nr;
			free(added.rules);
			if (added.nr_groups)
				memcpy(groups + set->nr_groups, added.groups,
				       added.nr_groups * sizeof(*groups));
			set->groups = groups;
			set->nr_groups += added.nr_groups;
			free(added.groups);
			return 0;
		}
		*why = "out of memory";
		err = -ENOMEM;
	}
	*bad_line = number;
	for (i = 0; i < added.nr; i++)
		rule_free(&added.rules[i]);
	free(added.rules);
	reads__free_groups(&added);
	return err;
}

/* A file shipped with offcpu: beside the binary (a build tree), then installed, then Debian's. */
static FILE *open_shipped(const char *name, char *path, size_t path_size)
{
	char exe[PATH_MAX], *slash;
	ssize_t len;
	FILE *file;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, path_size, "%s/rules/%s", exe, name);
			file = fopen(path, "re");
			if (file)
				return file;
			/* make install: PREFIX/bin/offcpu, PREFIX/share/offcpu/rules. */
			snprintf(path, path_size, "%s/../share/offcpu/rules/%s", exe, name);
			file = fopen(path, "re");
			if (file)
				return file;
		}
	}
	snprintf(path, path_size, "/usr/share/offcpu/rules/%s", name);
	return fopen(path, "re");
}

FILE *rules__open(const char *arg, char *path, size_t path_size)
{
	char name[NAME_MAX + 1];
	FILE *file;

	snprintf(path, path_size, "%s", arg);
	file = fopen(arg, "re");
	if (file || strchr(arg, '/'))
		return file;
	/* A pack name. */
	if ((size_t)snprintf(name, sizeof(name), "%s.rules", arg) >= sizeof(name))
		return NULL;
	file = open_shipped(name, path, path_size);
	if (!file)
		snprintf(path, path_size, "%s", arg);
	return file;
}

/*
 * Whether fd may be read beside a rules file owned by rules_uid: a file a
 * pack is decoded by is trusted as far as that rules file is, and no
 * further. A regular file (a FIFO would hang the start), owned by root, by
 * us or by the rules file's owner, and writable by its owner alone: in a
 * shared folder such as /tmp another user's file is not read.
 */
static bool trusted_beside(int fd, uid_t rules_uid)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	return st.st_uid == 0 || st.st_uid == geteuid() || st.st_uid == rules_uid;
}

int rules__open_beside(const char *rules_path, const char *name, char *path, size_t path_size,
		       FILE **file)
{
	const char *slash = strrchr(rules_path, '/');
	uid_t rules_uid = geteuid();
	struct stat st;
	int fd, n;

	*file = NULL;
	if (slash)
		n = snprintf(path, path_size, "%.*s/%s", (int)(slash - rules_path), rules_path,
			     name);
	else
		n = snprintf(path, path_size, "%s", name);
	if (n < 0 || (size_t)n >= path_size)
		return -ENAMETOOLONG;
	if (!stat(rules_path, &st))
		rules_uid = st.st_uid;
	/* O_NOFOLLOW: a link there is refused (ELOOP), not followed. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno != ENOENT)
		return errno == ELOOP ? -EPERM : -errno;
	if (fd >= 0) {
		if (!trusted_beside(fd, rules_uid)) {
			close(fd);
			return -EPERM;
		}
		*file = fdopen(fd, "re");
		if (!*file) {
			n = -errno;
			close(fd);
			return n;
		}
		return 0;
	}
	*file = open_shipped(name, path, path_size);
	return 0;
}

void rules__free(struct rule_set *set)
{
	size_t i;

	for (i = 0; i < set->nr; i++)
		rule_free(&set->rules[i]);
	free(set->rules);
	set->rules = NULL;
	set->nr = 0;
	reads__free_groups(set);
	pg_events__free(set->pg_events);
	set->pg_events = NULL;
	free(set->pg_events_path);
	set->pg_events_path = NULL;
	set->pg_events_looked_up = false;
}
