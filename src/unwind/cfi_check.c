// SPDX-License-Identifier: GPL-2.0
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_check.h"

/*
 * The psABI's DWARF numbers end at 125 (k7, figure 3.36); libdw's array
 * for 128 registers is 2 KiB, copied at each remember_state.
 */
#define MAX_REG 127
/* GCC nests remember_state once per epilogue; libc's deepest is 1. */
#define MAX_NESTING 64
/* libc's longest CFI expression is 11 bytes (its PLT's CFA), a signal frame's 5. */
#define MAX_EXPR_BYTES 512
/* libc's longest FDE program is a few hundred bytes; 64 KiB of remember_states is 64 MB of copies.
 */
#define MAX_PROGRAM_BYTES (64u << 10)
/* CIEs checked once each, by offset: real files have a handful. */
#define CIE_CACHE 16

struct reader {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t uleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (r->p < r->end && shift < 64) {
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	r->bad = true;
	return 0;
}

static void skip(struct reader *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		r->p = r->end;
		return;
	}
	r->p += n;
}

static void reg(struct reader *r)
{
	if (uleb(r) > MAX_REG)
		r->bad = true;
}

/* Bytes of a pointer so encoded; -1 for one this check does not follow. */
static int encoded_size(uint8_t enc, int address_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return address_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return 0;
	}
	return -1;
}

static void skip_encoded(struct reader *r, uint8_t enc, int address_size)
{
	int size = encoded_size(enc, address_size);

	if (size < 0 || (enc & 0x70) == DW_EH_PE_aligned)
		r->bad = true;
	else if (size)
		skip(r, (uint64_t)size);
	else
		uleb(r); /* an sleb128 is as long */
}

/* One program: every operand read, every register and block length bounded. */
static int check_program(const uint8_t *start, const uint8_t *end, uint8_t enc, int address_size)
{
	struct reader r = { start, end, false };
	unsigned int depth = 0;

	if ((size_t)(end - start) > MAX_PROGRAM_BYTES)
		return -EBADMSG;
	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++;
		uint64_t len;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			continue;
		case DW_CFA_offset:
			uleb(&r);
			continue;
		case DW_CFA_restore:
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			skip_encoded(&r, enc, address_size);
			break;
		case DW_CFA_advance_loc1:
			skip(&r, 1);
			break;
		case DW_CFA_advance_loc2:
			skip(&r, 2);
			break;
		case DW_CFA_advance_loc4:
			skip(&r, 4);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			reg(&r);
			uleb(&r);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			reg(&r);
			break;
		case DW_CFA_register:
			reg(&r);
			reg(&r);
			break;
		case DW_CFA_remember_state:
			if (++depth > MAX_NESTING)
				return -EBADMSG;
			break;
		case DW_CFA_restore_state:
			depth -= depth > 0;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			uleb(&r);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			reg(&r);
			/* fall through */
		case DW_CFA_def_cfa_expression:
			len = uleb(&r);
			if (len > MAX_EXPR_BYTES)
				return -EBADMSG;
			skip(&r, len);
			break;
		default:
			return -EBADMSG;
		}
	}
	return r.bad ? -EBADMSG : 0;
}

struct cie_verdict {
	Dwarf_Off offset;
	uint8_t enc; /* the FDEs' pointer encoding */
	bool z;	     /* their augmentation data is self-sized */
	size_t fde_aug_size;
	int err;
};

/* The CIE's FDE pointer encoding (its 'R'), then its own program checked. */
static int check_cie(const Dwarf_CIE *cie, int address_size, struct cie_verdict *v)
{
	struct reader r = { cie->augmentation_data,
			    cie->augmentation_data + cie->augmentation_data_size, false };
	const char *aug = cie->augmentation;

	bool known = true;

	v->enc = DW_EH_PE_absptr;
	v->z = aug[0] == 'z';
	v->fde_aug_size = cie->fde_augmentation_data_size;
	if (cie->return_address_register > MAX_REG)
		return -EBADMSG;
	for (aug += v->z; v->z && known && *aug && !r.bad; aug++) {
		switch (*aug) {
		case 'R':
			if (r.p >= r.end)
				return -EBADMSG;
			v->enc = *r.p++;
			break;
		case 'L':
			skip(&r, 1);
			break;
		case 'P':
			if (r.p >= r.end)
				return -EBADMSG;
			skip_encoded(&r, *r.p++, address_size);
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* libdw stops understanding here too: the 'z' length still holds. */
			known = false;
			break;
		}
	}
	if (r.bad || encoded_size(v->enc, address_size) < 0)
		return -EBADMSG;
	return check_program(cie->initial_instructions, cie->initial_instructions_end, v->enc,
			     address_size);
}

static int check_fde(const Dwarf_FDE *fde, const struct cie_verdict *v, int address_size)
{
	struct reader r = { fde->start, fde->end, false };

	skip_encoded(&r, v->enc, address_size);
	skip_encoded(&r, v->enc & 0x0f, address_size);
	if (v->z)
		skip(&r, uleb(&r));
	else
		skip(&r, v->fde_aug_size);
	if (r.bad)
		return -EBADMSG;
	return check_program(r.p, r.end, v->enc, address_size);
}

static bool on_chain(const Dwarf_Off *fdes, size_t nr, Dwarf_Off offset)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fdes[mid] == offset)
			return true;
		if (fdes[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int32_t sdata4(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v)); /* x86-64: little endian */
	return v;
}

/*
 * libdw looks an address up in the binary search table where there is one
 * (cfi.c's binary_search_fde) and reads the FDE at the offset it gives,
 * wherever that is: every offset must be an FDE the walk checked. GNU ld
 * writes the table as datarel sdata4 pairs after an eh_frame_ptr in pcrel
 * sdata4 and a udata4 count; anything else is not followed.
 */
static int check_hdr(const struct cfi_hdr *hdr, const Dwarf_Off *fdes, size_t nr)
{
	const uint8_t *p = hdr->bytes;
	uint64_t count, i;

	if (hdr->size < 4 || p[0] != 1)
		return -EBADMSG;
	/* Without a table libdw walks what follows .eh_frame in its segment too. */
	if (p[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || p[2] != DW_EH_PE_udata4 ||
	    p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || hdr->size < 12)
		return -EBADMSG;
	if (hdr->vaddr + 4 + (uint64_t)(int64_t)sdata4(p + 4) != hdr->frame_vaddr)
		return -EBADMSG;
	count = (uint32_t)sdata4(p + 8);
	if (count > (hdr->size - 12) / 8)
		return -EBADMSG;
	for (i = 0; i < count; i++) {
		uint64_t fde = hdr->vaddr + (uint64_t)(int64_t)sdata4(p + 12 + 8 * i + 4);

		if (!on_chain(fdes, nr, fde - hdr->frame_vaddr))
			return -EBADMSG;
	}
	return 0;
}

static int walk(const unsigned char *e_ident, const Elf_Data *data, bool eh_frame, Dwarf_Off *fdes,
		size_t *nr_fdes)
{
	struct cie_verdict cies[CIE_CACHE];
	size_t nr_cies = 0, next_cie = 0, i;
	int address_size = e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	/* Each CIE is read again for each FDE that misses the cache: bounded all told. */
	uint64_t work_left = 2 * (uint64_t)data->d_size + (1u << 20);
	Dwarf_Off offset = 0, next;
	Elf_Data *d = (Elf_Data *)data; /* dwarf_next_cfi only reads it */

	for (;;) {
		Dwarf_CFI_Entry entry, cie_entry;
		struct cie_verdict *v = NULL;
		Dwarf_Off cie_next, at = offset;
		int rc = dwarf_next_cfi(e_ident, d, eh_frame, offset, &next, &entry);

		if (rc > 0)
			return 0;
		if (rc < 0 || next <= offset)
			return -EBADMSG;
		if (next - offset > work_left)
			return -EBADMSG;
		work_left -= next - offset;
		offset = next;
		if (dwarf_cfi_cie_p(&entry))
			continue; /* checked through the FDEs that use it */
		for (i = 0; i < nr_cies; i++)
			if (cies[i].offset == entry.fde.CIE_pointer)
				v = &cies[i];
		if (!v) {
			if (dwarf_next_cfi(e_ident, d, eh_frame, entry.fde.CIE_pointer, &cie_next,
					   &cie_entry) ||
			    !dwarf_cfi_cie_p(&cie_entry) || cie_next <= entry.fde.CIE_pointer ||
			    cie_next - entry.fde.CIE_pointer > work_left)
				return -EBADMSG;
			work_left -= cie_next - entry.fde.CIE_pointer;
			v = &cies[next_cie];
			next_cie = (next_cie + 1) % CIE_CACHE;
			nr_cies += nr_cies < CIE_CACHE;
			v->offset = entry.fde.CIE_pointer;
			v->err = check_cie(&cie_entry.cie, address_size, v);
		}
		if (v->err || check_fde(&entry.fde, v, address_size))
			return -EBADMSG;
		/* An entry is at least 8 bytes: the array holds them all. */
		if (fdes)
			fdes[(*nr_fdes)++] = at;
	}
}

int cfi_check__section(const unsigned char *e_ident, const Elf_Data *data, bool eh_frame,
		       const struct cfi_hdr *hdr)
{
	Dwarf_Off *fdes = NULL;
	size_t nr = 0;
	int err;

	if (hdr) {
		fdes = malloc((data->d_size / 8 + 1) * sizeof(*fdes));
		if (!fdes)
			return -ENOMEM;
	}
	err = walk(e_ident, data, eh_frame, fdes, &nr);
	if (!err && hdr)
		err = check_hdr(hdr, fdes, nr);
	free(fdes);
	return err;
}
