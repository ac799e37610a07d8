// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/main_binary.h"

/* glibc's execvp without PATH: confstr(_CS_PATH). */
#define DEFAULT_PATH "/bin:/usr/bin"

static bool is_executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int main_binary__search_path(const char *name, const char *path_env, char *buf, size_t size)
{
	const char *dir = path_env ? path_env : DEFAULT_PATH, *end;
	int len;

	if (!name[0])
		return -ENOENT;
	if (strchr(name, '/')) {
		len = snprintf(buf, size, "%s", name);
		return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
	}
	for (;; dir = end + 1) {
		end = strchrnul(dir, ':');
		/* An empty entry is the working directory, as execvp takes it. */
		if (end == dir)
			len = snprintf(buf, size, "%s", name);
		else
			len = snprintf(buf, size, "%.*s/%s", (int)(end - dir), dir, name);
		if (len >= 0 && (size_t)len < size && is_executable_file(buf))
			return 0;
		if (!*end)
			break;
	}
	return -ENOENT;
}

static void read_exe_link(const char *link, char *buf, size_t size)
{
	ssize_t len = readlink(link, buf, size - 1);

	buf[len > 0 ? len : 0] = '\0';
}

void main_binary__find(char *const *command, const struct id_list *pids, char *buf, size_t size)
{
	char found[PATH_MAX], resolved[PATH_MAX], link[64];

	buf[0] = '\0';
	if (command &&
	    !main_binary__search_path(command[0], getenv("PATH"), found, sizeof(found))) {
		snprintf(buf, size, "%s", realpath(found, resolved) ? resolved : found);
		return;
	}
	if (!command && pids->nr == 1) {
		snprintf(link, sizeof(link), "/proc/%u/exe", pids->ids[0]);
		read_exe_link(link, buf, size);
	}
	if (!buf[0])
		read_exe_link("/proc/self/exe", buf, size);
}
