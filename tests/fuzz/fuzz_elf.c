// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: an ELF file as a hostile process could map it: symbols, load
 * segments, unwind tables, then its DWARF lines and inline frames. Under
 * limits low enough for small inputs to reach them (sections, symbols,
 * name length, bytes read).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/debuginfo.h"
#include "symbols/elfsyms.h"

static const struct symbol_limits limits = {
	.max_file_bytes = 1 << 20,
	.max_sections = 64,
	.max_symbols = 256,
	.max_name_len = 64,
	.max_file_spend_bytes = 256 << 10,
	.max_process_spend_bytes = 256 << 10,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inline_pool *inlines = inline_pool__new();
	struct strpool *strings = strpool__new();
	struct read_budget budget = { limits.max_file_spend_bytes, false };
	struct elfsyms_opts opts = { .limits = &limits, .budget = &budget };
	struct source_location where;
	struct debuginfo *di;
	struct elfsyms *es;
	uint64_t vaddr;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0 || !inlines || !strings || write(fd, data, size) != (ssize_t)size)
		goto out;
	if (!elfsyms__open_fd(fd, &opts, &es)) {
		for (vaddr = 0; vaddr < 0x2000; vaddr += 0x100) {
			elfsyms__find(es, vaddr);
			elfsyms__find_function(es, vaddr);
		}
		elfsyms__offset_to_vaddr(es, 0x1000, &vaddr);
		elfsyms__free(es);
	}
	/* Whatever the symbols left of the budget: the DWARF is paid from it too. */
	if (!debuginfo__open_fd(fd, &limits, &budget, &di)) {
		for (vaddr = 0; vaddr < 0x2000; vaddr += 0x100)
			debuginfo__lookup(di, vaddr, strings, inlines, &where);
		debuginfo__free(di);
	}
out:
	if (fd >= 0)
		close(fd);
	inline_pool__free(inlines);
	strpool__free(strings);
	return 0;
}
