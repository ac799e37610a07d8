/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every CFI program of a section (.eh_frame, .debug_frame), checked before
 * libdw runs any: libdw's dwarf_cfi_addrframe (0.188) sizes its register
 * array by the highest register a program names and copies it at every
 * DW_CFA_remember_state, so one DW_CFA_undefined of register 25,000,000
 * under 30 remember_states took 6.1 GB and 27.6 s of system CPU.
 */
#ifndef OFFCPU_CFI_CHECK_H
#define OFFCPU_CFI_CHECK_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 0 when every CIE and FDE on the section's chain is within the bounds:
 * registers of x86-64's DWARF set, remember_state nesting, expression and
 * program length, and the whole check's work in proportion to the
 * section's size. -EBADMSG when one is not (or an entry cannot be read).
 */
struct cfi_hdr {
	const uint8_t *bytes; /* .eh_frame_hdr, as libdw reads it (PT_GNU_EH_FRAME) */
	size_t size;
	uint64_t vaddr;	      /* its address */
	uint64_t frame_vaddr; /* .eh_frame's */
};

/*
 * hdr (may be NULL) is the search table libdw uses for .eh_frame: each of
 * its FDE offsets must be one the walk checked, or -EBADMSG. -ENOMEM.
 */
int cfi_check__section(const unsigned char *e_ident, const Elf_Data *data, bool eh_frame,
		       const struct cfi_hdr *hdr);

#endif
