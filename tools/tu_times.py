#!/usr/bin/env python3
"""Compile every test, example, tool and benchmark translation unit of a build directory once,
alone, under /usr/bin/time -v, and print a Markdown table of user time and peak memory.

    tools/tu_times.py build-dir [--filter REGEX]

Reads build-dir/compile_commands.json (CMake writes it: CMAKE_EXPORT_COMPILE_COMMANDS is on).
ccache is bypassed (CCACHE_DISABLE=1) and the object goes to /dev/null-like temp files, so the
build directory is not touched. Run it on an idle machine: user time is CPU time, but a busy
machine still slows it a little.
"""
import json, os, re, shlex, subprocess, sys, tempfile

def main():
    if len(sys.argv) < 2:
        print(__doc__); return 2
    build = sys.argv[1]
    flt = re.compile(sys.argv[sys.argv.index('--filter') + 1]) if '--filter' in sys.argv else None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmds = json.load(open(os.path.join(build, 'compile_commands.json')))
    rows = []
    for c in cmds:
        src = os.path.relpath(c['file'], root)
        if src.startswith('..') or '/headers/' in c['file'] or (flt and not flt.search(src)):
            continue
        args = shlex.split(c['command']) if 'command' in c else c['arguments']
        if os.path.basename(args[0]) == 'ccache':
            args = args[1:]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'x.o')
            a = []
            skip = False
            for i, x in enumerate(args):
                if skip: skip = False; continue
                if x == '-o': a += ['-o', out]; skip = True; continue
                a.append(x)
            env = dict(os.environ, CCACHE_DISABLE='1', LC_ALL='C')
            r = subprocess.run(['/usr/bin/time', '-v'] + a, cwd=c['directory'], env=env,
                               capture_output=True, text=True)
        user = float(re.search(r'User time \(seconds\): ([0-9.]+)', r.stderr).group(1))
        rss = int(re.search(r'Maximum resident set size \(kbytes\): ([0-9]+)', r.stderr).group(1))
        rows.append((src, user, rss / 1024 / 1024, r.returncode))
        print(f'{src}: {user:.1f} s user, {rss / 1024 / 1024:.2f} GB' + ('' if r.returncode == 0 else ' (FAILED)'),
              file=sys.stderr, flush=True)
    rows.sort(key=lambda r: -r[1])
    print('| translation unit | user time | peak memory |')
    print('|---|---|---|')
    for src, user, gb, rc in rows:
        print(f'| `{src}` | {user:.1f} s | {gb:.2f} GB |' + ('' if rc == 0 else ' failed |'))
    return 0

if __name__ == '__main__':
    sys.exit(main())
