// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

/*
 * Code mapped long after exec, then gone at once after its wait. A first
 * wait before: the reader is woken at once by a process's first wait only.
 */
int main(int argc, char **argv)
{
	struct timespec nap = { 0, 2 * 1000 * 1000 };
	void *lib;
	int (*wait)(void);

	nanosleep(&nap, NULL);
	lib = dlopen(argv[1], RTLD_NOW);
	wait = lib ? (int (*)(void))dlsym(lib, "latelib_wait") : NULL;
	if (!wait)
		return 1;
	_Exit(wait() - 1);
}
