// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/stop_signals.h"
#include "output/output.h"

static const struct output_format formats[] = {
	{ "text", ".txt", false, output_text__write },
	{ "folded", ".folded", false, output_folded__write },
	{ "json", ".json", true, output_json__write },
	{ "pprof", ".pb.gz", false, output_pprof__write },
	{ "svg", ".svg", false, output_svg__write },
	{ "dot", ".dot", false, output_dot__write },
	/* Every wait is drawn, so every wait is kept. */
	{ "trace", ".trace.json", true, output_trace__write },
};

static const char *const group_by_names[] = {
	[GROUP_BY_TID] = "tid",	    [GROUP_BY_PID] = "pid",	  [GROUP_BY_COMM] = "comm",
	[GROUP_BY_TITLE] = "title", [GROUP_BY_STATE] = "state",	  [GROUP_BY_WAIT] = "wait",
	[GROUP_BY_WAKER] = "waker", [GROUP_BY_OBJECT] = "object",
};

static const char *const time_names[] = {
	[OUTPUT_TIME_OFF_CPU] = "off-cpu",
	[OUTPUT_TIME_BLOCKED] = "blocked",
	[OUTPUT_TIME_RUNQ] = "runq",
};

int output_time__parse(const char *name, enum output_time *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(time_names); i++) {
		if (!strcmp(name, time_names[i])) {
			*out = (enum output_time)i;
			return 0;
		}
	}
	return -EINVAL;
}

uint64_t output__entry_time(const struct profile_entry *e, enum output_time time)
{
	switch (time) {
	case OUTPUT_TIME_BLOCKED:
		return e->total_ns - e->runq_ns;
	case OUTPUT_TIME_RUNQ:
		return e->runq_ns;
	default:
		return e->total_ns;
	}
}

const char *output__waker_context(unsigned int context)
{
	switch (context) {
	case OFFCPU_WAKER_TASK:
		return "task";
	case OFFCPU_WAKER_HARDIRQ:
		return "hardirq";
	case OFFCPU_WAKER_SOFTIRQ:
		return "softirq";
	default:
		return NULL;
	}
}

void output__format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, size, "%.3f s", ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f us", ns / 1e3);
}

bool output_label_name__valid(const char *name)
{
	const char *dot = strchr(name, '.');
	size_t n = strlen(name);

	if (!dot || dot == name || !dot[1] || n > 64)
		return false;
	for (; *name; name++) {
		if (!isalnum((unsigned char)*name) && !strchr("_.-", *name))
			return false;
	}
	return true;
}

int output_group_by__parse(const char *name, enum report_group_by *out)
{
	size_t i;

	if (output_label_name__valid(name)) {
		*out = GROUP_BY_LABEL;
		return 0;
	}

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

/* The longest extension that matches: run.trace.json is a trace, not a json recording. */
const struct output_format *output_format__by_path(const char *path)
{
	const struct output_format *found = NULL;
	size_t len = strlen(path), i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		size_t ext = strlen(formats[i].extension);

		if (len > ext && !strcmp(path + len - ext, formats[i].extension) &&
		    (!found || ext > strlen(found->extension)))
			found = &formats[i];
	}
	return found;
}

/*
 * Under the output's stream: stdio keeps an error flag but not its cause,
 * and errno has moved on by the time the output is committed, so the
 * first failed write (or close) keeps its errno here. With it, where a
 * file goes: the directory, held open from the start so that the file is
 * put where its path led when it was checked, and the name in it.
 */
struct output_sink {
	int fd;
	bool owned; /* closed with the stream; stdout and named descriptors are not */
	int error;  /* errno of the first failure, 0 if none */
	int dir_fd; /* -1: written in place */
	char *name;
	bool anonymous;		      /* O_TMPFILE: no name until committed */
	char temp_name[NAME_MAX + 1]; /* the named temporary file, "" if none */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct output_sink *sink = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < size) {
		n = write(sink->fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!sink->error)
				sink->error = n < 0 ? errno : EIO;
			/* Short, or 0: stdio marks the stream failed. */
			return (ssize_t)done;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int sink_close(void *cookie)
{
	struct output_sink *sink = cookie;

	if (sink->owned && close(sink->fd)) {
		if (!sink->error)
			sink->error = errno;
		return -1;
	}
	return 0;
}

/* The stream over out->sink->fd, which it closes if owned (also when it fails). */
static int open_stream(struct output_file *out, int fd, bool owned)
{
	static const cookie_io_functions_t sink_io = { .write = sink_write, .close = sink_close };

	out->sink->fd = fd;
	out->sink->owned = owned;
	out->stream = fopencookie(out->sink, "w", sink_io);
	if (!out->stream) {
		if (owned)
			close(fd);
		return -ENOMEM;
	}
	/*
	 * glibc locks a cookie stream on every call (fopen's only once threads
	 * exist): fputc, which the back-ends call per byte, ran 5x slower (50M
	 * calls: 0.69 s, 0.14 s unlocked). One thread writes an output.
	 */
	__fsetlocking(out->stream, FSETLOCKING_BYCALLER);
	return 0;
}

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor named, else -1. */
static int named_descriptor(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	uint64_t fd;
	size_t i;

	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		size_t len = strlen(dirs[i]);

		if (!strncmp(path, dirs[i], len) && !parse__uint(path + len, 0, INT_MAX, &fd))
			return (int)fd;
	}
	return -1;
}

/*
 * Written through the descriptor, as stdout is: renaming over its link
 * would replace /dev/stdout itself with a regular file. Refused now if it
 * cannot take the output, not at the first write.
 */
static int open_descriptor(struct output_file *out, int fd)
{
	int flags = fcntl(fd, F_GETFL);
	struct stat st;

	if (flags < 0)
		return -errno;
	if ((flags & O_ACCMODE) == O_RDONLY || (flags & O_PATH))
		return -EBADF;
	if (fstat(fd, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return open_stream(out, fd, false);
}

/*
 * In a sticky directory (/tmp) only the owner of a name, or of the
 * directory, may replace it: root by CAP_FOWNER, which tracing drops
 * before the output is committed. Said now, not after the recording.
 */
static bool sticky_for_us(int dir_fd, const struct stat *st)
{
	struct stat dir;

	return !fstat(dir_fd, &dir) && (dir.st_mode & S_ISVTX) && st->st_uid != geteuid() &&
	       dir.st_uid != geteuid();
}

/*
 * What may be replaced by a rename: a regular file, a link to one, a link
 * to nothing. Anything else is not ours to remove (a link to a device may
 * be the system's: /dev/disk/..., /dev/cdrom), and a directory is no file.
 */
static int check_replaceable(int dir_fd, const char *name, const struct stat *st,
			     const char **refused)
{
	struct stat target;

	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if ((S_ISREG(st->st_mode) || S_ISLNK(st->st_mode)) && sticky_for_us(dir_fd, st)) {
		*refused = "another user's file in a sticky directory: offcpu does not replace it "
			   "(remove it, or write elsewhere)";
		return -EINVAL;
	}
	if (S_ISREG(st->st_mode))
		return 0;
	if (S_ISLNK(st->st_mode)) {
		if (fstatat(dir_fd, name, &target, 0))
			return errno == ENOENT ? 0 : -errno;
		if (S_ISREG(target.st_mode))
			return 0;
		if (S_ISDIR(target.st_mode))
			return -EISDIR;
		*refused = "a symbolic link to a device, FIFO or socket: offcpu writes neither "
			   "through it nor over it";
		return -EINVAL;
	}
	*refused = "a block device or a socket: offcpu writes regular files, character devices "
		   "and FIFOs";
	return -EINVAL;
}

/* The destination as it is now: 0 if absent or replaceable. */
static int check_destination(struct output_sink *s, const char **refused)
{
	struct stat st;

	if (fstatat(s->dir_fd, s->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	return check_replaceable(s->dir_fd, s->name, &st, refused);
}

/* A character device or a FIFO named directly (/dev/null, a tty, mkfifo's): in place. */
static int open_in_place(struct output_file *out, const struct stat *seen)
{
	struct output_sink *s = out->sink;
	struct stat st;
	int fd;

	/* A link put there since it was looked at is not followed. */
	fd = openat(s->dir_fd, s->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_dev != seen->st_dev || st.st_ino != seen->st_ino) {
		close(fd);
		out->refused = "replaced while offcpu opened it";
		return -EINVAL;
	}
	close(s->dir_fd);
	s->dir_fd = -1;
	return open_stream(out, fd, true);
}

/*
 * ".NAME.XXXXXX" beside the destination, NAME cut so that the whole fits
 * NAME_MAX: a 250-byte file name is valid, its temporary name must be too.
 */
static void make_temp_name(const char *name, char *buf)
{
	static const char chars[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static uint64_t counter;
	char suffix[7];
	uint64_t r;
	size_t i;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = clock__monotonic_ns() ^ ((uint64_t)getpid() << 32);
	r += counter++;
	for (i = 0; i < sizeof(suffix) - 1; i++) {
		suffix[i] = chars[r % (sizeof(chars) - 1)];
		r /= sizeof(chars) - 1;
	}
	suffix[i] = '\0';
	snprintf(buf, NAME_MAX + 1, ".%.*s.%s", NAME_MAX - 8, name, suffix);
}

#define TEMP_NAME_TRIES 100

/* Where the filesystem has no O_TMPFILE: a named temporary file, removed on abort. */
static int create_named(struct output_file *out, const char *dir)
{
	struct output_sink *s = out->sink;
	int fd = -1, tries;

	for (tries = 0; tries < TEMP_NAME_TRIES; tries++) {
		make_temp_name(s->name, s->temp_name);
		fd = openat(s->dir_fd, s->temp_name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		s->temp_name[0] = '\0';
		return -errno;
	}
	if (asprintf(&out->temp_path, "%s/%s", dir, s->temp_name) < 0) {
		out->temp_path = NULL;
		close(fd);
		return -ENOMEM;
	}
	return open_stream(out, fd, true);
}

/*
 * With O_TMPFILE the file has no name until it is complete: a SIGKILL or
 * the OOM killer during a recording leaves nothing behind.
 */
static int create(struct output_file *out, const char *dir)
{
	struct output_sink *s = out->sink;
	int fd = openat(s->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);

	/* EOPNOTSUPP: this filesystem has none; EISDIR: this kernel (before 3.11). */
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
		return create_named(out, dir);
	if (fd < 0)
		return -errno;
	s->anonymous = true;
	return open_stream(out, fd, true);
}

/* "dir/name" into its directory ("." when none) and its last component. */
static int split_path(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	/* "out/", ".", "..": a directory, whatever is there. */
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	if (!slash)
		*dir = strdup(".");
	else if (slash == path)
		*dir = strdup("/");
	else
		*dir = strndup(path, (size_t)(slash - path));
	*name = strdup(base);
	return *dir && *name ? 0 : -ENOMEM;
}

static int open_path(struct output_file *out, const char *path)
{
	struct output_sink *s = out->sink;
	char *dir = NULL;
	struct stat st;
	int err;

	err = split_path(path, &dir, &s->name);
	if (err)
		goto out;
	s->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstatat(s->dir_fd, s->name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = errno == ENOENT ? 0 : -errno;
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		err = open_in_place(out, &st);
		goto out;
	} else {
		err = check_replaceable(s->dir_fd, s->name, &st, &out->refused);
	}
	if (!err)
		err = create(out, dir);
out:
	free(dir);
	return err;
}

int output_file__open(const char *path, struct output_file *out)
{
	const char *refused;
	int fd, err;

	memset(out, 0, sizeof(*out));
	out->sink = calloc(1, sizeof(*out->sink));
	if (!out->sink)
		return -ENOMEM;
	out->sink->fd = -1;
	out->sink->dir_fd = -1;
	if (!path || !strcmp(path, "-"))
		return open_stream(out, STDOUT_FILENO, false);
	fd = named_descriptor(path);
	err = fd >= 0 ? open_descriptor(out, fd) : open_path(out, path);
	if (err) {
		refused = out->refused;
		output_file__abort(out);
		out->refused = refused;
	}
	return err;
}

/* fd's file under name in dir_fd: a new link to the anonymous file. */
static int link_descriptor(int fd, int dir_fd, const char *name)
{
	char proc_path[64];

	/* Anyone may link an O_TMPFILE file by its /proc path, ... */
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, proc_path, dir_fd, name, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* ... without /proc, AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH (kept after the drop). */
	return linkat(fd, "", dir_fd, name, AT_EMPTY_PATH) ? -errno : 0;
}

/* The finished file under a temporary name, renamed over the destination. */
static int replace(struct output_sink *s, int keep)
{
	int err = -EEXIST, tries;

	for (tries = 0; err == -EEXIST && tries < TEMP_NAME_TRIES; tries++) {
		make_temp_name(s->name, s->temp_name);
		err = link_descriptor(keep, s->dir_fd, s->temp_name);
	}
	if (err) {
		s->temp_name[0] = '\0';
		return err;
	}
	if (renameat(s->dir_fd, s->temp_name, s->dir_fd, s->name)) {
		err = -errno;
		unlinkat(s->dir_fd, s->temp_name, 0);
	}
	s->temp_name[0] = '\0';
	return err;
}

/*
 * The complete file under its name. What is there was checked at open and
 * is again (it may have changed since); that leaves a race with whoever can
 * write the directory, but a rename only ever replaces a name: it writes
 * through nothing.
 */
static int publish(struct output_file *f, int keep)
{
	struct output_sink *s = f->sink;
	sigset_t saved;
	int err;

	/* A handler that exits (a second Ctrl-C) must not strand a temporary name. */
	stop_signals__hold(&saved);
	if (s->anonymous) {
		err = link_descriptor(keep, s->dir_fd, s->name);
		if (err == -EEXIST)
			err = check_destination(s, &f->refused) ?: replace(s, keep);
	} else {
		err = check_destination(s, &f->refused);
		if (!err && renameat(s->dir_fd, s->temp_name, s->dir_fd, s->name))
			err = -errno;
		if (!err)
			s->temp_name[0] = '\0';
	}
	sigprocmask(SIG_SETMASK, &saved, NULL);
	return err;
}

int output_file__commit(struct output_file *f)
{
	struct output_sink *s = f->sink;
	bool failed = fflush(f->stream) || ferror(f->stream);
	int keep = -1, err;

	/*
	 * The anonymous file lives while a descriptor to it does: one is kept
	 * past the stream's close, so that the close's own errors (a flush on
	 * close) are known before the file gets its name.
	 */
	if (!failed && s->anonymous) {
		keep = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
		if (keep < 0 && !s->error)
			s->error = errno;
		failed = keep < 0;
	}
	failed |= fclose(f->stream) != 0;
	f->stream = NULL;
	err = failed ? -(s->error ?: EIO) : 0;
	if (!err && s->dir_fd >= 0)
		err = publish(f, keep);
	if (keep >= 0)
		close(keep);
	/* Committed or failed, what is left to free is what an abort frees. */
	output_file__abort(f);
	return err;
}

void output_file__abort(struct output_file *f)
{
	struct output_sink *s = f->sink;

	if (f->stream)
		fclose(f->stream);
	f->stream = NULL;
	if (s && s->temp_name[0])
		unlinkat(s->dir_fd, s->temp_name, 0);
	if (s && s->dir_fd >= 0)
		close(s->dir_fd);
	if (s)
		free(s->name);
	free(s);
	free(f->temp_path);
	f->sink = NULL;
	f->temp_path = NULL;
}

void output__object_name(const struct wait_object *o, char *buf, size_t size)
{
	size_t kind = strlen(o->kind);

	if (!strncmp(o->name, o->kind, kind) && o->name[kind] == ' ')
		snprintf(buf, size, "%s", o->name);
	else
		snprintf(buf, size, "%s %s", o->kind, o->name);
}
