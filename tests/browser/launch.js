// SPDX-License-Identifier: GPL-2.0
// Debian's Chromium, headless, with nothing that reaches for the network:
// this machine's closed network refuses background connections by the dozen.
"use strict";
const { chromium } = require("playwright-core");

exports.launch = () => chromium.launch({
	executablePath: "/usr/bin/chromium",
	args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	       "--disable-background-networking", "--disable-component-update",
	       "--disable-sync"],
});
