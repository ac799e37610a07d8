/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a wait waited on, named from what its switch-out took (struct
 * offcpu_object): a user-space lock with its holder, a kernel lock with
 * its holder, a sleep's requested time, the child a wait4 waits for, the
 * pipe, socket or file a call on one fd waited on (file_object.h). The
 * front door of src/objects/.
 */
#ifndef OFFCPU_OBJECTS_H
#define OFFCPU_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include "offcpu.h"
#include "profile/profile.h"
#include "symbols/limits.h"

#define OBJECT_NAME_LEN 160

struct object_name {
	const char *kind; /* "mutex", "timer", "child"...: a constant string */
	char name[OBJECT_NAME_LEN];
	uint64_t addr;	     /* the lock's address; 0: the object has none */
	uint32_t holder_pid; /* 0: no holder known */
	uint32_t holder_tid;
	char holder_comm[OFFCPU_COMM_LEN + 1]; /* "" when it could not be read */
	/* Something the name or holder needed could not be read: counted as object_failures. */
	bool failed;
};

struct objects;

int objects__new(const struct symbol_limits *limits, struct objects **out);
/*
 * Names o, taken from a wait of pid, whose user stack (NULL: none) tells
 * a lock's kind and whose kernel stack (NULL: none) which function took a
 * kernel lock; false when o names nothing (not taken, or a call it has
 * nothing to say of).
 */
bool objects__name(struct objects *objs, uint32_t pid, const struct offcpu_object *o,
		   const struct stack *user_stack, const struct stack *kernel_stack,
		   struct object_name *out);
/* pid is gone or replaced its image. */
void objects__forget(struct objects *objs, uint32_t pid);
void objects__free(struct objects *objs);

#endif
