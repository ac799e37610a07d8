// SPDX-License-Identifier: GPL-2.0
// Opens an offcpu SVG flame graph made with -F (on-CPU samples beside the
// waits) in Debian's headless Chromium and prints, as one JSON object for
// tests/integration to check: every frame's name, kind, class, counts and
// drawn color; the legend; the details line when hovering the [on-cpu]
// frame and a wait class; a zoom into [on-cpu] from its legend entry; and
// a search, while zoomed.
//
// usage: node flamegraph_oncpu_check.js FILE.svg SEARCH_TERM SCREENSHOT.png
"use strict";
const path = require("path");
const { launch } = require("./launch");

async function main() {
	const [svgPath, term, screenshot] = process.argv.slice(2);
	const browser = await launch();
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	page.on("dialog", (d) => d.accept(term));
	await page.goto("file://" + path.resolve(svgPath));

	const seen = { errors };
	seen.title = await page.locator("#title").textContent();
	seen.hint = await page.locator("#hint").textContent();
	seen.frames = await page.evaluate(() => Array.from(document.querySelectorAll("g.f")).map((g) => ({
		name: g.querySelector("title").textContent.split("\n")[0],
		tooltip: g.querySelector("title").textContent,
		kind: g.getAttribute("data-k"),
		cls: g.getAttribute("data-c"),
		depth: Number(g.getAttribute("data-d")),
		ns: Number(g.getAttribute("data-v")),
		waits: Number(g.getAttribute("data-n")),
		samples: Number(g.getAttribute("data-sn") || 0),
		fill: getComputedStyle(g.querySelector("rect")).fill,
	})));
	seen.legend = await page.locator("#legend .legend-item").allTextContents();

	const atDepth1 = (name) => page.locator('g.f[data-d="1"]').filter({
		has: page.locator("title", { hasText: new RegExp("^" + name.replace(/[[\]]/g, "\\$&") + "\\n") }),
	}).first();
	await atDepth1("[on-cpu]").hover();
	seen.onCpuDetails = await page.locator("#details").textContent();
	const widestWait = seen.frames.filter((f) => f.depth === 1 && f.cls !== "[on-cpu]")
		.sort((a, b) => b.ns - a.ns)[0];
	await atDepth1(widestWait.name).hover();
	seen.waitDetails = await page.locator("#details").textContent();

	await page.locator('#legend .legend-item[data-c="[on-cpu]"]').click();
	seen.zoomed = await page.evaluate(() => document.documentElement.getAttribute("data-zoomed"));
	seen.zoomedWidth = Number(await atDepth1("[on-cpu]").locator("rect").getAttribute("width"));
	seen.hiddenWhileZoomed = await page.evaluate(() =>
		Array.from(document.querySelectorAll("g.f.hidden"))
			.map((g) => g.getAttribute("data-c")).filter((c) => c === "[on-cpu]").length);
	seen.waitsHiddenWhileZoomed = await page.evaluate(() =>
		Array.from(document.querySelectorAll("g.f.hidden"))
			.filter((g) => g.getAttribute("data-c") !== "[on-cpu]").length);
	await page.locator("#search").click();
	seen.matchedFrames = Number(await page.evaluate(() => document.documentElement.getAttribute("data-matched")));
	seen.matchedNs = Number(await page.evaluate(() => document.documentElement.getAttribute("data-matched-ns")));
	seen.matched = await page.locator("#matched").textContent();
	await page.screenshot({ path: screenshot });

	await browser.close();
	process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => {
	process.stderr.write(String(e && e.stack || e) + "\n");
	process.exit(1);
});
