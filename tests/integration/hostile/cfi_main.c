// SPDX-License-Identifier: GPL-2.0
/* main -> lib_loop (cfi_lib.S), which sleeps forever. */
void lib_loop(void);

int main(void)
{
	lib_loop();
	return 0;
}
