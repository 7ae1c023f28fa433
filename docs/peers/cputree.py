#!/usr/bin/env python3
"""Prints the CPU seconds used so far by a process and all its descendants
(utime + stime + the reaped children's cutime + cstime, from /proc), so
that run.sh can give each service's CPU per document: Chromium's and
LibreOffice's processes count for jsreport and Carbone. A child that exits
between two readings moves from its own times to its parent's reaped
times, so differences stay right.

    python3 cputree.py PID
"""
import os
import sys

root = int(sys.argv[1])
tick = os.sysconf("SC_CLK_TCK")
procs = {}
for d in os.listdir("/proc"):
    if not d.isdigit():
        continue
    try:
        with open(f"/proc/{d}/stat") as f:
            st = f.read()
    except OSError:
        continue
    # the command may hold spaces and parentheses: split after the last ')'
    fields = st[st.rindex(")") + 2:].split()
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    procs[int(d)] = (ppid, utime + stime + cutime + cstime)
children = {}
for pid, (ppid, _) in procs.items():
    children.setdefault(ppid, []).append(pid)
total, todo = 0, [root]
while todo:
    pid = todo.pop()
    if pid in procs:
        total += procs[pid][1]
    todo.extend(children.get(pid, []))
print(f"{total / tick:.2f}")
