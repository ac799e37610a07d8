/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lib_loop sleeps 1 ms at a time forever, under CFI chosen by a macro
 * (tests/integration/test_hostile_cfi.py): none (BENIGN), an undefined
 * register 25,000,000 under 30 remember_states (HUGE_REG), 400
 * remember/restore pairs (FLOOD), a 16 KB def_cfa_expression (LONG_EXPR).
 * DEBUG_FRAME puts the CFI in .debug_frame alone.
 */
#ifdef DEBUG_FRAME
	.cfi_sections .debug_frame
#endif
	.text
	.globl lib_loop
	.type lib_loop,@function
lib_loop:
	.cfi_startproc
	pushq %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
#if defined(HUGE_REG)
	.cfi_escape 0x07, 0xc0, 0xf0, 0xf5, 0x0b
	.rept 30
	.cfi_escape 0x0a
	.endr
#elif defined(FLOOD)
	.rept 400
	.cfi_escape 0x0a
	.cfi_escape 0x0b
	.endr
	.cfi_escape 0x07, 0xc0, 0xf0, 0xf5, 0x0b
#elif defined(LONG_EXPR)
	/* DW_CFA_def_cfa_expression, len = 2 + 16000: breg7 24, (lit0 plus) x 8000 */
	.cfi_escape 0x0f, 0x82, 0x7d, 0x77, 0x18
	.rept 8000
	.cfi_escape 0x30, 0x22
	.endr
#endif
	subq $16, %rsp
#if !defined(LONG_EXPR)
	.cfi_def_cfa_offset 32
#endif
1:	movq $0, (%rsp)
	movq $1000000, 8(%rsp)
	movq %rsp, %rdi
	xorl %esi, %esi
	call nanosleep@PLT
	jmp 1b
	.cfi_endproc
	.size lib_loop, .-lib_loop
	.section .note.GNU-stack,"",@progbits
