// SPDX-License-Identifier: GPL-2.0
// The interactive part of offcpu's SVG flame graph, embedded in every SVG
// it writes (output_svg.c). Each frame is a <g class="f"> whose data-s and
// data-v hold its start and width in nanoseconds, data-d its depth, data-n
// its wait count, data-sn its on-CPU sample count (-F; absent: none),
// data-k its kind and data-c its base wait class ("[on-cpu]"). Colors
// and the legend are in the file already; the geometry to lay frames out
// by is on the <svg> element (data-side, data-frame-height...), so that
// output_svg.c alone decides both.
//
// Why a script of our own rather than a flame-graph library. The kept one
// is d3-flame-graph (pprof and perf's flamegraph.py use it), but Debian 12
// packages no copy that an offline `make` could embed: libjs-d3 is d3
// 3.5.17 while d3-flame-graph 4 and later need d3 6 or later, and the
// libjs-d3-flame-graph package perf asks for does not exist. The one copy
// on a Debian machine is a 71 KB webpack bundle (d3-selection and
// d3-flame-graph 4.1.3) kept as a Go string constant in golang-1.19-src's
// vendored pprof: another project's private file, tied to one Go version.
// flamegraph.pl's script (and inferno) are not packaged at all. Measured
// with that bundle, the same tree (class, class:detail, state, comm,
// frames) as JSON in one SVG, in Debian's headless Chromium 156, from
// navigation start to the second animation frame after load, median and
// fastest of 15 loads on this 2-core VM while it was busy:
//   3 s of this machine, 71 stacks:  ours 111 KB, 92 / 66 ms (362 frames);
//                                    d3   119 KB, 169 / 102 ms
//   10,000 unique stacks:            ours 314 KB, 202 / 133 ms (merged
//                                    into 1,134 frames); d3 4.3 MB (every
//                                    stack as JSON), 542 / 441 ms
// And with d3 the file shows nothing where scripts do not run, its HTML
// tooltip has to be off in an SVG document, and the search box, legend and
// wait-class colors would still be ours to write. The script is 6 KB.
"use strict";
(function () {
	var svg = document.documentElement;
	var box = svg.viewBox.baseVal;
	function geometry(name) { return Number(svg.getAttribute("data-" + name)); }
	var WIDTH = box.width, HEIGHT = box.height;
	var SIDE = geometry("side"), FRAME = geometry("frame-height"), TOP = geometry("top");
	var BOTTOM = geometry("bottom"), CHAR = geometry("char-width");
	var LABEL_DX = geometry("label-dx"), LABEL_DY = geometry("label-dy");
	var total = geometry("total") || 1;
	var frames = [];
	var zoomed, flame = true, searchTerm = null;

	function byId(id) { return document.getElementById(id); }

	function duration(ns) {
		if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
		if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
		return (ns / 1e3).toFixed(3) + " us";
	}

	function percent(part, whole) {
		return (100 * part / (whole || 1)).toFixed(2) + "%";
	}

	function count(n, what) {
		return n + " " + what + (n === 1 ? "" : "s");
	}

	// "1.000 ms off CPU, 2.00% of all, 3 waits", on CPU for samples.
	function describe(f) {
		var side = !f.sn ? " off CPU, " : f.n ? " on and off CPU, " : " on CPU, ";
		var counts = [];
		if (f.n || !f.sn)
			counts.push(count(f.n, "wait"));
		if (f.sn)
			counts.push(count(f.sn, "sample"));
		return duration(f.v) + side + percent(f.v, total) + " of all, " + counts.join(", ");
	}

	function fitText(f, width) {
		var chars = Math.floor((width - 2 * LABEL_DX) / CHAR);
		if (chars < 3) return "";
		if (f.name.length <= chars) return f.name;
		return f.name.substring(0, chars - 2) + "..";
	}

	// The picture is drawn 1200 wide (output_svg.c); scaled whole to the
	// window's width, so a wide window is used to its edges and frames keep
	// the coordinates they have without a script.
	function fitWindow() {
		var width = Math.max(window.innerWidth, 320);
		svg.setAttribute("width", width);
		svg.setAttribute("height", (HEIGHT * width / WIDTH).toFixed(0));
	}

	function layout() {
		var s0 = zoomed.s, v0 = zoomed.v || 1, d0 = zoomed.d;
		var scale = (WIDTH - 2 * SIDE) / v0;
		frames.forEach(function (f) {
			var x, w, y;
			if (f.d >= d0 && f.s >= s0 && f.s + f.v <= s0 + v0) {
				x = SIDE + (f.s - s0) * scale;
				w = f.v * scale;
			} else if (f.d < d0 && f.s <= s0 && f.s + f.v >= s0 + v0) {
				x = SIDE;
				w = WIDTH - 2 * SIDE;
			} else {
				f.g.classList.add("hidden");
				f.visible = false;
				return;
			}
			f.visible = true;
			f.g.classList.remove("hidden");
			y = flame ? HEIGHT - BOTTOM - (f.d + 1) * FRAME : TOP + f.d * FRAME;
			f.rect.setAttribute("x", x.toFixed(2));
			f.rect.setAttribute("y", y);
			f.rect.setAttribute("width", w.toFixed(2));
			f.text.setAttribute("x", (x + LABEL_DX).toFixed(2));
			f.text.setAttribute("y", y + LABEL_DY);
			f.text.textContent = fitText(f, w);
		});
		byId("reset").classList.toggle("hidden", zoomed === frames[0]);
		svg.setAttribute("data-zoomed", zoomed.name);
		if (searchTerm !== null)
			search(searchTerm);
	}

	function zoom(f) {
		zoomed = f;
		layout();
	}

	function search(term) {
		var re, matched = [], end = -1, sum = 0;
		frames.forEach(function (f) { f.g.classList.remove("match"); });
		if (!term) {
			searchTerm = null;
			byId("matched").textContent = "";
			svg.removeAttribute("data-matched");
			return;
		}
		try {
			re = new RegExp(term);
		} catch (e) {
			re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
		}
		searchTerm = term;
		frames.forEach(function (f) {
			if (f.visible && f.d >= zoomed.d && re.test(f.name)) {
				f.g.classList.add("match");
				matched.push(f);
			}
		});
		// Time under a match counts once, however many matches nest in it.
		matched.sort(function (a, b) { return a.s - b.s || a.d - b.d; });
		matched.forEach(function (f) {
			if (f.s >= end) {
				sum += f.v;
				end = f.s + f.v;
			}
		});
		byId("matched").textContent = "Matched: " + percent(sum, zoomed.v) + " of " +
			duration(zoomed.v) + " (" + matched.length + " frames)";
		svg.setAttribute("data-matched", String(matched.length));
		svg.setAttribute("data-matched-ns", String(sum));
	}

	function askSearch() {
		var term = window.prompt("Search frames (regular expression)", searchTerm || "");
		if (term !== null)
			search(term);
	}

	// The legend is drawn by output_svg.c; a click on an entry zooms to its class.
	function legend() {
		Array.prototype.forEach.call(document.querySelectorAll("#legend .legend-item"),
			function (item) {
				var cls = item.getAttribute("data-c");
				var f = frames.find(function (g) {
					return g.kind === "class" && g.d === 1 && g.cls === cls;
				});
				if (f)
					item.addEventListener("click", function () { zoom(f); });
			});
	}

	Array.prototype.forEach.call(document.querySelectorAll("g.f"), function (g) {
		var f = {
			g: g,
			rect: g.querySelector("rect"),
			text: g.querySelector("text"),
			name: g.querySelector("title").textContent.split("\n")[0],
			s: Number(g.getAttribute("data-s")),
			v: Number(g.getAttribute("data-v")),
			n: Number(g.getAttribute("data-n")),
			sn: Number(g.getAttribute("data-sn") || 0),
			d: Number(g.getAttribute("data-d")),
			kind: g.getAttribute("data-k"),
			cls: g.getAttribute("data-c"),
			visible: true
		};
		g.addEventListener("click", function () { zoom(f); });
		g.addEventListener("mouseover", function () {
			byId("details").textContent = f.name + (f.kind === "kernel" ? " (kernel)" : "") +
				": " + describe(f);
		});
		g.addEventListener("mouseout", function () { byId("details").textContent = " "; });
		frames.push(f);
	});
	if (!frames.length)
		return;
	zoomed = frames[0];
	byId("reset").addEventListener("click", function () { zoom(frames[0]); });
	byId("search").addEventListener("click", askSearch);
	byId("orientation").addEventListener("click", function () {
		flame = !flame;
		byId("orientation").textContent = flame ? "Icicle" : "Flame";
		svg.setAttribute("data-orientation", flame ? "flame" : "icicle");
		layout();
	});
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey && e.key === "f") || e.key === "/") {
			e.preventDefault();
			askSearch();
		} else if (e.key === "Escape") {
			search(null);
		}
	});
	legend();
	fitWindow();
	window.addEventListener("resize", fitWindow);
	svg.setAttribute("data-orientation", "flame");
	layout();
})();
