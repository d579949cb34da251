#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""agentic-job(1)'s DIAGNOSTICS against the code that prints them, both ways.

Every line of the section's .nf/.fi blocks must be a message some source file of the client's own
commands prints (main.c, pump.c, sandbox-exec.c, sandbox-end.c, step-inside.c), and every message those files print on
standard error must be a line of the section. A line of the page stands for its text with each \\fI...\\fP
placeholder a word; a message of the code is a pattern, each printf conversion any text, a message that
does not end with a newline (continued by later writes) matched at the start only, a string macro of the
tree put in by its value. The usage that follows a usage error is not a diagnostic.

usage: diagnostics.py SOURCE_ROOT
       diagnostics.py --self-test
"""
import re
import sys
from pathlib import Path

FILES = ["client/main.c", "client/pump.c", "client/sandbox-exec.c", "client/sandbox-end.c", "client/step-inside.c"]
# Whose AjErrors those commands print (the configuration's loader): the page may name them.
FILES_ERRORS = ["common/config.c", "client/step-frame.c"]
MAN = "man/agentic-job.1.in"
CONVERSION = re.compile(r"%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?[diouxXscp]")
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def man_lines(text):
    """The lines of the DIAGNOSTICS section's .nf/.fi blocks, as the text a user would see."""
    section = re.search(r"^\.SH DIAGNOSTICS\n(.*?)^\.SH ", text, re.S | re.M)
    if not section:
        raise SystemExit("%s: no DIAGNOSTICS section" % MAN)
    lines, inside = [], False
    for line in section.group(1).splitlines():
        if line == ".nf":
            inside = True
        elif line == ".fi":
            inside = False
        elif inside:
            lines.append(line)
    out = []
    for line in lines:
        line = re.sub(r"\\fI(.*?)\\fP", "WORD", line)
        line = re.sub(r"\\f[BRP]", "", line)
        line = line.replace("\\-", "-").replace("\\(aq", "'").replace("\\e", "\\")
        out.append(line.replace("@HELPER_PATH@", "/usr/libexec/agentic-job"))
    return out


def string_macros(root):
    """#define NAME "value" of the client and common headers."""
    macros = {}
    for header in list((root / "client").rglob("*.h")) + list((root / "common").glob("*.h")):
        text = header.read_text().replace("\\\n", " ")
        for m in re.finditer(r'^#define\s+([A-Z_][A-Z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\s*(?:/\*.*)?$', text, re.M):
            macros[m.group(1)] = m.group(2)
    return macros


def unescape(s):
    return s.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"').replace("\\\\", "\\")


def statements(source):
    """Each call that writes to standard error, as its text: fprintf(stderr, ...), fputs(..., stderr),
    dprintf(STDERR_FILENO, ...), and the usage_error(WHAT, ARG) of sandbox-exec.c (WHAT then ARG)."""
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    for m in re.finditer(r"\b(fprintf|fputs|dprintf|usage_error|aj_error)\s*\(", source):
        depth, i = 1, m.end()
        while depth and i < len(source):
            c = source[i]
            if c == '"':
                i = LITERAL.match(source, i).end()
                continue
            depth += c == "("
            depth -= c == ")"
            i += 1
        call = source[m.end():i - 1]
        kind = m.group(1)
        if kind == "usage_error":
            if call.startswith("const char"):
                continue  # its definition
            yield call, "ARG"
        elif kind == "aj_error":
            yield call, "ERROR"
        elif "stderr" in call or "STDERR_FILENO" in call:
            yield call, ""


def code_messages(root):
    """The messages of FILES: (file, first line of the format, pattern)."""
    macros = string_macros(root)
    out = []
    for name in FILES + FILES_ERRORS:
        for call, tail in statements((root / name).read_text()):
            if (name in FILES_ERRORS) != (tail == "ERROR"):
                continue
            pieces = []
            # Adjacent literals and string macros, from the first literal: the format (or fputs' text).
            for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|\b([A-Z_][A-Z0-9_]+)\b|(,)', call):
                if m.group(1) is not None:
                    pieces.append(unescape(m.group(1)))
                elif m.group(2) and pieces and m.group(2) in macros:
                    pieces.append(unescape(macros[m.group(2)]))
                elif m.group(3) and pieces:
                    break
            if not pieces:
                continue
            whole = "".join(pieces)
            if tail:  # usage_error(WHAT, ARG), "agentic-job sandbox exec: WHAT ARG" (ARG maybe ""); an
                whole = "%s: " + whole  # AjError's message, printed after the command's name
            first = whole.split("\n")[0]
            continued = "\n" not in whole and not tail
            # A message begins with its command's name, the literal one or prog's ("%s: ").
            prefix = ""
            if first.startswith("%s: "):
                prefix, first = "agentic-job[^:]*: ", first[4:]
            elif first.startswith("usage:") or not re.match(r"agentic-job[^:]*: ", first):
                continue  # the usage, or a piece of a message ("%s%s", ")\n")
            pattern = prefix + "".join(".+" if CONVERSION.fullmatch(p) else re.escape(p)
                                       for p in re.split(r"(%s)" % CONVERSION.pattern, first) if p)
            if tail == "ARG":
                pattern += ".*"
            # Whether the page must say it: a message passed on whole ("%s: %s") is said by the page
            # in its own terms (a configuration error); an AjError of FILES_ERRORS may be said (the
            # page names some), the others are in the manual pages of what they are about.
            own = re.sub(r"^agentic-job[^:]*: ", "", first)
            must = tail != "ERROR" and len(re.findall(r"[A-Za-z]", CONVERSION.sub("", own))) >= 3
            out.append((name, ("%s: " if prefix else "") + first, pattern, continued, must, tail == "ERROR"))
    return out


def compare(man, code):
    failures = []
    for line in man:
        # A message passed on whole stands for a line that names one alone ("agentic-job end: WORD").
        alone = re.fullmatch(r"agentic-job[^:]*: WORD", line) is not None
        if not any((re.match if cont else re.fullmatch)(pat, line) for _, _, pat, cont, must, error in code
                   if must or error or alone):
            failures.append("the page says what no code prints: %s" % line)
    for name, first, pat, cont, must, _ in code:
        if must and not any((re.match if cont else re.fullmatch)(pat, line) for line in man):
            failures.append("%s prints what the page does not say: %s" % (name, first))
    return failures


def self_test():
    man = man_lines(".SH DIAGNOSTICS\n.nf\nagentic\\-job x: cannot \\fIdo\\fP\nagentic\\-job: left\n.fi\n.SH NEXT\n")
    assert man == ["agentic-job x: cannot WORD", "agentic-job: left"], man
    code = [("a.c", "%s: cannot %s", "agentic-job[^:]*: cannot .+", False, True, False),
            ("b.c", "agentic-job: other", "agentic\\-job: other", False, True, False),
            ("c.c", "%s: %s", "agentic-job[^:]*: .+", False, False, False)]
    failures = compare(man, code)
    assert failures == ["the page says what no code prints: agentic-job: left",
                        "b.c prints what the page does not say: agentic-job: other"], failures
    print("ok - self-test")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    man = man_lines((root / MAN).read_text())
    code = code_messages(root)
    failures = compare(man, code)
    for f in failures:
        print("not ok - " + f)
    print("# %d lines of the page, %d messages of %s: %d mismatches"
          % (len(man), len(code), ", ".join(FILES), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
