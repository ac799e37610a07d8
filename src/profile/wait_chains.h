/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait chain: what the thread holding a lock did while another waited
 * on it. Each thread's last waits are kept, their span and what they were
 * ("asleep in sleep at sleep_ms <- take_turns"); a wait on an object with
 * a holder adds up the parts of the holder's own waits inside its span, by
 * what they were. Those have ended by the time the waiter's arrives: the
 * holder ran to let the lock go before the waiter could wake.
 */
#ifndef OFFCPU_WAIT_CHAINS_H
#define OFFCPU_WAIT_CHAINS_H

#include <stdint.h>

#include "lib/strpool.h"
#include "profile/profile.h"

#define WAIT_CHAIN_PARTS 4

struct wait_chain_part {
	const char *what; /* interned */
	uint64_t ns;
};

/* The waits on one object (with its one holder), and what the holder did meanwhile. */
struct wait_chain {
	uint64_t waited_ns; /* their whole durations */
	uint64_t count;
	struct wait_chain_part parts[WAIT_CHAIN_PARTS]; /* in the order first seen */
	uint64_t other_ns; /* off CPU in more kinds of wait than parts holds */
};

struct wait_chains;

int wait_chains__new(struct strpool *strings, struct wait_chains **out);
void wait_chains__free(struct wait_chains *c);
/* w into its thread's last waits, and, if it waited on a holder's lock, into that lock's chain. */
int wait_chains__add(struct wait_chains *c, const struct wait *w);
/* The chain of the waits on o; NULL when none had a holder. */
const struct wait_chain *wait_chains__find(const struct wait_chains *c,
					   const struct wait_object *o);
/* ns more of what, in chain's parts while one is free, else in other_ns. */
void wait_chain__add_part(struct wait_chain *chain, const char *what, uint64_t ns);
void wait_chains__mark_strings(const struct wait_chains *c, struct strpool *strings);

#endif
