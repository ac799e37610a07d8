// SPDX-License-Identifier: GPL-2.0
/* The parser of /proc/kallsyms and the lookup in what it read, fed fixtures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "symbols/ksyms.h"

static void kallsyms_lines(void **state)
{
	char name[512], module[64], type;
	uint64_t addr;

	(void)state;
	assert_int_equal(ksyms__parse_line("ffffffff81000000 T _stext\n", &addr, &type, name,
					   sizeof(name), module, sizeof(module)),
			 0);
	assert_true(addr == 0xffffffff81000000ULL);
	assert_int_equal(type, 'T');
	assert_string_equal(name, "_stext");
	assert_string_equal(module, "");
	assert_int_equal(ksyms__parse_line("ffffffffc0a01000 t nfs_lookup\t[nfs]\n", &addr, &type,
					   name, sizeof(name), module, sizeof(module)),
			 0);
	assert_string_equal(name, "nfs_lookup");
	assert_string_equal(module, "nfs");
	assert_int_equal(ksyms__parse_line("ffffffffc0000f18 t bpf_prog_6deef7357e7b4530_sd_fw_"
					   "ingress\t[bpf]\n",
					   &addr, &type, name, sizeof(name), module,
					   sizeof(module)),
			 0);
	assert_string_equal(module, "bpf");
	assert_int_not_equal(
	    ksyms__parse_line("", &addr, &type, name, sizeof(name), module, sizeof(module)), 0);
	assert_int_not_equal(ksyms__parse_line("xyz T foo\n", &addr, &type, name, sizeof(name),
					       module, sizeof(module)),
			     0);
	assert_int_not_equal(ksyms__parse_line("ffffffff81000000 T\n", &addr, &type, name,
					       sizeof(name), module, sizeof(module)),
			     0);
	assert_int_not_equal(ksyms__parse_line("ffffffff81000000 T foo\t[unterminated\n", &addr,
					       &type, name, sizeof(name), module, sizeof(module)),
			     0);
}

static void kallsyms_lookup(void **state)
{
	static const char fixture[] = "ffffffff81000100 T schedule\n"
				      "ffffffff81000000 T __schedule\n"
				      "ffffffff81002000 D some_data\n"
				      "ffffffff81000200 t do_nanosleep\n"
				      "garbage line\n"
				      "ffffffffc0001000 t nfs_wait\t[nfs]\n";
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");
	struct ksyms *ks;
	const struct ksym *s;

	(void)state;
	assert_int_equal(ksyms__load(f, &ks), 0);
	fclose(f);
	s = ksyms__find(ks, 0xffffffff81000050ULL);
	assert_string_equal(s->name, "__schedule");
	s = ksyms__find(ks, 0xffffffff81000100ULL);
	assert_string_equal(s->name, "schedule");
	s = ksyms__find(ks, 0xffffffff81000280ULL);
	assert_string_equal(s->name, "do_nanosleep");
	s = ksyms__find(ks, 0xffffffffc0001010ULL);
	assert_string_equal(s->name, "nfs_wait");
	assert_string_equal(s->module, "nfs");
	assert_null(ksyms__find(ks, 0xffffffff80000000ULL));
	/* Far past the last symbol nothing is known. */
	assert_null(ksyms__find(ks, 0xffffffffffff0000ULL));
	ksyms__free(ks);
}

static void kallsyms_hidden_addresses(void **state)
{
	static const char fixture[] = "0000000000000000 T _stext\n0000000000000000 T schedule\n";
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");
	struct ksyms *ks = NULL;

	(void)state;
	assert_int_equal(ksyms__load(f, &ks), -EPERM);
	assert_null(ks);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms_lines),
		cmocka_unit_test(kallsyms_lookup),
		cmocka_unit_test(kallsyms_hidden_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
