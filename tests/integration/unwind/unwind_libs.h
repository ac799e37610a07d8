/* SPDX-License-Identifier: GPL-2.0 */
/* The test libraries whose only unwind information is frame pointers, or .debug_frame. */
#ifndef UNWIND_LIBS_H
#define UNWIND_LIBS_H

int nocfi_sleep(int ms);
int debugframe_sleep(int ms);

#endif
