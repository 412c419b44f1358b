#!/usr/bin/env python3
"""One owner per name prefix: fails when a global symbol kn_<prefix>_* is
defined in two modules. A module is the directory a source file is in
(daemon/, engine/, protocols/gazebo_classic/, tests/lib/, ...), so files of one
module may share a prefix (daemon/backend_*.c share kn_backend_), while
kn_link_ in daemon/ and in libkenaf_sim/ is two owners.

Reads the compiled objects the build's compile_commands.json lists, with
nm. An object that is missing or older than its source (not rebuilt for
this test run) is left out rather than read stale.

  check_prefixes.py BUILD_ROOT SOURCE_ROOT
"""
import collections
import json
import os
import re
import subprocess
import sys

SKIP = 77  # meson: test skipped

build_root, source_root = (os.path.realpath(p) for p in sys.argv[1:3])
with open(os.path.join(build_root, 'compile_commands.json')) as f:
    entries = json.load(f)


def module_of(src):
    """Directory of a source, relative to the source tree (generated
    sources live at the same relative place in the build tree)."""
    for root in (build_root, source_root):
        rel = os.path.relpath(os.path.dirname(src), root)
        if not rel.startswith('..'):
            return rel
    return os.path.dirname(src)


objects = {}  # object path -> module
skipped = 0
for e in entries:
    obj = os.path.join(e['directory'], e['output'])
    src = os.path.realpath(os.path.join(e['directory'], e['file']))
    if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
        skipped += 1
        continue
    objects[obj] = module_of(src)
read = len(objects)
if read == 0:
    print('no compiled objects to read (build first)')
    sys.exit(SKIP)

# one nm for all (one per object takes ~100 times longer): lines are
# "OBJECT:ADDRESS TYPE NAME", global definitions only
out = subprocess.run(['nm', '-A', '--extern-only', '--defined-only'] + sorted(objects),
                     capture_output=True, text=True)
if out.returncode != 0:
    sys.exit('nm: ' + out.stderr.strip())
owners = collections.defaultdict(lambda: collections.defaultdict(set))
for line in out.stdout.splitlines():
    obj, _, rest = line.partition(':')
    m = re.match(r'\s*\S+ +[A-Z] +(kn_([a-z0-9]+)_\S*)$', rest)
    if m and obj in objects:
        owners[m.group(2)][objects[obj]].add(m.group(1))

bad = 0
for prefix in sorted(owners):
    mods = owners[prefix]
    if len(mods) > 1:
        bad += 1
        print('kn_%s_ is defined in %d modules:' % (prefix, len(mods)))
        for mod in sorted(mods):
            print('  %s/: %s' % (mod, ', '.join(sorted(mods[mod]))))
print('%d prefixes in %d objects (%d not built or out of date, left out); %d with two owners'
      % (len(owners), read, skipped, bad))
sys.exit(1 if bad else 0)
