#!/usr/bin/env python3
"""Runs the command samples of the documentation and compares what they print with the output the
page shows, so a page cannot drift from the tool again (issue 30: docs/tune.md showed a table the
command no longer printed). A tested sample is marked in the Markdown with a comment line

    <!-- doc-test[: stderr] [ignore=REGEX] -->

followed by either one code block of `$ command` lines, each followed by its output, or a ```sh
block of commands (a trailing backslash continues a line) and then a plain code block holding
their output. The commands run with bash in a fresh folder holding copies of examples/*.tri and
tests/run/*.tri, with the built `tri` first on PATH and a fresh cache directory. Both sides are
normalized before comparing: numbers with a decimal point, hex keys of 8 or more digits, runs of
spaces, trailing spaces, and whatever the sample's `ignore` regex matches (to the end of the
comment). Standard output is compared; with `stderr`, standard error too (after it).

    check_samples.py [FILE.md ...]   (default: README.md and docs/*.md; TRI_TOOL, TRI_SOURCE_DIR)
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- doc-test(?::\s*(.*?))?\s*-->\s*$")


def blocks_after(lines, i):
    """The code blocks that follow line i: (info string, body lines, index after the block)."""
    out = []
    while i < len(lines) and len(out) < 2:
        if not lines[i].startswith("```"):
            if out or lines[i].strip():
                break
            i += 1
            continue
        info = lines[i][3:].strip()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((info, lines[i + 1:j], j + 1))
        i = j + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        if info != "sh":
            break
    return out


def samples(path):
    """(line number, commands, expected output, ignore regex) for each marked sample of a page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for n, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        spec = m.group(1) or ""
        at = spec.find("ignore=")
        opts = {"stderr": "stderr" in spec[:at if at >= 0 else len(spec)].split(),
                "ignore": spec[at + 7:] if at >= 0 else None}
        found = blocks_after(lines, n + 1)
        if found and found[0][0] == "sh" and len(found) == 2:
            commands = []
            for c in found[0][1]:
                if commands and commands[-1].endswith("\\"):
                    commands[-1] = commands[-1][:-1] + " " + c.strip()
                else:
                    commands.append(c)
            yield n + 1, [c for c in commands if c.strip()], found[1][1], opts
        elif found and found[0][0] != "sh":
            body, commands, expected = found[0][1], [], []
            for b in body:
                if b.startswith("$ "):
                    commands.append(b[2:])
                else:
                    expected.append(b)
            yield n + 1, commands, expected, opts
        else:
            raise SystemExit(f"{path}:{n + 1}: a doc-test mark must be followed by a code block of `$ ` lines, or "
                             "a ```sh block and an output block")


def normalize(text, ignore):
    text = re.sub(r"\b[0-9a-f]{8,}\b", "KEY", text)
    text = re.sub(r"-?\d+\.\d+", "N", text)
    if ignore:
        text = re.sub(ignore, "", text)
    text = re.sub(r"[ \t]+", " ", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def main(argv):
    src = os.environ.get("TRI_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tri = os.environ.get("TRI_TOOL") or shutil.which("tri")
    if not tri:
        raise SystemExit("check_samples.py: set TRI_TOOL to the built tri")
    pages = argv or [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    failed = checked = 0
    for page in pages:
        for line, commands, expected, opts in samples(page):
            ignore = opts["ignore"]
            checked += 1
            where = f"{os.path.relpath(page, src)}:{line}"
            with tempfile.TemporaryDirectory() as work:
                for f in glob.glob(os.path.join(src, "examples", "*.tri")) + glob.glob(os.path.join(src, "tests", "run", "*.tri")):
                    shutil.copy(f, work)
                env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(tri)) + os.pathsep + os.environ["PATH"],
                           TRI_CACHE_DIR=os.path.join(work, "cache"))
                got = ""
                for c in commands:
                    r = subprocess.run(["bash", "-c", c], cwd=work, env=env, capture_output=True, text=True)
                    got += r.stdout + (r.stderr if opts["stderr"] else "")
            want_n, got_n = normalize("\n".join(expected), ignore), normalize(got, ignore)
            if want_n != got_n:
                failed += 1
                print(f"FAIL {where}: the page shows\n{want_n}\n--- the commands print\n{got_n}\n")
            else:
                print(f"PASS {where}")
    print(f"{checked} samples, {failed} differ")
    if checked == 0:
        print("no sample is marked `<!-- doc-test -->`")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
