#!/usr/bin/env python3
"""waits.py — every wait in the end-to-end scripts is bounded (issue 38: the suite hung
until meson's timeout on a `wait` for a reader that never got its data).

Reads every tests/*.sh and fails, naming file and line, on:
  - a `wait` builtin (a background child may never end): use bwait PID SECONDS WHAT
    from tests/bounded.sh, which says what did not end and ends it;
  - a `while` or `until` loop, and a `read` without -t, unless it reads a pipe
    (`CMD | while read`) or the line says why it ends with a `# bounded: REASON` comment.
`for _ in $(seq 1 N)` polls are bounded by N and need nothing. Text inside quotes (the
lmlab commands given to -c, whose `wait` is lmlab's own) and here-documents is skipped.
Usage: waits.py DIR (the tests folder). Exit 0 when clean, 1 with the offending lines."""
import glob
import os
import re
import sys

CMD = r'(^|[;&|{(!]|\bthen\b|\bdo\b|\belse\b|\bif\b|\|\|)\s*'


def code_of(line):
    """The line without quoted text and without its comment."""
    out, q, i = [], None, 0
    while i < len(line):
        c = line[i]
        if q:
            if c == '\\' and q == '"':
                i += 2
                continue
            if c == q:
                q = None
            i += 1
            continue
        if c in '"\'':
            q = c
        elif c == '#' and (i == 0 or line[i - 1] in ' \t;'):
            break
        else:
            out.append(c)
        i += 1
    return ''.join(out)


def problems(path):
    found, heredoc = [], None
    for n, line in enumerate(open(path, encoding='utf-8', errors='replace'), 1):
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            continue
        code = code_of(line)
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", code)
        if m:
            heredoc = m.group(1)
        if '# bounded:' in line:
            continue
        if re.search(CMD + r"wait\b(?!\))", code):
            found.append((n, 'a wait on a child: use bwait PID SECONDS WHAT (tests/bounded.sh)'))
        if re.search(r'\b(while|until)\b', code) and not re.search(r'\|\s*while\s+(IFS=\S*\s+)?read\b', code):
            found.append((n, 'a while/until loop: bound it (for _ in $(seq ...)) or say why it'
                             ' ends with "# bounded: REASON"'))
        elif re.search(CMD + r'(while\s+)?(IFS=\S*\s+)?read\b(?![^;|&]*\s-t\s)', code) and \
                not re.search(r'\|\s*while\s+(IFS=\S*\s+)?read\b', code):
            found.append((n, 'a read with no -t: bound it or say why it ends with "# bounded:"'))
    return found


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    bad = 0
    files = sorted(glob.glob(os.path.join(folder, '*.sh')))
    for path in files:
        for n, why in problems(path):
            print('%s:%d: %s' % (os.path.basename(path), n, why))
            bad += 1
    print('%d scripts, %d unbounded waits' % (len(files), bad))
    return 1 if bad or not files else 0


if __name__ == '__main__':
    sys.exit(main())
