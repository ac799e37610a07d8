// SPDX-License-Identifier: GPL-2.0
/*
 * pprof: a gzipped profile.proto (github.com/google/pprof, proto/profile.proto).
 *
 * One sample per aggregate (thread, state, wait class, stacks), with the
 * wait count and the off-CPU nanoseconds as its values and the thread's
 * facts as labels, so `pprof -tagfocus` slices by them; with -F, one per
 * aggregate of on-CPU samples too (see enum shape).
 *
 * Addresses: a profile holds many processes, each with its own layout, so
 * a user location's address is its offset in the mapped file and its
 * mapping spans the offsets seen (start = file_offset = the lowest); the
 * kernel's addresses are its own. Every location carries its function,
 * so pprof never needs to symbolize again.
 *
 * pprof takes the first mapping for the main binary, and titles the
 * profile by it ("File: ..."): the first is the traced program's (or
 * offcpu's own, profile.main_binary), not the first module a frame
 * happens to name, which is the kernel's, leaf first.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "classify/states.h"
#include "lib/hash_table.h"
#include "output/frame_names.h"
#include "output/output.h"
#include "output/protobuf.h"
#include "trace/counters.h"

/* profile.proto field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

struct string_entry {
	const char *key;  /* the string as given, a copy */
	const char *text; /* as the profile holds it */
	uint64_t index;
};

struct mapping {
	const char *module; /* one mapping per module */
	const char *build_id;
	uint64_t id;
	uint64_t lowest;
	uint64_t highest;
	bool has_lines;
	bool has_frames; /* lowest and highest are offsets of frames */
};

/* A location is one frame's code: its module, offset and function. */
struct location_key {
	const char *module;
	uint64_t address;
	const char *sym;
	const char *file;
	uint32_t line;
	const struct frame_inline *inlined;
	bool kernel;
};

struct location {
	struct location_key key;
	uint64_t id;
	uint64_t mapping_id;
	uint64_t function_id;
};

struct function_key {
	const char *name;
	const char *system_name;
	const char *file;
};

struct function {
	struct function_key key;
	uint64_t id;
};

struct pprof {
	struct hash_table *strings; /* text -> struct string_entry */
	const char **string_table;
	size_t nr_strings;
	size_t strings_cap;
	struct hash_table *mappings;  /* module's path -> struct mapping */
	struct hash_table *locations; /* location_key -> struct location */
	struct hash_table *functions; /* function_key -> struct function */
	struct pb_buffer profile;
	struct pb_buffer message;
	struct pb_buffer inner;
	int err;
};

static uint64_t hash_location(const void *key)
{
	const struct location_key *k = key;
	uint64_t parts[6] = { (uintptr_t)k->module,
			      k->address,
			      (uintptr_t)k->sym,
			      (uintptr_t)k->file,
			      k->line | (uint64_t)k->kernel << 32,
			      (uintptr_t)k->inlined };

	return hash_table__hash_bytes(parts, sizeof(parts), 0);
}

static bool equal_location(const void *a, const void *b)
{
	const struct location_key *x = a, *y = b;

	return x->module == y->module && x->address == y->address && x->sym == y->sym &&
	       x->file == y->file && x->line == y->line && x->inlined == y->inlined &&
	       x->kernel == y->kernel;
}

static uint64_t hash_function(const void *key)
{
	const struct function_key *k = key;
	uint64_t h = hash_table__hash_string(k->name);

	h = hash_table__hash_bytes(&k->system_name, sizeof(k->system_name), h);
	return hash_table__hash_bytes(&k->file, sizeof(k->file), h);
}

static bool equal_function(const void *a, const void *b)
{
	const struct function_key *x = a, *y = b;

	return !strcmp(x->name, y->name) && x->system_name == y->system_name && x->file == y->file;
}

static uint64_t string_index(struct pprof *pp, const char *text)
{
	struct string_entry *e;
	char *key, *copy;
	size_t len;

	if (!text)
		return 0;
	e = hash_table__find(pp->strings, text);
	if (e)
		return e->index;
	if (pp->nr_strings == pp->strings_cap) {
		size_t cap = pp->strings_cap ? pp->strings_cap * 2 : 256;
		const char **grown = realloc(pp->string_table, cap * sizeof(*grown));

		if (!grown)
			goto nomem;
		pp->string_table = grown;
		pp->strings_cap = cap;
	}
	/*
	 * profile.proto's strings must be UTF-8, and pprof prints labels and
	 * names to a terminal as they are: shown as the text report shows them.
	 */
	len = frame_names__printable(text, NULL, 0) + 1;
	e = malloc(sizeof(*e));
	key = strdup(text);
	copy = malloc(len);
	if (copy)
		frame_names__printable(text, copy, len);
	if (!e || !key || !copy || hash_table__insert(pp->strings, key, e)) {
		free(e);
		free(key);
		free(copy);
		goto nomem;
	}
	e->key = key;
	e->text = copy;
	e->index = pp->nr_strings;
	pp->string_table[pp->nr_strings++] = copy;
	return e->index;
nomem:
	pp->err = -ENOMEM;
	return 0;
}

/* The mapping of module, made with the next ID if there is none yet. */
static struct mapping *mapping_named(struct pprof *pp, const char *module)
{
	struct mapping *m = hash_table__find(pp->mappings, module);

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m || hash_table__insert(pp->mappings, module, m)) {
		free(m);
		pp->err = -ENOMEM;
		return NULL;
	}
	m->module = module;
	m->id = hash_table__size(pp->mappings);
	return m;
}

static struct mapping *mapping_of(struct pprof *pp, const struct frame *f)
{
	struct mapping *m;

	if (!f->module)
		return NULL;
	m = mapping_named(pp, f->module);
	if (!m)
		return NULL;
	if (!m->has_frames) {
		m->lowest = f->module_off;
		m->highest = f->module_off;
		m->has_frames = true;
	}
	if (!m->build_id)
		m->build_id = f->build_id;
	if (f->module_off < m->lowest)
		m->lowest = f->module_off;
	if (f->module_off > m->highest)
		m->highest = f->module_off;
	if (f->file)
		m->has_lines = true;
	return m;
}

static uint64_t function_id(struct pprof *pp, const char *name, const char *system_name,
			    const char *file)
{
	struct function_key key = { name, system_name, file };
	struct function *fn = hash_table__find(pp->functions, &key);
	char *copy;

	if (fn)
		return fn->id;
	fn = calloc(1, sizeof(*fn));
	copy = strdup(name);
	if (!fn || !copy) {
		free(fn);
		free(copy);
		pp->err = -ENOMEM;
		return 0;
	}
	fn->key = key;
	fn->key.name = copy;
	fn->id = hash_table__size(pp->functions) + 1;
	if (hash_table__insert(pp->functions, &fn->key, fn)) {
		free(copy);
		free(fn);
		pp->err = -ENOMEM;
		return 0;
	}
	return fn->id;
}

static uint64_t location_id(struct pprof *pp, const struct frame *f)
{
	struct location_key key = {
		.module = f->module,
		.address = f->module ? f->module_off : f->addr,
		.sym = f->sym,
		.file = f->file,
		.line = f->line,
		.inlined = f->inlined,
		.kernel = f->kernel,
	};
	struct location *loc = hash_table__find(pp->locations, &key);
	struct mapping *m;
	char name[600];

	if (loc)
		return loc->id;
	loc = calloc(1, sizeof(*loc));
	if (!loc) {
		pp->err = -ENOMEM;
		return 0;
	}
	loc->key = key;
	m = mapping_of(pp, f);
	loc->mapping_id = m ? m->id : 0;
	/*
	 * The symbol as it is: display names are made safe for folded
	 * readers ("block()_const"), which pprof is not. Unnamed code keeps
	 * its "module+0x..." name.
	 */
	if (!f->sym)
		frame_names__frame(f, name, sizeof(name));
	loc->function_id = function_id(pp, f->sym ?: name, f->system_name, f->file);
	loc->id = hash_table__size(pp->locations) + 1;
	if (hash_table__insert(pp->locations, &loc->key, loc)) {
		free(loc);
		pp->err = -ENOMEM;
		return 0;
	}
	return loc->id;
}

static void value_type(struct pprof *pp, uint32_t field, const char *type, const char *unit)
{
	pb_buffer__reset(&pp->message);
	pb_buffer__varint(&pp->message, VALUE_TYPE_TYPE, string_index(pp, type));
	pb_buffer__varint(&pp->message, VALUE_TYPE_UNIT, string_index(pp, unit));
	pb_buffer__message(&pp->profile, field, &pp->message);
}

static void string_label(struct pprof *pp, const char *key, const char *value)
{
	pb_buffer__reset(&pp->inner);
	pb_buffer__varint(&pp->inner, LABEL_KEY, string_index(pp, key));
	pb_buffer__varint(&pp->inner, LABEL_STR, string_index(pp, value));
	pb_buffer__message(&pp->message, SAMPLE_LABEL, &pp->inner);
}

static void number_label(struct pprof *pp, const char *key, uint64_t value)
{
	pb_buffer__reset(&pp->inner);
	pb_buffer__varint(&pp->inner, LABEL_KEY, string_index(pp, key));
	pb_buffer__varint(&pp->inner, LABEL_NUM, value);
	pb_buffer__message(&pp->message, SAMPLE_LABEL, &pp->inner);
}

static int add_location(struct pprof *pp, const struct frame *f, uint64_t **ids, size_t *nr,
			size_t *cap)
{
	if (*nr == *cap) {
		size_t grown_cap = *cap ? *cap * 2 : 256;
		uint64_t *grown = realloc(*ids, grown_cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		*ids = grown;
		*cap = grown_cap;
	}
	(*ids)[(*nr)++] = location_id(pp, f);
	return pp->err;
}

static int add_stack_locations(struct pprof *pp, const struct stack *s, uint64_t **ids, size_t *nr,
			       size_t *cap)
{
	uint32_t i;
	int err = 0;

	for (i = 0; s && i < s->nr && !err; i++)
		err = add_location(pp, &s->frames[i], ids, nr, cap);
	return err;
}

/* The one frame of a sample whose wait has no stack. */
static const struct frame no_stack = { .sym = "[no stack]" };

/*
 * The values each sample carries, in the order of the sample types:
 * samples/count, off_cpu/nanoseconds and runq/nanoseconds; with on-CPU
 * samples (-F) also cpu/nanoseconds and wall/nanoseconds, on CPU + off CPU,
 * where a wait has no CPU time and a sample no off-CPU time. Go's CPU
 * profile (OUTPUT_PPROF_CPU) has samples/count and cpu/nanoseconds alone.
 */
enum shape {
	SHAPE_OFF_CPU,
	SHAPE_WALL,
	SHAPE_CPU,
};

enum {
	MAX_VALUES = 5,
};

struct samples_out {
	uint64_t *ids;
	size_t cap;
};

/* One sample of an entry: its stacks as locations, its values and its thread's labels. */
static int write_sample(struct pprof *pp, const struct profile_entry *e, const uint64_t *values,
			size_t nr_values, bool on_cpu, struct samples_out *o)
{
	const struct wait *w = &e->key;
	size_t nr = 0;
	int err;

	/* Leaf first: the kernel frames, then the user frames that called in. */
	err = add_stack_locations(pp, w->kernel_stack, &o->ids, &nr, &o->cap);
	err = err ?: add_stack_locations(pp, w->user_stack, &o->ids, &nr, &o->cap);
	/*
	 * A recovered wait has no stack (nor has one taken
	 * with neither side): go tool pprof drops a sample without a
	 * location, and its time with it. One pseudo-frame keeps it.
	 */
	if (!err && !nr)
		err = add_location(pp, &no_stack, &o->ids, &nr, &o->cap);
	if (err)
		return err;
	pb_buffer__reset(&pp->message);
	pb_buffer__packed(&pp->message, SAMPLE_LOCATION_ID, o->ids, nr);
	pb_buffer__packed(&pp->message, SAMPLE_VALUE, values, nr_values);
	/*
	 * Not "running", which a wait's state can be (a yield): "on-cpu", as
	 * folded's pseudo-frame, and no class, so -tagfocus wait.class=...
	 * leaves it out.
	 */
	if (on_cpu) {
		string_label(pp, "thread.state", "on-cpu");
	} else {
		string_label(pp, "thread.state", states__name(w->state));
		string_label(pp, "wait.class", w->wait_class);
	}
	string_label(pp, "thread.name", w->comm);
	string_label(pp, "process.title", w->title ? w->title : w->comm);
	if (w->cgroup)
		string_label(pp, "cgroup", w->cgroup);
	/* A rule pack's labels, by their own names (pg.wait_event...). */
	for (uint32_t l = 0; w->labels && l < w->labels->nr; l++)
		string_label(pp, w->labels->items[l].name, w->labels->items[l].value);
	/* What it waited on, as the text report's "By object" names it, and who held it. */
	if (w->object) {
		char object[512];

		output__object_name(w->object, object, sizeof(object));
		string_label(pp, "wait.object", object);
		if (w->object->holder_tid) {
			string_label(pp, "wait.holder.name",
				     w->object->holder_comm ? w->object->holder_comm : "");
			number_label(pp, "wait.holder.tid", w->object->holder_tid);
		}
	}
	/* Who woke it, as the text report's --group-by waker names it. */
	if (w->waker.context == OFFCPU_WAKER_TASK) {
		string_label(pp, "waker.name", w->waker.comm ? w->waker.comm : "");
		if (w->waker.tid != PROFILE_EXITED_ID)
			number_label(pp, "waker.tid", w->waker.tid);
	} else if (output__waker_context(w->waker.context)) {
		string_label(pp, "waker.name", output__waker_context(w->waker.context));
	}
	/* Merged exited processes have no one pid to give. */
	if (w->pid != PROFILE_EXITED_ID) {
		number_label(pp, "process.pid", w->pid);
		number_label(pp, "thread.id", w->tid);
	}
	pb_buffer__message(&pp->profile, PROFILE_SAMPLE, &pp->message);
	return pp->err ?: pp->profile.err;
}

static int write_waits(struct pprof *pp, const struct profile *p, enum shape shape,
		       struct samples_out *o)
{
	struct profile_entry **entries = NULL;
	uint64_t values[MAX_VALUES];
	size_t nr_entries = 0, i;
	int err = profile__sorted_entries(p, &entries, &nr_entries);

	for (i = 0; i < nr_entries && !err; i++) {
		/* The waits it stands for and their weight, estimates included. */
		values[0] = (uint64_t)(profile__estimated_count(entries[i]) + 0.5);
		values[1] = entries[i]->total_ns;
		values[2] = entries[i]->runq_ns;
		values[3] = 0;
		values[4] = entries[i]->total_ns;
		err = write_sample(pp, entries[i], values, shape == SHAPE_WALL ? 5 : 3, false, o);
	}
	free(entries);
	return err;
}

static int write_on_cpu(struct pprof *pp, const struct profile *p, enum shape shape,
			struct samples_out *o)
{
	struct profile_entry **entries = NULL;
	uint64_t values[MAX_VALUES];
	size_t nr_entries = 0, i;
	int err = profile__sorted_samples(p, &entries, &nr_entries);

	for (i = 0; i < nr_entries && !err; i++) {
		const struct profile_entry *e = entries[i];

		if (shape == SHAPE_CPU) {
			values[0] = e->count;
			values[1] = e->total_ns;
			err = write_sample(pp, e, values, 2, true, o);
			continue;
		}
		values[0] = e->count;
		values[1] = 0;
		values[2] = 0;
		values[3] = e->total_ns;
		values[4] = e->total_ns;
		err = write_sample(pp, e, values, 5, true, o);
	}
	free(entries);
	return err;
}

static int write_samples(struct pprof *pp, const struct profile *p, enum shape shape)
{
	struct samples_out o = { 0 };
	int err = 0;

	if (shape != SHAPE_CPU)
		err = write_waits(pp, p, shape, &o);
	if (!err && shape != SHAPE_OFF_CPU)
		err = write_on_cpu(pp, p, shape, &o);
	free(o.ids);
	return err;
}

/* What the profile holds, and so which values its samples carry. */
static enum shape shape_of(const struct profile *p, const struct output_opts *opts)
{
	if (opts->pprof == OUTPUT_PPROF_CPU)
		return SHAPE_CPU;
	return p->oncpu.count || p->oncpu.period_ns ? SHAPE_WALL : SHAPE_OFF_CPU;
}

/*
 * The values of map in the order of their IDs, 1 to n (index 0 unused):
 * profile.proto lists mappings, locations and functions by ID. id_offset
 * is where each value keeps its uint64_t ID.
 */
static void **ordered_by_id(struct pprof *pp, const struct hash_table *map, size_t id_offset)
{
	void **by_id = calloc(hash_table__size(map) + 1, sizeof(*by_id));
	struct hash_table_iter it = { 0 };
	const void *key;
	void *value;

	if (!by_id) {
		pp->err = -ENOMEM;
		return NULL;
	}
	while (hash_table__next(map, &it, &key, &value)) {
		uint64_t id;

		memcpy(&id, (const char *)value + id_offset, sizeof(id));
		by_id[id] = value;
	}
	return by_id;
}

static void write_mappings(struct pprof *pp)
{
	void **by_id = ordered_by_id(pp, pp->mappings, offsetof(struct mapping, id));
	size_t i;

	if (!by_id)
		return;
	for (i = 1; i <= hash_table__size(pp->mappings); i++) {
		const struct mapping *m = by_id[i];

		pb_buffer__reset(&pp->message);
		pb_buffer__varint(&pp->message, MAPPING_ID, m->id);
		pb_buffer__varint(&pp->message, MAPPING_MEMORY_START, m->lowest);
		/* A main binary no frame is in spans nothing. */
		pb_buffer__varint(&pp->message, MAPPING_MEMORY_LIMIT,
				  m->has_frames ? m->highest + 1 : 0);
		pb_buffer__varint(&pp->message, MAPPING_FILE_OFFSET, m->lowest);
		pb_buffer__varint(&pp->message, MAPPING_FILENAME, string_index(pp, m->module));
		if (m->build_id)
			pb_buffer__varint(&pp->message, MAPPING_BUILD_ID,
					  string_index(pp, m->build_id));
		pb_buffer__varint(&pp->message, MAPPING_HAS_FUNCTIONS, 1);
		if (m->has_lines) {
			pb_buffer__varint(&pp->message, MAPPING_HAS_FILENAMES, 1);
			pb_buffer__varint(&pp->message, MAPPING_HAS_LINE_NUMBERS, 1);
			pb_buffer__varint(&pp->message, MAPPING_HAS_INLINE_FRAMES, 1);
		}
		pb_buffer__message(&pp->profile, PROFILE_MAPPING, &pp->message);
	}
	free(by_id);
}

/* One Line per function of the location, the innermost inlined one first. */
static void write_lines(struct pprof *pp, const struct frame_inline *in, const char *file,
			uint32_t line, uint64_t outer_function)
{
	for (; in; in = in->caller) {
		pb_buffer__reset(&pp->inner);
		pb_buffer__varint(&pp->inner, LINE_FUNCTION_ID,
				  function_id(pp, in->function, NULL, in->file));
		pb_buffer__varint(&pp->inner, LINE_LINE, in->line);
		pb_buffer__message(&pp->message, LOCATION_LINE, &pp->inner);
	}
	pb_buffer__reset(&pp->inner);
	pb_buffer__varint(&pp->inner, LINE_FUNCTION_ID, outer_function);
	if (file)
		pb_buffer__varint(&pp->inner, LINE_LINE, line);
	pb_buffer__message(&pp->message, LOCATION_LINE, &pp->inner);
}

static void write_locations(struct pprof *pp)
{
	void **by_id = ordered_by_id(pp, pp->locations, offsetof(struct location, id));
	size_t i;

	if (!by_id)
		return;
	for (i = 1; i <= hash_table__size(pp->locations); i++) {
		const struct location *loc = by_id[i];

		pb_buffer__reset(&pp->message);
		pb_buffer__varint(&pp->message, LOCATION_ID, loc->id);
		if (loc->mapping_id)
			pb_buffer__varint(&pp->message, LOCATION_MAPPING_ID, loc->mapping_id);
		pb_buffer__varint(&pp->message, LOCATION_ADDRESS, loc->key.address);
		write_lines(pp, loc->key.inlined, loc->key.file, loc->key.line, loc->function_id);
		pb_buffer__message(&pp->profile, PROFILE_LOCATION, &pp->message);
	}
	free(by_id);
}

static void write_functions(struct pprof *pp)
{
	void **by_id = ordered_by_id(pp, pp->functions, offsetof(struct function, id));
	size_t i;

	if (!by_id)
		return;
	for (i = 1; i <= hash_table__size(pp->functions); i++) {
		const struct function *fn = by_id[i];

		pb_buffer__reset(&pp->message);
		pb_buffer__varint(&pp->message, FUNCTION_ID, fn->id);
		pb_buffer__varint(&pp->message, FUNCTION_NAME, string_index(pp, fn->key.name));
		pb_buffer__varint(&pp->message, FUNCTION_SYSTEM_NAME,
				  string_index(pp, fn->key.system_name ?: fn->key.name));
		if (fn->key.file)
			pb_buffer__varint(&pp->message, FUNCTION_FILENAME,
					  string_index(pp, fn->key.file));
		pb_buffer__message(&pp->profile, PROFILE_FUNCTION, &pp->message);
	}
	free(by_id);
}

/*
 * Every nonzero health counter, so a reader of the profile sees what was
 * lost, and what the view left out (go tool pprof -comments shows both).
 */
static void write_comments(struct pprof *pp, const struct profile *p,
			   const struct output_opts *opts)
{
	char text[320], said[256];
	unsigned int i;

	if (output__describe_hidden(p, opts, said, sizeof(said))) {
		snprintf(text, sizeof(text), "offcpu hidden: %s", said);
		pb_buffer__varint(&pp->profile, PROFILE_COMMENT, string_index(pp, text));
	}
	for (i = 0; i < OFFCPU_CNT_MAX; i++) {
		if (!p->counters[i])
			continue;
		snprintf(text, sizeof(text), "offcpu %s=%llu", counters__name(i),
			 (unsigned long long)p->counters[i]);
		pb_buffer__varint(&pp->profile, PROFILE_COMMENT, string_index(pp, text));
	}
}

static int gzip_to(FILE *out, const struct pb_buffer *b)
{
	unsigned char chunk[65536];
	z_stream z = { 0 };
	int ret;

	/* 15 + 16: a gzip header and trailer, which pprof expects. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = b->data;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out);
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

static void free_string_entry(void *value)
{
	struct string_entry *e = value;

	free((char *)e->key);
	free((char *)e->text);
	free(e);
}

static void free_function(void *value)
{
	struct function *fn = value;

	free((char *)fn->key.name);
	free(fn);
}

int output_pprof__write(FILE *out, const struct profile *p, const struct output_opts *opts)
{
	static const char *const period_types[] = {
		[SHAPE_OFF_CPU] = "off_cpu",
		[SHAPE_WALL] = "wall",
		[SHAPE_CPU] = "cpu",
	};
	enum shape shape = shape_of(p, opts);
	struct pprof pp = { 0 };
	size_t i;
	int err = 0;

	pp.strings = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	pp.mappings = hash_table__new(hash_table__hash_string, hash_table__equal_string);
	pp.locations = hash_table__new(hash_location, equal_location);
	pp.functions = hash_table__new(hash_function, equal_function);
	if (!pp.strings || !pp.mappings || !pp.locations || !pp.functions) {
		err = -ENOMEM;
		goto out;
	}
	string_index(&pp, ""); /* index 0 is the empty string */
	value_type(&pp, PROFILE_SAMPLE_TYPE, "samples", "count");
	if (shape != SHAPE_CPU) {
		value_type(&pp, PROFILE_SAMPLE_TYPE, "off_cpu", "nanoseconds");
		value_type(&pp, PROFILE_SAMPLE_TYPE, "runq", "nanoseconds");
	}
	if (shape != SHAPE_OFF_CPU)
		value_type(&pp, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	if (shape == SHAPE_WALL)
		value_type(&pp, PROFILE_SAMPLE_TYPE, "wall", "nanoseconds");
	/* ID 1, the first: the main binary, whether or not a frame is in it. */
	if (p->main_binary && p->main_binary[0] && !mapping_named(&pp, p->main_binary))
		err = pp.err;
	err = err ?: write_samples(&pp, p, shape);
	if (err)
		goto out;
	write_mappings(&pp);
	write_locations(&pp);
	write_functions(&pp);
	write_comments(&pp, p, opts);
	if (p->start_time_ns)
		pb_buffer__varint(&pp.profile, PROFILE_TIME_NANOS, p->start_time_ns);
	pb_buffer__varint(&pp.profile, PROFILE_DURATION_NANOS, p->duration_ns);
	/*
	 * Sampled, the period is a sample's (as Go's CPU profile
	 * has it), and a profile is shown by what -F asked for: where the
	 * time went, on CPU and off, as folded and svg draw it by default.
	 * -sample_index=off_cpu (or cpu) picks one side.
	 */
	value_type(&pp, PROFILE_PERIOD_TYPE, period_types[shape], "nanoseconds");
	pb_buffer__varint(&pp.profile, PROFILE_PERIOD,
			  shape == SHAPE_OFF_CPU ? 1 : p->oncpu.period_ns);
	pb_buffer__varint(&pp.profile, PROFILE_DEFAULT_SAMPLE_TYPE,
			  string_index(&pp, period_types[shape]));
	/* The string table goes last: every index above has been taken by now. */
	for (i = 0; i < pp.nr_strings; i++)
		pb_buffer__string(&pp.profile, PROFILE_STRING_TABLE, pp.string_table[i]);
	err = pp.err ?: pp.profile.err;
	if (!err)
		err = gzip_to(out, &pp.profile);
out:
	hash_table__free_values(pp.strings, free_string_entry);
	hash_table__free_values(pp.mappings, free);
	hash_table__free_values(pp.locations, free);
	hash_table__free_values(pp.functions, free_function);
	free(pp.string_table);
	pb_buffer__free(&pp.profile);
	pb_buffer__free(&pp.message);
	pb_buffer__free(&pp.inner);
	return err;
}
