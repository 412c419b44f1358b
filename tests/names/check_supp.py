#!/usr/bin/env python3
"""Every kenaf-sim function that tools/valgrind.supp names is still defined
in the sources: a suppression whose frame was renamed matches nothing, and
the leak it scoped fails the valgrind stage of the suite by surprise (the
gz backend's publish became kn_gzsim_publish that way). Frames of
third-party code (allocators, libzmq, libuv, GLib/GStreamer) are named by
their own libraries and are not looked up.

  check_supp.py SOURCE_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
THIRD_PARTY = re.compile(r'^(malloc|calloc|realloc|free|strdup|zmq_\w+|uv_\w+|g_\w+|gst_\w+)$')

with open(os.path.join(root, 'tools', 'valgrind.supp')) as f:
    frames = [m.group(1) for m in re.finditer(r'^\s*fun:(\S+)\s*$', f.read(), re.M)]

defined = set()
for top in ('daemon', 'engine', 'libkenaf_sim', 'protocols', 'cameras', 'view', 'tools'):
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        for n in names:
            if not n.endswith('.c'):
                continue
            with open(os.path.join(dirpath, n), errors='replace') as f:
                # a definition starts a line: "static int name(" or "name("
                for m in re.finditer(r'^(?:[A-Za-z_][\w \*]*[\s\*])?([A-Za-z_]\w*)\s*\(', f.read(), re.M):
                    defined.add(m.group(1))

missing = [fr for fr in frames if not THIRD_PARTY.match(fr) and '*' not in fr and fr not in defined]
for fr in missing:
    print(f'tools/valgrind.supp: frame fun:{fr} is defined nowhere in the sources')
print(f'{len(frames)} frames, {len(missing)} missing')
sys.exit(1 if missing else 0)
