// SPDX-License-Identifier: GPL-2.0
/*
 * cfi_check on a .debug_frame of one CIE and one FDE built here: a usual
 * program passes; a register past the bound, remember_state nested too
 * deep, a long expression, an unknown opcode or an operand cut short fail.
 */
#include <dwarf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "unwind/cfi_check.h"

static unsigned char e_ident[EI_NIDENT] = { 0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, 1 };

struct frame {
	unsigned char bytes[8192];
	size_t size;
};

static void put(struct frame *f, const void *p, size_t n)
{
	memcpy(f->bytes + f->size, p, n);
	f->size += n;
}

static void put32(struct frame *f, uint32_t v)
{
	put(f, &v, 4);
}

/* An entry's length, back-patched once its bytes are in; padded with nops to 8. */
static void end_entry(struct frame *f, size_t at)
{
	uint32_t len;

	while ((f->size - at) % 8)
		f->bytes[f->size++] = DW_CFA_nop;
	len = (uint32_t)(f->size - at - 4);
	memcpy(f->bytes + at, &len, 4);
}

/* CIE v1: code 1, data -8, RA 16, CFA rsp+8, RA at CFA-8; then an FDE running prog. */
static int check(const unsigned char *prog, size_t len)
{
	static const unsigned char cie[] = {
		1, 0, 1, 0x78, 16, DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1
	};
	struct frame f = { .size = 0 };
	uint64_t start = 0x1000, range = 0x100;
	Elf_Data data;
	size_t at;

	at = f.size;
	put32(&f, 0);
	put32(&f, 0xffffffff);
	put(&f, cie, sizeof(cie));
	end_entry(&f, at);
	at = f.size;
	put32(&f, 0);
	put32(&f, 0); /* its CIE's offset */
	put(&f, &start, 8);
	put(&f, &range, 8);
	put(&f, prog, len);
	end_entry(&f, at);
	memset(&data, 0, sizeof(data));
	data.d_buf = f.bytes;
	data.d_size = f.size;
	data.d_type = ELF_T_BYTE;
	return cfi_check__section(e_ident, &data, false, NULL);
}

static void usual_program_passes(void **state)
{
	static const unsigned char prog[] = { DW_CFA_advance_loc | 1,
					      DW_CFA_def_cfa_offset,
					      16,
					      DW_CFA_offset | 6,
					      2,
					      DW_CFA_remember_state,
					      DW_CFA_restore_state,
					      DW_CFA_def_cfa_expression,
					      2,
					      DW_OP_breg7,
					      8 };
	(void)state;
	assert_int_equal(check(prog, sizeof(prog)), 0);
}

static void huge_register_fails(void **state)
{
	static const unsigned char prog[] = { DW_CFA_undefined, 0xc0, 0xf0, 0xf5, 0x0b };
	static const unsigned char ok[] = { DW_CFA_undefined, 125 };
	(void)state;
	assert_int_equal(check(prog, sizeof(prog)), -EBADMSG);
	assert_int_equal(check(ok, sizeof(ok)), 0);
}

static void deep_nesting_fails(void **state)
{
	unsigned char prog[100];

	(void)state;
	memset(prog, DW_CFA_remember_state, sizeof(prog));
	assert_int_equal(check(prog, 64), 0);
	assert_int_equal(check(prog, 65), -EBADMSG);
}

static void long_expression_fails(void **state)
{
	unsigned char prog[3 + 600];

	(void)state;
	memset(prog, DW_OP_lit0, sizeof(prog));
	prog[0] = DW_CFA_def_cfa_expression;
	prog[1] = 0x80 | (600 & 0x7f);
	prog[2] = 600 >> 7;
	assert_int_equal(check(prog, sizeof(prog)), -EBADMSG);
}

static void unknown_or_cut_operand_fails(void **state)
{
	static const unsigned char unknown[] = { 0x3f };
	static const unsigned char cut[] = { DW_CFA_def_cfa_expression, 100, DW_OP_lit0 };
	(void)state;
	assert_int_equal(check(unknown, sizeof(unknown)), -EBADMSG);
	assert_int_equal(check(cut, sizeof(cut)), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usual_program_passes),
		cmocka_unit_test(huge_register_fails),
		cmocka_unit_test(deep_nesting_fails),
		cmocka_unit_test(long_expression_fails),
		cmocka_unit_test(unknown_or_cut_operand_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
