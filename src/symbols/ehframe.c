// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/ehframe.h"
#include "symbols/elf_section.h"

/* DWARF pointer encodings (LSB Core, "DWARF Extensions"). */
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

static int32_t read_s32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t read_uleb(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/*
 * The pc_begin/pc_range encoding of the CIE at offset cie in .eh_frame:
 * the 'R' augmentation. -1 for anything but the 4-byte encodings GCC and
 * clang emit, which the caller then skips rather than guesses.
 */
static int fde_encoding(const unsigned char *frame, size_t size, size_t cie)
{
	const unsigned char *p, *end;
	const char *aug;
	uint32_t len;

	/* cie comes from the file: checked before it makes a pointer (fuzz_elf). */
	if (cie > size || size - cie < 9)
		return -1;
	p = frame + cie;
	memcpy(&len, p, 4);
	if (len == 0xffffffffU || cie + 4 + len > size || read_s32(p + 4) != 0)
		return -1;
	end = p + 4 + len;
	p += 9; /* length, CIE id, version */
	aug = (const char *)p;
	while (p < end && *p)
		p++;
	if (p++ >= end || aug[0] != 'z')
		return -1;
	read_uleb(&p, end); /* code alignment */
	read_uleb(&p, end); /* data alignment (sleb: only skipped) */
	read_uleb(&p, end); /* return address register */
	read_uleb(&p, end); /* augmentation data length */
	for (aug++; *aug && p < end; aug++) {
		if (*aug == 'R')
			return (*p & 0x0f) == DW_EH_PE_sdata4 || (*p & 0x0f) == DW_EH_PE_udata4
				   ? *p
				   : -1;
		if (*aug == 'L')
			p++;
		else if (*aug == 'P')
			return -1; /* a personality pointer before R: not worth decoding */
	}
	return -1;
}

int ehframe__read_functions(struct elf_file *file, struct elf_symbol **out, size_t *nr)
{
	uint64_t hdr_addr = 0, frame_addr = 0;
	Elf_Data *hdr = elf_section__by_name(file, ".eh_frame_hdr", &hdr_addr);
	Elf_Data *frame = elf_section__by_name(file, ".eh_frame", &frame_addr);
	struct elf_symbol *functions;
	const unsigned char *h, *f;
	uint32_t count, i;
	size_t kept = 0;

	*out = NULL;
	*nr = 0;
	if (!hdr || !frame || !hdr->d_buf || !frame->d_buf || hdr->d_size < 12)
		return 0;
	h = hdr->d_buf;
	f = frame->d_buf;
	/* The table's encoding as GNU ld writes it: datarel|sdata4. */
	if (h[0] != 1 || h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return 0;
	memcpy(&count, h + 8, 4);
	if (12 + (uint64_t)count * 8 > hdr->d_size ||
	    read_budget__charge(file->budget, (uint64_t)count * sizeof(*functions)))
		return 0;
	functions = calloc(count ? count : 1, sizeof(*functions));
	if (!functions)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		uint64_t start = hdr_addr + read_s32(h + 12 + 8 * i);
		uint64_t fde = hdr_addr + read_s32(h + 16 + 8 * i) - frame_addr;
		uint32_t len;
		int enc;

		/* Offsets from the file wrap around: compare without adding (fuzz_elf). */
		if (fde > frame->d_size || frame->d_size - fde < 16)
			continue;
		memcpy(&len, f + fde, 4);
		if (len == 0xffffffffU || len < 12)
			continue;
		enc = fde_encoding(f, frame->d_size, fde + 4 - read_s32(f + fde + 4));
		if (enc < 0)
			continue;
		functions[kept++] = (struct elf_symbol){
			.start = start,
			.size = (uint32_t)read_s32(f + fde + 12),
			.name = NULL,
		};
	}
	*out = functions;
	*nr = kept;
	return 0;
}
