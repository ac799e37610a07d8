// SPDX-License-Identifier: GPL-2.0
// Opens an offcpu SVG flame graph from disk in Debian's headless Chromium,
// uses it as a person would (zoom, reset, search, flame/icicle, hover) and
// prints what it saw as one JSON object for tests/integration to check.
//
// usage: node flamegraph_check.js FILE.svg SEARCH_TERM SCREENSHOT.png
"use strict";
const path = require("path");
const { launch } = require("./launch");

async function frameState(page, name) {
	return page.evaluate((wanted) => {
		const frames = Array.from(document.querySelectorAll("g.f"));
		const f = frames.find((g) => g.querySelector("title").textContent.split("\n")[0] === wanted);
		if (!f)
			return null;
		const r = f.querySelector("rect");
		return {
			hidden: f.classList.contains("hidden"),
			x: Number(r.getAttribute("x")),
			y: Number(r.getAttribute("y")),
			width: Number(r.getAttribute("width")),
		};
	}, name);
}

async function main() {
	const [svgPath, term, screenshot] = process.argv.slice(2);
	const browser = await launch();
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
	const errors = [];
	const requests = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
	page.on("dialog", (d) => d.accept(term));
	await page.goto("file://" + path.resolve(svgPath));

	const seen = { errors, requests };
	seen.frames = await page.locator("g.f").count();
	seen.legend = await page.locator("#legend .legend-item").allTextContents();
	seen.root = await frameState(page, "all");
	// Drawn across the window's width; kernel frames outlined apart from user frames.
	seen.drawnWidth = await page.evaluate(() => document.documentElement.getBoundingClientRect().width);
	seen.strokes = await page.evaluate(() => {
		const stroke = (k) => {
			const g = document.querySelector('g.f[data-k="' + k + '"] rect');
			return g ? getComputedStyle(g).stroke : null;
		};
		return { kernel: stroke("kernel"), user: stroke("user") };
	});

	// Zoom into the widest base wait class by clicking it.
	const widest = await page.evaluate(() => {
		const classes = Array.from(document.querySelectorAll('g.f[data-k="class"][data-d="1"]'));
		classes.sort((a, b) => Number(b.getAttribute("data-v")) - Number(a.getAttribute("data-v")));
		return classes[0].querySelector("title").textContent.split("\n")[0];
	});
	seen.clicked = widest;
	await page.locator('g.f[data-k="class"][data-d="1"]', { hasText: "" })
		.filter({ has: page.locator("title", { hasText: new RegExp("^" + widest + "\\n") }) })
		.first().click();
	seen.zoomed = await page.evaluate(() => document.documentElement.getAttribute("data-zoomed"));
	seen.zoomedFrame = await frameState(page, widest);
	seen.resetVisible = await page.locator("#reset").evaluate((e) => !e.classList.contains("hidden"));
	seen.hiddenWhileZoomed = await page.locator("g.f.hidden").count();

	await page.locator("#reset").click();
	seen.afterReset = await page.evaluate(() => document.documentElement.getAttribute("data-zoomed"));
	seen.hiddenAfterReset = await page.locator("g.f.hidden").count();

	await page.locator("#search").click();
	seen.matched = await page.locator("#matched").textContent();
	seen.matchedFrames = Number(await page.evaluate(() => document.documentElement.getAttribute("data-matched")));
	seen.matchedNs = Number(await page.evaluate(() => document.documentElement.getAttribute("data-matched-ns")));
	seen.highlighted = await page.locator("g.f.match").count();

	// Hover the widest leaf-side frame for its details line.
	await page.locator('g.f[data-k="comm"]').first().hover();
	seen.details = await page.locator("#details").textContent();
	seen.tooltip = await page.locator('g.f[data-k="comm"] > title').first().textContent();

	await page.screenshot({ path: screenshot });
	await page.locator("#orientation").click();
	seen.orientation = await page.evaluate(() => document.documentElement.getAttribute("data-orientation"));
	seen.rootIcicle = await frameState(page, "all");
	await page.screenshot({ path: screenshot.replace(/\.png$/, "-icicle.png") });

	await browser.close();
	process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => {
	process.stderr.write(String(e && e.stack || e) + "\n");
	process.exit(1);
});
