/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SYMLIB_H
#define SYMLIB_H

void symlib_wait(int ms);

#endif
