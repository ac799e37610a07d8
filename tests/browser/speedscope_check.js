// SPDX-License-Identifier: GPL-2.0
// Imports offcpu's folded output, unchanged, into speedscope (from the npm
// registry, opened from disk) in Debian's headless Chromium, and prints
// what speedscope made of it as one JSON object for tests/integration.
//
// usage: node speedscope_check.js FILE.folded SCREENSHOT.png
"use strict";
const path = require("path");
const { launch } = require("./launch");

async function main() {
	const [folded, screenshot] = process.argv.slice(2);
	const app = path.join(__dirname, "node_modules", "speedscope", "dist", "release", "index.html");
	const browser = await launch();
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	const seen = { errors: [], dialogs: [] };
	page.on("pageerror", (e) => seen.errors.push(String(e)));
	page.on("dialog", (d) => { seen.dialogs.push(d.message()); d.dismiss(); });
	await page.goto("file://" + app);
	await page.setInputFiles("input[type=file]", path.resolve(folded));
	await page.waitForFunction(() => document.title.endsWith(" - speedscope"), null,
				   { timeout: 30000 });
	seen.title = await page.title();
	await page.screenshot({ path: screenshot });
	// The sandwich view lists every frame name as text, not on a canvas.
	await page.getByText("Sandwich").click();
	await page.waitForTimeout(500);
	seen.sandwich = await page.locator("body").innerText();
	await browser.close();
	process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => {
	process.stderr.write(String(e && e.stack || e) + "\n");
	process.exit(1);
});
