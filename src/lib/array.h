/* SPDX-License-Identifier: GPL-2.0 */
/* The number of elements of an array; given a pointer, gcc warns (-Wsizeof-pointer-div). */
#ifndef OFFCPU_ARRAY_H
#define OFFCPU_ARRAY_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
