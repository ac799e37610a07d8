#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The documentation against the program it documents.

The options live in three places: the parser's table (src/cli/options.c),
each command's --help, and the man pages, one per command (offcpu.1 for
recording, offcpu-NAME.1 for each subcommand). Which options a command
takes is asked of the binary itself: each option is given to each command
with a valid value and a stray argument, and the error says whether the
option was refused or the parse went past it. Every option a command takes
must be in its --help and its page's OPTIONS, and every option there must
be one it takes; the help's usage line is the page's SYNOPSIS.
Each page must render without a warning, and README.md stay a front door:
at most 12,500 bytes, its links to files and anchors that exist.

Run as root from the repository root after `make`; prints one line per
check and ends with "N passed, N failed".
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as t  # noqa: E402

ROOT = t.ROOT
OFFCPU = t.OFFCPU
README = os.path.join(ROOT, "README.md")
README_MAX_BYTES = 12500

# A value each option's parser accepts, so that only the command decides.
VALUES = {
    "pid": "1", "tid": "1", "comm": "sh", "cgroup": "/sys/fs/cgroup",
    "min-duration": "1ms", "max-duration": "1s", "sample-rate": "2", "short": "sample",
    "state": "interruptible", "duration": "1s", "format": "text",
    "output": "/nonexistent-dir/offcpu-docs-test.txt", "max-entries": "16",
    "stack-depth": "8", "call-graph": "fp", "rules": "postgres", "group-by": "tid",
    "top": "3", "listen": "127.0.0.1:9466", "time": "off-cpu", "from": "1", "to": "2",
    "freq": "99",
}


def run(argv, **kw):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=30, **kw)


def source(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def parser_table():
    """{long option: takes a value} from options.c's getopt_long table."""
    text = source("src/cli/options.c")
    table = text.split("long_options[] = {", 1)[1].split("};", 1)[0]
    opts = dict((name, arg == "required_argument") for name, arg in
                re.findall(r'\{\s*"([a-z-]+)",\s*(required_argument|no_argument)', table))
    assert len(opts) >= 30, opts
    return opts


def subcommands():
    """The names in main.c's subcommand table."""
    table = source("src/cli/main.c").split("subcommands[] = {", 1)[1].split("};", 1)[0]
    names = re.findall(r'\{\s*"([a-z]+)",', table)
    assert names, table
    return names


def commands():
    """(argv prefix, man page) of recording and of every subcommand."""
    return [([], "offcpu.1")] + [([s], "offcpu-%s.1" % s) for s in subcommands()]


def accepts(prefix, opt, takes_value):
    """Whether the command parses past --opt: it then fails on the stray
    argument (report: on the second recording) instead of on the option."""
    argv = [OFFCPU] + prefix + ["--" + opt] + ([VALUES[opt]] if takes_value else [])
    argv += ["stray-one", "stray-two"] if prefix == ["report"] else ["stray-one"]
    r = run(argv)
    if opt in ("help", "version"):
        return r.returncode == 0
    stray = "stray-two" if prefix == ["report"] else "stray-one"
    if "unexpected argument '%s'" % stray in r.stderr:
        return True
    assert r.returncode == 2 and "--" + opt in r.stderr, (argv, r.returncode, r.stderr)
    return False


TAKEN = {}


def taken_by(prefix):
    """The long options the command takes, asked once of the binary."""
    key = tuple(prefix)
    if key not in TAKEN:
        TAKEN[key] = set(o for o, v in parser_table().items() if accepts(prefix, o, v))
    return TAKEN[key]


def rendered(page):
    env = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0")
    r = run(["man", "-l", os.path.join(ROOT, page)], env=env)
    assert r.returncode == 0, (page, r.stderr)
    return re.sub(r".\x08", "", r.stdout)


def sections(text):
    """{SECTION NAME: its text} of a rendered page."""
    parts = re.split(r"^([A-Z][A-Z ]+)$", text, flags=re.M)
    return dict((parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2))


def documented_options(page):
    """The long options a page's OPTIONS section gives a paragraph of its own:
    its tag lines, indented 7 columns as man renders a .TP tag."""
    options = sections(rendered(page)).get("OPTIONS")
    assert options, "%s has no OPTIONS section" % page
    tags = [l for l in options.splitlines() if re.match(r"^ {7}-", l)]
    return set(re.findall(r"--([a-z][a-z-]+)", "\n".join(tags)))


def help_of(prefix):
    r = run([OFFCPU] + prefix + ["--help"])
    assert r.returncode == 0 and r.stderr == "", (prefix, r.returncode, r.stderr)
    return r.stdout


def test_each_help_lists_exactly_the_options_its_command_takes():
    table = set(parser_table())
    wrong, listed_somewhere = [], set()
    for prefix, _ in commands():
        command = " ".join(["offcpu"] + prefix)
        # An option's line: its tag indented, a continuation line is indented further.
        listed = set(re.findall(r"^ {2,6}(?:-\w, )?--([a-z][a-z-]+)", help_of(prefix),
                                flags=re.M))
        taken = taken_by(prefix)
        if taken - listed:
            wrong.append("%s --help lacks %s" % (command, sorted(taken - listed)))
        if listed - taken:
            wrong.append("%s --help lists what it refuses: %s" % (command,
                                                                 sorted(listed - taken)))
        listed_somewhere |= listed
    assert not wrong, wrong
    # No option of the parser's is left out of every help.
    assert listed_somewhere == table, ("in no help:", table - listed_somewhere)


def test_each_help_starts_with_its_man_pages_synopsis():
    for prefix, page in commands():
        synopsis = [" ".join(l.split()) for l in sections(rendered(page))["SYNOPSIS"].splitlines()
                    if l.strip()]
        first = help_of(prefix).splitlines()[0]
        assert first == "Usage: " + synopsis[0], (page, first, synopsis)


def test_every_command_has_its_man_page():
    for _, page in commands():
        assert os.path.isfile(os.path.join(ROOT, page)), page + " is missing"
    pages = set(p for p in os.listdir(ROOT) if re.match(r"offcpu(-[a-z]+)?\.1$", p))
    assert pages == set(p for _, p in commands()), pages


def test_each_man_page_documents_exactly_the_options_its_command_takes():
    wrong = []
    for prefix, page in commands():
        taken = taken_by(prefix)
        assert "help" in taken and "version" in taken, (prefix, taken)
        documented = documented_options(page)
        if taken - documented:
            wrong.append("%s lacks %s" % (page, sorted(taken - documented)))
        if documented - taken:
            wrong.append("%s documents what %s refuses: %s" %
                         (page, " ".join(["offcpu"] + prefix), sorted(documented - taken)))
    assert not wrong, wrong


def test_the_refusals_are_what_the_pages_say():
    # Checked against the binary, not the pages: the probe itself must tell
    # a refused option from a taken one, or the test above could not fail.
    assert accepts([], "stats", False) and not accepts([], "listen", True)
    assert not accepts(["report"], "duration", True) and accepts(["report"], "top", True)
    assert not accepts(["serve"], "output", True) and accepts(["serve"], "listen", True)
    assert not accepts(["snapshot"], "duration", True) and accepts(["snapshot"], "top", True)


def test_man_pages_render_without_warnings():
    if not shutil.which("man"):
        r = run(["apt-get", "install", "-y", "--no-install-recommends", "man-db"],
                env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        assert shutil.which("man"), "man is missing and apt-get could not install man-db: " + \
            r.stderr[-500:]
    for _, page in commands():
        path = os.path.join(ROOT, page)
        r = run(["sh", "-c", 'man --warnings -l "$1" 2>&1 >/dev/null', "sh", path],
                env=dict(os.environ, MANWIDTH="80"))
        assert r.stdout == "", (page, r.stdout)
        r = run(["groff", "-man", "-Tutf8", "-ww", "-z", path])
        assert r.returncode == 0 and r.stderr == "", (page, r.stderr)


def test_man_pages_have_their_own_synopsis_and_see_each_other():
    pages = [p for _, p in commands()]
    for prefix, page in commands():
        text = sections(rendered(page))
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                        "SEE ALSO"):
            assert section in text, (page, section)
        synopsis = [l.strip() for l in text["SYNOPSIS"].splitlines() if l.strip()]
        command = " ".join(["offcpu"] + prefix)
        # One command a page; each synopsis line starts with it, none runs into another.
        assert synopsis and all(l.startswith(command + " ") or l == command
                                for l in synopsis), (page, synopsis)
        assert not any(re.search(r"\boffcpu\b", l[len(command):]) for l in synopsis), \
            (page, synopsis)
        see_also = text["SEE ALSO"]
        for other in pages:
            if other != page:
                name = other[:-2]
                assert name + "(1)" in see_also.replace("\n", " "), (page, name, see_also)


def anchor(heading):
    """GitHub's anchor of a Markdown heading."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = re.sub(r"^(    |\t).*$", "", f.read(), flags=re.M)
    return set(anchor(h) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M))


def test_readme_links_resolve():
    with open(README) as f:
        text = f.read()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [l for l in links if not re.match(r"[a-z]+:", l)]
    assert len(local) >= 8, local
    for link in local:
        path, _, frag = link.partition("#")
        target = os.path.normpath(os.path.join(ROOT, path)) if path else README
        assert os.path.exists(target), "README.md links to missing %s" % link
        if frag:
            assert frag in anchors(target), "README.md links to missing anchor %s" % link
    for doc in ("docs/formats.md", "docs/wait-classes.md", "docs/serve.md", "docs/design.md",
                "docs/accuracy.md", "docs/robustness.md", "docs/performance.md",
                "CONTRIBUTING.md", "offcpu.1"):
        assert doc in local, "README.md does not link to " + doc


def test_docs_links_resolve():
    docs = os.path.join(ROOT, "docs")
    for name in sorted(os.listdir(docs)) + ["../CONTRIBUTING.md"]:
        path = os.path.normpath(os.path.join(docs, name))
        if not path.endswith(".md"):
            continue
        assert os.path.isfile(path), path + " is missing"
        with open(path) as f:
            text = f.read()
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue
            target, _, frag = link.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(path), target)) \
                if target else path
            assert os.path.exists(target), "%s links to missing %s" % (name, link)
            if frag and target.endswith(".md"):
                assert frag in anchors(target), "%s links to missing anchor %s" % (name, link)


def test_readme_is_a_front_door():
    size = os.path.getsize(README)
    assert size <= README_MAX_BYTES, "README.md is %d bytes, more than %d" % (
        size, README_MAX_BYTES)
    with open(README) as f:
        text = f.read()
    # CI runs these two lines: they stay as they are.
    assert "\n    make deps && make && ./offcpu -d 3s && ./offcpu -d 3s -o offcpu.svg\n" in text
    assert "\n    make deps && make test\n" in text


def test_user_docs_name_no_tracker_issues():
    files = ["README.md", "CONTRIBUTING.md"] + \
        [os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs"))] + \
        [p for p in os.listdir(ROOT) if p.endswith(".1")]
    found = []
    for name in files:
        assert os.path.isfile(os.path.join(ROOT, name)), name + " is missing"
        with open(os.path.join(ROOT, name)) as f:
            for n, line in enumerate(f, 1):
                if re.search(r"issue #?[0-9]|#[0-9][0-9]\b", line, flags=re.I):
                    found.append("%s:%d: %s" % (name, n, line.strip()[:80]))
    assert not found, found[:10]


def main():
    return t.run_suite(globals())


if __name__ == "__main__":
    sys.exit(main())
