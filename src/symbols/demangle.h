/* SPDX-License-Identifier: GPL-2.0 */
/* C++ and Rust symbol names as people read them (libiberty's demangler). */
#ifndef OFFCPU_DEMANGLE_H
#define OFFCPU_DEMANGLE_H

/*
 * A new string with the demangled name of a C++ (_Z) or Rust (_R, or
 * legacy _ZN...17h<hash>E) symbol; NULL when raw is not mangled or does
 * not demangle. The caller frees it.
 */
char *demangle__symbol(const char *raw);

#endif
