// SPDX-License-Identifier: GPL-2.0
/*
 * The SVG flame graph of the fixture profile, of 10,000 stacks, of
 * hostile names, and with on-CPU samples (-F); and as a file: colors,
 * legend and geometry are written by output_svg.c, so the picture holds
 * without its script and the script lays frames out by the same numbers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offcpu.h"
#include "output/output.h"
#include "profile/profile.h"

#include "../profile_fixtures.h"

static void svg_flame_graph(void **state)
{
	struct profile *p = fixture_profile(false);
	char *text = render(output_svg__write, p);

	(void)state;
	assert_true(!strncmp(text, "<?xml", 5));
	assert_non_null(strstr(text, "data-total=\"100000000\""));
	/*
	 * all; sleep, its state and comm, 3 user and 2 kernel frames; lock,
	 * lock:futex, its state and comm, 2 kernel frames.
	 */
	assert_int_equal(count_of(text, "<g class=\"f\" data-"), 15);
	assert_non_null(
	    strstr(text, "data-s=\"0\" data-v=\"100000000\" data-n=\"3\" data-d=\"0\""));
	assert_non_null(
	    strstr(text, "<title>lock:futex\n50.000 ms off CPU, 50.00%, 1 wait</title>"));
	assert_non_null(strstr(text, "data-k=\"kernel\" data-c=\"sleep\"><title>do_nanosleep\n"));
	/* Self-contained: no external reference of any kind. */
	assert_null(strstr(text, "href"));
	assert_int_equal(count_of(text, "http"), 1); /* the SVG namespace */
	assert_non_null(strstr(text, "]]></script>\n</svg>\n"));
	free(text);
	profile__free(p);
}
/* 10,000 distinct stacks: narrow frames merge, and every nanosecond stays in the picture. */
static void svg_many_stacks_stay_readable(void **state)
{
	struct profile *p;
	struct wait w;
	struct frame frames[4];
	char name[32], *text, *root;
	unsigned int i;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	w = a_wait(p, "many", "io");
	w.state = OFFCPU_STATE_UNINTERRUPTIBLE;
	w.pid = w.tid = 7;
	for (i = 0; i < 10000; i++) {
		frames[0] = kframe(p, 0xffffffff81000000ULL + i, "io_schedule");
		snprintf(name, sizeof(name), "handler_%u", i);
		frames[1] = kframe(p, 0xffffffff82000000ULL + i, name);
		frames[2] = kframe(p, 0xffffffff83000000ULL, "vfs_read");
		frames[3] = kframe(p, 0xffffffff84000000ULL, "ksys_read");
		w.kernel_stack = profile__intern_stack(p, frames, 4);
		w.duration_ns = i < 10 ? 1000000000ULL : 1000 + i;
		assert_int_equal(profile__add(p, &w), 0);
	}
	text = render(output_svg__write, p);
	root = strstr(text, "data-d=\"0\"");
	assert_non_null(root);
	assert_non_null(strstr(text, "<title>all\n"));
	/* The ten wide stacks stay; the 9,990 narrow ones become one frame. */
	assert_true(count_of(text, "<g class=\"f\" data-") < 40);
	assert_non_null(strstr(text, "<title>[9990 narrow frames]\n"));
	snprintf(name, sizeof(name), "data-total=\"%llu\"", (unsigned long long)p->total_ns);
	assert_non_null(strstr(text, name));
	free(text);
	profile__free(p);
}
static void hostile_names_in_svg(void **state)
{
	struct profile *p = hostile_profile(false);
	char *text = render(output_svg__write, p);
	size_t len = strlen(text), i;

	(void)state;
	/* XML 1.0's Char: no C0 but tab, LF and CR, no U+FFFE or U+FFFF. */
	assert_true(well_formed_utf8(text, len));
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			fail_msg("C0 byte 0x%02x at %zu", c, i);
	}
	assert_null(strstr(text, "\xef\xbf\xbe"));
	assert_null(strstr(text, "\xef\xbf\xbf"));
	assert_non_null(strstr(text, "<title>\\x1b]0;PWN\\x07\\x1b[2J\n"));
	assert_non_null(strstr(text, "<title>f\\x1b[2J&lt;&amp;&gt;_" REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>lock:x\\x1b[31m;y z\\x0a1 2\\u2029\n"));
	assert_non_null(strstr(text, "<title>" REPLACEMENT REPLACEMENT "\n"));
	assert_non_null(strstr(text, "<title>in\\x9b\\x01_x\n"));
	free(text);
	profile__free(p);
}

static void add_wait(struct profile *p, const char *wait_class, const char *leaf,
		     uint64_t duration_ns)
{
	struct frame f = { 0 };
	struct wait w = { 0 };

	f.addr = 0xffffffff81000000ULL + duration_ns;
	f.sym = strpool__intern(p->strings, leaf);
	f.kernel = true;
	w.pid = w.tid = 9;
	w.comm = strpool__intern(p->strings, "app");
	w.state = OFFCPU_STATE_INTERRUPTIBLE;
	w.wait_class = strpool__intern(p->strings, wait_class);
	w.kernel_stack = profile__intern_stack(p, &f, 1);
	w.duration_ns = duration_ns;
	assert_int_equal(profile__add(p, &w), 0);
}

/* The buffer is the caller's: gcc 12 takes a returned one for a dangling local. */
static void render_idle(const struct profile *p, bool show_idle, char **text, size_t *size)
{
	struct output_opts opts = { .group_by = GROUP_BY_TID, .show_idle = show_idle };
	FILE *out = open_memstream(text, size);

	assert_non_null(out);
	assert_int_equal(output_format__write(output_format__by_name("svg"), out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
}

static void render_svg(const struct profile *p, char **text, size_t *size)
{
	render_idle(p, false, text, size);
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The fill of the frame whose title starts with name. */
static void fill_of(const char *text, const char *name, char *fill, size_t size)
{
	char title[128];
	const char *at;

	snprintf(title, sizeof(title), "<title>%s\n", name);
	at = strstr(text, title);
	assert_non_null(at);
	at = strstr(at, " fill=\"");
	assert_non_null(at);
	at += strlen(" fill=\"");
	snprintf(fill, size, "%.*s", (int)strcspn(at, "\""), at);
}

static void colors_and_legend_in_the_file(void **state)
{
	struct profile *p;
	char *text = NULL, fill[16];
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "sleep", "do_nanosleep", 30000000);
	add_wait(p, "lock:futex", "futex_wait_queue", 10000000);
	render_svg(p, &text, &size);

	/* Every frame has its color: all, 2 classes, lock:futex, 2 states, 2 comms, 2 leaves. */
	assert_int_equal(count_of(text, "<g class=\"f\" "), 10);
	assert_int_equal(count_of(text, "height=\"15\" fill=\"#"), 10);
	fill_of(text, "all", fill, sizeof(fill));
	assert_string_equal(fill, "#c7c7c7"); /* hsl(0,0%,78%) */
	/* A class and its [state] and comm: hsl(HUE,70%,48%), sleep's hue 210, lock's 32. */
	fill_of(text, "sleep", fill, sizeof(fill));
	assert_string_equal(fill, "#257ad0");
	fill_of(text, "lock", fill, sizeof(fill));
	assert_string_equal(fill, "#d08025");
	/* sleep, its state and comm, and its legend entry; lock and lock:futex too. */
	assert_int_equal(count_of(text, "fill=\"#257ad0\""), 4);
	assert_int_equal(count_of(text, "fill=\"#d08025\""), 5);
	/* Frames are paler: kernel frames the palest, at 74-85% lightness. */
	fill_of(text, "do_nanosleep", fill, sizeof(fill));
	assert_true(strcmp(fill, "#257ad0") && fill[0] == '#' && strlen(fill) == 7);

	/* The legend, one entry per base class with its share, colored as the class. */
	assert_int_equal(count_of(text, "<g class=\"button legend-item\""), 2);
	assert_non_null(strstr(text, "<g class=\"button legend-item\" data-c=\"lock\"><rect "));
	assert_non_null(
	    strstr(text, "fill=\"#d08025\"/><text x=\"26\" y=\"40\">lock 25.00%</text>"));
	assert_non_null(strstr(text, "fill=\"#257ad0\"/><text x=\"133.2\" y=\"40\">sleep 75.00%"));
	free(text);
	profile__free(p);
}

/* The script's layout numbers come from the file, and match where frames are drawn. */
static void geometry_for_the_script(void **state)
{
	struct profile *p;
	char *text = NULL;
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "sleep", "do_nanosleep", 30000000);
	render_svg(p, &text, &size);
	/* Depths 0-4 (all, sleep, [state], comm, leaf): 56 + 5 * 16 + 28 high. */
	assert_non_null(strstr(text, " height=\"164\" viewBox=\"0 0 1200 164\" "));
	assert_non_null(strstr(text, " data-side=\"10\" data-top=\"56\" data-bottom=\"28\" "
				     "data-frame-height=\"16\" data-char-width=\"7.2\" "
				     "data-label-dx=\"3\" data-label-dy=\"12\">"));
	/* The root at the bottom: 164 - 28 - 16, its name 3 in and 12 down. */
	assert_non_null(strstr(text, "<rect x=\"10.00\" y=\"120\" width=\"1180.00\" height=\"15\" "
				     "fill=\"#c7c7c7\"/><text x=\"13.00\" y=\"132\">"));
	/* The script keeps no numbers of its own for these. */
	assert_null(strstr(text, "hsl("));
	assert_null(strstr(text, "SIDE = 10"));
	free(text);
	profile__free(p);
}

/* A recording read back may name any class: it stays inside its attribute, and is grey. */
static void classes_from_a_recording_are_escaped(void **state)
{
	struct profile *p;
	char *text = NULL, fill[16];
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "we\"ird<&>", "do_nanosleep", 30000000);
	render_svg(p, &text, &size);
	assert_null(strstr(text, "we\"ird"));
	assert_int_equal(count_of(text, "data-c=\"we&quot;ird&lt;&amp;&gt;\""), 4 + 1);
	fill_of(text, "we&quot;ird&lt;&amp;&gt;", fill, sizeof(fill));
	assert_string_equal(fill, "#c7c7c7");
	free(text);
	profile__free(p);
}

/*
 * Idle kernel threads are left out, as from every view, and a subtitle
 * says how much; -k shows them, at the right edge after the user's own
 * waits however much larger, in their own color.
 */
static void idle_is_left_out_and_said_so(void **state)
{
	struct profile *p;
	char *text = NULL, idle[16], sleep[16];
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "idle", "worker_thread", 9000000);
	add_wait(p, "sleep", "do_nanosleep", 1000000);
	render_svg(p, &text, &size);
	assert_null(strstr(text, "<title>worker_thread\n"));
	assert_null(strstr(text, "data-c=\"idle\""));
	assert_non_null(strstr(text, "<title>do_nanosleep\n"));
	assert_non_null(strstr(text, ">Off-CPU time: 1.000 ms in 1 waits</text>"));
	assert_non_null(strstr(text, "<text id=\"subtitle\" x=\"600\" y=\"36\" "
				     "text-anchor=\"middle\">hidden: 9.000 ms (90.0%) in 1 wait of "
				     "kernel threads idling (wait class idle); -k or -c/-p/-t shows "
				     "them</text>"));
	/* The legend goes a row down, under it. */
	assert_non_null(strstr(text, "<rect x=\"10\" y=\"48\" width=\"12\""));
	free(text);
	text = NULL;
	render_idle(p, true, &text, &size);
	assert_null(strstr(text, "id=\"subtitle\""));
	assert_non_null(strstr(text, "<title>worker_thread\n"));
	assert_true(strstr(text, "<title>sleep\n") < strstr(text, "<title>idle\n"));
	fill_of(text, "idle", idle, sizeof(idle));
	fill_of(text, "sleep", sleep, sizeof(sleep));
	assert_string_not_equal(idle, sleep);
	assert_string_not_equal(idle, "#c7c7c7"); /* the grey of unknown classes */
	free(text);
	profile__free(p);
}

/* The x of an attribute "name=" after at, and where it is. */
static double number_after(const char **at, const char *name)
{
	const char *found = strstr(*at, name);

	assert_non_null(found);
	*at = found + strlen(name);
	return strtod(*at, NULL);
}

/*
 * Every class of the palette in the legend: its entries stay inside the
 * picture, in rows; none runs under the hint, which sits right of the last
 * row or under it; the frames begin below both.
 */
static void legend_rows_clear_of_the_hint(void **state)
{
	/* The palette's classes, then some a recording may name, to fill more than a row. */
	static const char *const classes[] = {
		"cpu",	 "sleep",	 "lock:futex",	     "io:read",		 "net",
		"poll",	 "pipe",	 "child",	     "signal",		 "pagefault",
		"other", "a-class-from-a-recording", "another-class-from-a-recording",
		"yet-another-class-from-a-recording", "one-more-class-from-a-recording",
	};
	double hint_y, hint_right, hint_left, last_right = 0, y, x, top;
	char *text = NULL, caption[64];
	const char *at, *end;
	size_t size, i, rows = 0;

	(void)state;
	for (size_t nr = 1; nr <= ARRAY_LEN(classes); nr++) {
		struct profile *p;
		double row_y = -1;

		assert_int_equal(profile__new(false, &p), 0);
		for (i = 0; i < nr; i++)
			add_wait(p, classes[i], "do_nanosleep", 1000000 * (i + 1));
		render_svg(p, &text, &size);
		at = strstr(text, "<text id=\"hint\" ");
		assert_non_null(at);
		hint_right = number_after(&at, "x=\"");
		hint_y = number_after(&at, "y=\"");
		/* 11px monospace: 0.6 em a character. */
		at = strchr(at, '>') + 1;
		hint_left = hint_right - (double)strcspn(at, "<") * 0.6 * 11;
		at = strstr(text, "<g id=\"legend\">");
		end = strstr(at, "</g>\n");
		rows = 0;
		while ((at = strstr(at, "<g class=\"button legend-item\"")) && at < end) {
			x = number_after(&at, "<text x=\"");
			y = number_after(&at, "y=\"");
			at = strchr(at, '>') + 1;
			snprintf(caption, sizeof(caption), "%.*s", (int)strcspn(at, "<"), at);
			if (y != row_y)
				rows++;
			row_y = y;
			last_right = x + (double)strlen(caption) * 7.2;
			assert_true(x >= 10 && last_right <= 1190);
			/* Above the hint's row, or left of the hint on it. */
			assert_true(y < hint_y || (y == hint_y && last_right < hint_left));
		}
		assert_true(row_y > 0 && hint_y >= row_y && hint_left >= 10);
		at = text;
		top = number_after(&at, "data-top=\"");
		assert_true(top >= hint_y + 4);
		/* The frames' top row, in icicle mode at data-top, is below the header. */
		free(text);
		text = NULL;
		profile__free(p);
	}
	/* All of them do not fit one row. */
	assert_true(rows >= 2);
}

/* Kernel frames are outlined apart from user frames, and the script scales the picture. */
static void kernel_frames_outlined(void **state)
{
	struct profile *p;
	char *text = NULL;
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "sleep", "do_nanosleep", 1000000);
	render_svg(p, &text, &size);
	assert_non_null(strstr(text, ".f[data-k=kernel] rect{stroke:#333;"));
	assert_non_null(strstr(text, "data-k=\"kernel\""));
	assert_non_null(strstr(text, "outlined: kernel"));
	assert_non_null(strstr(text, "window.addEventListener(\"resize\", fitWindow)"));
	free(text);
	profile__free(p);
}

#define PERIOD_NS 10030090ULL /* 1e9 / 997 Hz, rounded down */

/* A sample of comm computing in main, compute and under it the kernel frame kernel (or none). */
static void add_sample(struct profile *p, const char *comm, const char *kernel)
{
	struct frame u[2], k;
	struct wait s = { 0 };

	u[0] = uframe(p, 0x1400, "compute");
	u[1] = uframe(p, 0x1300, "main");
	s.pid = s.tid = 100;
	s.comm = strpool__intern(p->strings, comm);
	s.state = OFFCPU_STATE_RUNNING;
	s.duration_ns = PERIOD_NS;
	s.end_ts_ns = 4000;
	s.user_stack = profile__intern_stack(p, u, 2);
	if (kernel) {
		k = kframe(p, 0xffffffff81000210ULL, kernel);
		s.kernel_stack = profile__intern_stack(p, &k, 1);
	}
	p->oncpu.period_ns = PERIOD_NS;
	assert_int_equal(profile__add_sample(p, &s), 0);
}

/* The fixture's waits (100 ms), and 7 samples of -F 997: 5 in user code, 2 in the kernel. */
static struct profile *sampled_profile(void)
{
	struct profile *p = fixture_profile(false);
	int i;

	for (i = 0; i < 5; i++)
		add_sample(p, "app", NULL);
	for (i = 0; i < 2; i++)
		add_sample(p, "app", "clear_page_erms");
	return p;
}

/* The hue, 0-359 degrees, of "#rrggbb". */
static unsigned int hue_of(const char *fill)
{
	unsigned int rgb, r, g, b, max, min;
	double h;

	assert_int_equal(sscanf(fill, "#%6x", &rgb), 1);
	r = rgb >> 16;
	g = (rgb >> 8) & 0xff;
	b = rgb & 0xff;
	max = r > g ? (r > b ? r : b) : (g > b ? g : b);
	min = r < g ? (r < b ? r : b) : (g < b ? g : b);
	assert_true(max > min); /* not grey */
	if (max == r)
		h = 60.0 * (double)((int)g - (int)b) / (max - min);
	else if (max == g)
		h = 120.0 + 60.0 * (double)((int)b - (int)r) / (max - min);
	else
		h = 240.0 + 60.0 * (double)((int)r - (int)g) / (max - min);
	return (unsigned int)(h < 0 ? h + 360 : h) % 360;
}

static bool warm(const char *fill)
{
	return hue_of(fill) <= 60;
}

static bool cool(const char *fill)
{
	return hue_of(fill) >= 90 && hue_of(fill) <= 300;
}

/*
 * Beside the waits, "[on-cpu]" where they have their class, then the
 * command name and the frames, weighing the samples; the waits' frames
 * weigh what they weigh without samples. The title, the tooltips and the
 * legend say on CPU.
 */
static void svg_with_samples(void **state)
{
	struct profile *p = sampled_profile();
	char *text = render(output_svg__write, p);

	(void)state;
	assert_non_null(strstr(text, "data-total=\"170210630\""));
	assert_non_null(strstr(text, ">On-CPU time: 70.211 ms in 7 samples, off-CPU time: "
				     "100.000 ms in 3 waits</text>"));
	assert_non_null(strstr(text, "data-c=\"\" data-sn=\"7\"><title>all\n170.211 ms on and off "
				     "CPU, 100.00%, 3 waits, 7 samples</title>"));
	/* [on-cpu] first (its name sorts first), app, main, compute, clear_page_erms. */
	assert_non_null(strstr(text, "<g class=\"f\" data-s=\"0\" data-v=\"70210630\" data-n=\"0\" "
				     "data-d=\"1\" data-k=\"class\" data-c=\"[on-cpu]\" "
				     "data-sn=\"7\"><title>[on-cpu]\n70.211 ms on CPU, 41.25%, 7 "
				     "samples</title>"));
	assert_non_null(strstr(text, "data-d=\"2\" data-k=\"comm\" data-c=\"[on-cpu]\" "
				     "data-sn=\"7\"><title>app\n70.211 ms on CPU"));
	assert_non_null(strstr(text,
			       "data-v=\"70210630\" data-n=\"0\" data-d=\"4\" data-k=\"user\" "
			       "data-c=\"[on-cpu]\" data-sn=\"7\"><title>compute\n"));
	assert_non_null(strstr(text,
			       "data-v=\"20060180\" data-n=\"0\" data-d=\"5\" "
			       "data-k=\"kernel\" data-c=\"[on-cpu]\" data-sn=\"2\"><title>"
			       "clear_page_erms\n20.060 ms on CPU, 11.79%, 2 samples</title>"));
	/* The waits' frames, after it: their time, their counts, no samples. */
	assert_non_null(strstr(text, "data-s=\"70210630\" data-v=\"50000000\" data-n=\"1\" "
				     "data-d=\"1\" data-k=\"class\" data-c=\"lock\"><title>lock\n"
				     "50.000 ms off CPU, 29.38%, 1 wait</title>"));
	assert_non_null(strstr(text, "data-v=\"50000000\" data-n=\"2\" data-d=\"8\" "
				     "data-k=\"kernel\" data-c=\"sleep\"><title>do_nanosleep\n"));
	/* all, the fixture's 14 frames of waits, 5 of samples. */
	assert_int_equal(count_of(text, "<g class=\"f\" data-"), 20);
	assert_int_equal(count_of(text, "data-sn=\""), 6);
	assert_non_null(strstr(text, "<g class=\"button legend-item\" data-c=\"[on-cpu]\">"));
	assert_non_null(strstr(text, ">[on-cpu] 41.25%</text>"));
	assert_non_null(strstr(text, "colors: warm on CPU, cool by wait class"));
	free(text);
	profile__free(p);
}

/*
 * On-CPU frames are warm, red to yellow, and the waits' cool beside them,
 * by class still; without samples, the classes keep their colors.
 */
static void svg_samples_warm_and_waits_cool(void **state)
{
	static const char *const on_cpu[] = { "[on-cpu]", "app", "main", "compute",
					      "clear_page_erms" };
	static const char *const waits[] = { "sleep",		"lock",
					     "lock:futex",	"[interruptible]",
					     "clock_nanosleep", "do_nanosleep",
					     "futex_wait_queue" };
	struct profile *p = sampled_profile();
	char *text = render(output_svg__write, p), fill[16], sleep[16], lock[16];
	const char *at;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_LEN(on_cpu); i++) {
		/* The first frame of the name: the on-CPU side's, left of the waits. */
		fill_of(text, on_cpu[i], fill, sizeof(fill));
		if (!warm(fill))
			fail_msg("%s: %s, hue %u", on_cpu[i], fill, hue_of(fill));
	}
	/* The waits' "app" comes after the samples' one. */
	at = strstr(strstr(text, "<title>app\n") + 1, "<title>app\n");
	assert_non_null(at);
	fill_of(at, "app", fill, sizeof(fill));
	assert_true(cool(fill));
	for (i = 0; i < ARRAY_LEN(waits); i++) {
		fill_of(text, waits[i], fill, sizeof(fill));
		if (!cool(fill))
			fail_msg("%s: %s, hue %u", waits[i], fill, hue_of(fill));
	}
	fill_of(text, "sleep", sleep, sizeof(sleep));
	fill_of(text, "lock", lock, sizeof(lock));
	assert_string_not_equal(sleep, lock);
	free(text);
	profile__free(p);

	/* Without samples: lock is its orange hsl(32,70%,48%) still. */
	p = fixture_profile(false);
	text = render(output_svg__write, p);
	fill_of(text, "lock", fill, sizeof(fill));
	assert_string_equal(fill, "#d08025");
	assert_null(strstr(text, "data-sn="));
	free(text);
	profile__free(p);
}

/* --time blocked or runq weigh waits by parts of theirs, which a sample has not. */
static void svg_by_wait_time_has_no_samples(void **state)
{
	struct profile *p = sampled_profile();
	struct output_opts opts = { .group_by = GROUP_BY_TID, .time = OUTPUT_TIME_BLOCKED };
	char *text = NULL, fill[16];
	size_t size;
	FILE *out = open_memstream(&text, &size);

	(void)state;
	assert_int_equal(output_svg__write(out, p, &opts), 0);
	assert_int_equal(fclose(out), 0);
	assert_null(strstr(text, "[on-cpu]"));
	assert_null(strstr(text, "data-sn="));
	assert_non_null(strstr(text, "data-total=\"100000000\""));
	assert_non_null(strstr(text, ">Off-CPU time: 100.000 ms in 3 waits</text>"));
	fill_of(text, "lock", fill, sizeof(fill));
	assert_string_equal(fill, "#d08025");
	free(text);
	profile__free(p);
}

/* A sample is of a thread running: never hidden as idle, whatever its thread. */
static void svg_samples_never_hidden(void **state)
{
	struct profile *p;
	char *text = NULL;
	size_t size;

	(void)state;
	assert_int_equal(profile__new(false, &p), 0);
	add_wait(p, "idle", "worker_thread", 9000000);
	add_sample(p, "kworker/0:1", "process_one_work");
	render_svg(p, &text, &size);
	assert_null(strstr(text, "<title>worker_thread\n"));
	assert_non_null(strstr(text, "<title>kworker/0:1\n10.030 ms on CPU, 100.00%, 1 sample"));
	assert_non_null(strstr(text, "<title>process_one_work\n"));
	assert_non_null(strstr(text, "id=\"subtitle\""));
	free(text);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(svg_flame_graph),
		cmocka_unit_test(svg_many_stacks_stay_readable),
		cmocka_unit_test(hostile_names_in_svg),
		cmocka_unit_test(colors_and_legend_in_the_file),
		cmocka_unit_test(geometry_for_the_script),
		cmocka_unit_test(classes_from_a_recording_are_escaped),
		cmocka_unit_test(idle_is_left_out_and_said_so),
		cmocka_unit_test(legend_rows_clear_of_the_hint),
		cmocka_unit_test(kernel_frames_outlined),
		cmocka_unit_test(svg_with_samples),
		cmocka_unit_test(svg_samples_warm_and_waits_cool),
		cmocka_unit_test(svg_by_wait_time_has_no_samples),
		cmocka_unit_test(svg_samples_never_hidden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
