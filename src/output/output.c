// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "output/output.h"

static const struct output_format formats[] = {
	{ "text", ".txt", false, output_text__write },
	{ "folded", ".folded", false, output_folded__write },
	{ "json", ".json", true, output_json__write },
	{ "pprof", ".pb.gz", false, output_pprof__write },
	{ "svg", ".svg", false, output_svg__write },
};

static const char *const group_by_names[] = {
	[GROUP_BY_TID] = "tid",	    [GROUP_BY_PID] = "pid",	[GROUP_BY_COMM] = "comm",
	[GROUP_BY_TITLE] = "title", [GROUP_BY_STATE] = "state", [GROUP_BY_WAIT] = "wait",
};

void output__format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, size, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f us", ns / 1e3);
}

int output_group_by__parse(const char *name, enum report_group_by *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(group_by_names); i++) {
		if (!strcmp(name, group_by_names[i])) {
			*out = (enum report_group_by)i;
			return 0;
		}
	}
	return -EINVAL;
}

const struct output_format *output_format__by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	}
	return NULL;
}

const struct output_format *output_format__by_path(const char *path)
{
	size_t len = strlen(path), i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		size_t ext = strlen(formats[i].extension);

		if (len > ext && !strcmp(path + len - ext, formats[i].extension))
			return &formats[i];
	}
	return NULL;
}

int output_file__open(const char *path, struct output_file *out)
{
	char *dir_copy, *base_copy;
	struct stat st;
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (!path || !strcmp(path, "-")) {
		out->stream = stdout;
		return 0;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	/* A device or a FIFO (/dev/null, a pipe) cannot be renamed over: write to it. */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		out->stream = fopen(path, "we");
		return out->stream ? 0 : -errno;
	}
	out->path = strdup(path);
	dir_copy = strdup(path);
	base_copy = strdup(path);
	if (!out->path || !dir_copy || !base_copy) {
		err = -ENOMEM;
		goto fail;
	}
	if (asprintf(&out->temp_path, "%s/.%s.XXXXXX", dirname(dir_copy), basename(base_copy)) <
	    0) {
		out->temp_path = NULL;
		err = -ENOMEM;
		goto fail;
	}
	fd = mkostemp(out->temp_path, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(out->temp_path);
		out->temp_path = NULL;
		goto fail;
	}
	/* mkstemp makes it 0600; an output file is as readable as any other. */
	fchmod(fd, 0644 & ~umask(umask(0)));
	out->stream = fdopen(fd, "w");
	if (!out->stream) {
		err = -errno;
		close(fd);
		goto fail;
	}
	free(dir_copy);
	free(base_copy);
	return 0;
fail:
	free(dir_copy);
	free(base_copy);
	output_file__abort(out);
	return err;
}

int output_file__commit(struct output_file *f)
{
	int err = 0;

	if (fflush(f->stream) || ferror(f->stream))
		err = errno ? -errno : -EIO;
	if (!f->path) {
		if (f->stream != stdout && fclose(f->stream) && !err)
			err = -errno;
		f->stream = NULL;
		return err;
	}
	if (fclose(f->stream) && !err)
		err = errno ? -errno : -EIO;
	f->stream = NULL;
	if (!err && rename(f->temp_path, f->path))
		err = -errno;
	if (err) {
		output_file__abort(f);
		return err;
	}
	free(f->temp_path);
	free(f->path);
	f->temp_path = NULL;
	f->path = NULL;
	return 0;
}

void output_file__abort(struct output_file *f)
{
	if (f->stream && f->stream != stdout)
		fclose(f->stream);
	f->stream = NULL;
	if (f->temp_path)
		unlink(f->temp_path);
	free(f->temp_path);
	free(f->path);
	f->temp_path = NULL;
	f->path = NULL;
}
