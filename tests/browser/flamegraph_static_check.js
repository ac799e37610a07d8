// SPDX-License-Identifier: GPL-2.0
// Opens an offcpu SVG flame graph from disk in Debian's headless Chromium
// twice: with scripts off, as an image viewer or a locked-down browser
// shows it, and with them on. Prints each frame's rectangle, label and
// color both ways, the legend, and where a click on the legend zooms with
// scripts on, as one JSON object for tests/integration to compare:
// output_svg.c alone decides where frames go and how they are colored, so
// the script must draw them the same.
//
// usage: node flamegraph_static_check.js FILE.svg
"use strict";
const path = require("path");
const { launch } = require("./launch");

async function look(browser, url, javaScriptEnabled) {
	const context = await browser.newContext({
		javaScriptEnabled,
		viewport: { width: 1280, height: 900 },
	});
	const page = await context.newPage();
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	await page.goto(url);
	const seen = await page.evaluate(() => ({
		frames: Array.from(document.querySelectorAll("g.f")).map((g) => {
			const r = g.querySelector("rect"), t = g.querySelector("text");
			return {
				name: g.querySelector("title").textContent.split("\n")[0],
				kind: g.getAttribute("data-k"),
				depth: Number(g.getAttribute("data-d")),
				x: Number(r.getAttribute("x")),
				y: Number(r.getAttribute("y")),
				width: Number(r.getAttribute("width")),
				textX: Number(t.getAttribute("x")),
				textY: Number(t.getAttribute("y")),
				label: t.textContent,
				fill: getComputedStyle(r).fill,
			};
		}),
		classes: Array.from(document.querySelectorAll('g.f[data-k="class"][data-d="1"]'))
			.map((g) => g.getAttribute("data-c")),
		legend: Array.from(document.querySelectorAll("#legend .legend-item")).map((g) => ({
			cls: g.getAttribute("data-c"),
			text: g.textContent,
			fill: getComputedStyle(g.querySelector("rect")).fill,
		})),
	}));
	if (javaScriptEnabled) {
		// A legend entry zooms to its class.
		await page.locator("#legend .legend-item").last().click();
		seen.legendZoomed = await page.evaluate(() =>
			document.documentElement.getAttribute("data-zoomed"));
	}
	seen.errors = errors;
	await context.close();
	return seen;
}

async function main() {
	const url = "file://" + path.resolve(process.argv[2]);
	const browser = await launch();
	const seen = {
		noScript: await look(browser, url, false),
		script: await look(browser, url, true),
	};
	await browser.close();
	process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => {
	process.stderr.write(String(e && e.stack || e) + "\n");
	process.exit(1);
});
