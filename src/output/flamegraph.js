// SPDX-License-Identifier: GPL-2.0
// The interactive part of offcpu's SVG flame graph, embedded in every SVG
// it writes (output_svg.c). Each frame is a <g class="f"> whose data-s and
// data-v hold its start and width in nanoseconds, data-d its depth, data-n
// its wait count, data-k its kind and data-c its base wait class.
"use strict";
(function () {
	var svg = document.documentElement;
	var box = svg.viewBox.baseVal;
	var WIDTH = box.width, HEIGHT = box.height;
	var SIDE = 10, FRAME = 16, TOP = 56, BOTTOM = 28, CHAR = 7.2;
	var total = Number(svg.getAttribute("data-total")) || 1;
	var hues = {
		cpu: 0, sleep: 210, lock: 32, io: 275, net: 125, poll: 185,
		pipe: 55, child: 330, signal: 300, pagefault: 15, other: 0
	};
	var frames = [];
	var zoomed, flame = true, searchTerm = null;

	function byId(id) { return document.getElementById(id); }

	function hash(text) {
		var h = 0, i;
		for (i = 0; i < text.length; i++)
			h = (h * 31 + text.charCodeAt(i)) >>> 0;
		return h;
	}

	function color(f) {
		var hue = hues[f.cls], light;
		if (f.kind === "root" || hue === undefined)
			return "hsl(0,0%,78%)";
		var sat = f.cls === "other" ? 0 : 70;
		if (f.kind === "class" || f.kind === "state" || f.kind === "comm")
			light = 48;
		else if (f.kind === "kernel")
			light = 74 + hash(f.name) % 12;
		else
			light = 58 + hash(f.name) % 14;
		return "hsl(" + hue + "," + sat + "%," + light + "%)";
	}

	function duration(ns) {
		if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
		if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
		return (ns / 1e3).toFixed(3) + " us";
	}

	function percent(part, whole) {
		return (100 * part / (whole || 1)).toFixed(2) + "%";
	}

	function fitText(f, width) {
		var chars = Math.floor((width - 6) / CHAR);
		if (chars < 3) return "";
		if (f.name.length <= chars) return f.name;
		return f.name.substring(0, chars - 2) + "..";
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
			f.text.setAttribute("x", (x + 3).toFixed(2));
			f.text.setAttribute("y", y + FRAME - 4);
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

	function legend() {
		var g = byId("legend"), x = SIDE, seen = {};
		frames.forEach(function (f) {
			if (f.kind !== "class" || f.d !== 1 || seen[f.cls]) return;
			seen[f.cls] = true;
			var item = document.createElementNS(svg.namespaceURI, "g");
			var swatch = document.createElementNS(svg.namespaceURI, "rect");
			var label = document.createElementNS(svg.namespaceURI, "text");
			var caption = f.cls + " " + percent(f.v, total);
			swatch.setAttribute("x", x);
			swatch.setAttribute("y", 30);
			swatch.setAttribute("width", 12);
			swatch.setAttribute("height", 12);
			swatch.setAttribute("fill", color({ kind: "class", cls: f.cls, name: "" }));
			label.setAttribute("x", x + 16);
			label.setAttribute("y", 40);
			label.textContent = caption;
			item.setAttribute("class", "button legend-item");
			item.appendChild(swatch);
			item.appendChild(label);
			item.addEventListener("click", function () { zoom(f); });
			g.appendChild(item);
			x += 28 + caption.length * CHAR;
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
			d: Number(g.getAttribute("data-d")),
			kind: g.getAttribute("data-k"),
			cls: g.getAttribute("data-c"),
			visible: true
		};
		f.rect.setAttribute("fill", color(f));
		g.addEventListener("click", function () { zoom(f); });
		g.addEventListener("mouseover", function () {
			byId("details").textContent = f.name + ": " + duration(f.v) + " off CPU, " +
				percent(f.v, total) + " of all, " + f.n + (f.n === 1 ? " wait" : " waits");
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
	svg.setAttribute("data-orientation", "flame");
	layout();
})();
