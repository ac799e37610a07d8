/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function ranges from an ELF file's unwind tables: .eh_frame_hdr's sorted
 * table of function starts, and each one's FDE in .eh_frame for its size.
 * They group the frames of one function that no symbol names (a stripped
 * binary). Only the encodings GNU ld and the compilers write are read;
 * anything else is skipped, not guessed.
 */
#ifndef OFFCPU_EHFRAME_H
#define OFFCPU_EHFRAME_H

#include <stddef.h>

#include "symbols/elf_file.h"
#include "symbols/elf_symbol.h"

/*
 * The functions, unnamed and sorted by start: *nr of them in *out, which
 * the caller frees. A file without a table it can read (or pay for) has
 * none (NULL and 0), which is no error: -ENOMEM is the only one.
 */
int ehframe__read_functions(struct elf_file *file, struct elf_symbol **out, size_t *nr);

#endif
