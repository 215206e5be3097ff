#!/usr/bin/env python3
"""The figures of benchmark/nanogpt.sh's logs, and a plot of the loss curves (standard library only).

    python3 benchmark/nanogpt_report.py LOGDIR [--plot FILE.svg]

LOGDIR holds nanogpt<K>-r<R>.log (nanoGPT's train.py output, K the K-th python, R the round),
staticformer-r<R>.log (`staticformer train`'s) and, in each, the line `wall SECONDS ...` the script
appended. Prints, per run, the validation loss at every evaluation, the wall time and the time per
iteration; then, per nanoGPT python, the medians and the ratios staticformer/nanoGPT (wall time,
time per iteration) and the difference of the validation losses at the last iteration. --plot draws
the curves of the first round (train and validation; nanoGPT's under the first python) as SVG: with
gnuplot if it is installed, else by hand.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys


def parse_nanogpt(text):
    run = {"evals": [], "iter_ms": [], "wall": None, "label": "nanoGPT"}
    for m in re.finditer(r"^step (\d+): train loss ([\d.]+), val loss ([\d.]+)", text, re.M):
        run["evals"].append((int(m[1]), float(m[2]), float(m[3])))
    eval_steps = {e[0] for e in run["evals"]}
    for m in re.finditer(r"^iter (\d+): loss [\d.]+, time ([\d.]+)ms", text, re.M):
        it = int(m[1])
        # the time of an iteration that evaluated first includes the evaluation; the first few warm up
        if it >= 5 and it not in eval_steps:
            run["iter_ms"].append(float(m[2]))
    m = re.search(r"^wall ([\d.]+)(?: cpu ([\d.]+))? load ([\d.]+) python (\S+) torch (\S+)", text, re.M)
    if m:
        run["wall"], run["cpu"], run["load"] = float(m[1]), float(m[2] or "nan"), float(m[3])
        run["label"] = f"nanoGPT, torch {m[5]}"
    return run


def parse_staticformer(text):
    run = {"evals": [], "wall": None, "label": "staticformer"}
    for m in re.finditer(r"^step (\d+)/\d+: train loss ([\d.]+), val loss ([\d.]+)", text, re.M):
        run["evals"].append((int(m[1]), float(m[2]), float(m[3])))
    m = re.search(r"^final: steps (\d+)(?: of \d+ \(\d+% of the schedule\))?, train loss [\d.]+, val loss ([\d.]+), tokens/s [\d.]+, seconds ([\d.]+)", text, re.M)
    if m:
        run["steps"], run["val_whole"], run["seconds"] = int(m[1]), float(m[2]), float(m[3])
    m = re.search(r"^wall ([\d.]+)(?: cpu ([\d.]+))? load ([\d.]+)", text, re.M)
    if m:
        run["wall"], run["cpu"], run["load"] = float(m[1]), float(m[2] or "nan"), float(m[3])
    return run


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def svg_by_hand(series, path, title):
    """A plain SVG line chart: series = [(label, colour, dash, [(x, y)])]."""
    w, h, l, r, t, b = 760, 460, 60, 20, 30, 50
    xs = [x for s in series for x, _ in s[3]]
    ys = [y for s in series for _, y in s[3]]
    x0, x1 = 0, max(xs)
    y0, y1 = min(ys) - 0.05, max(ys) + 0.05
    px = lambda x: l + (x - x0) / (x1 - x0) * (w - l - r)
    py = lambda y: h - b - (y - y0) / (y1 - y0) * (h - t - b)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="18" text-anchor="middle">{title}</text>',
           f'<rect x="{l}" y="{t}" width="{w - l - r}" height="{h - t - b}" fill="none" stroke="black"/>']
    for i in range(6):
        y = y0 + (y1 - y0) * i / 5
        out.append(f'<text x="{l - 5}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
        x = x0 + (x1 - x0) * i / 5
        out.append(f'<text x="{px(x):.1f}" y="{h - b + 16}" text-anchor="middle">{x:.0f}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">iteration</text>')
    for k, (label, colour, dash, pts) in enumerate(series):
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"'
                   + (' stroke-dasharray="6,4"' if dash else "") + "/>")
        ly = t + 16 + 16 * k
        out.append(f'<line x1="{w - r - 330}" y1="{ly - 4}" x2="{w - r - 300}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"'
                   + (' stroke-dasharray="6,4"' if dash else "") + "/>")
        out.append(f'<text x="{w - r - 295}" y="{ly}">{label}</text>')
    out.append("</svg>\n")
    with open(path, "w") as f:
        f.write("\n".join(out))


def plot(series, path, title):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        svg_by_hand(series, path, title)
        return "drawn by hand (no gnuplot)"
    data = path + ".dat"
    with open(data, "w") as f:
        for label, _, _, pts in series:
            f.write(f"# {label}\n" + "".join(f"{x} {y}\n" for x, y in pts) + "\n\n")
    lines = []
    for k, (label, colour, dash, _) in enumerate(series):
        lines.append(f'"{data}" index {k} using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc rgb "{colour}"'
                     + (" dt 2" if dash else "") + f' title "{label}"')
    script = (f'set terminal svg size 760,460 dynamic noenhanced font "sans,11" background rgb "white"\n'
              f'set output "{path}"\nset title "{title}"\nset xlabel "iteration"\nset ylabel "loss (nats per character)"\n'
              "set key top right\nset grid\nset yrange [1.7:2.8]\n" + "plot " + ", \\\n     ".join(lines) + "\n")
    subprocess.run([gnuplot], input=script, text=True, check=True)
    os.remove(data)
    # gnuplot writes the time and the data file's path into the SVG: drop them (the same plot, the same bytes)
    with open(path) as f:
        svg = f.read()
    svg = re.sub(r"<desc>.*?</desc>", "<desc>benchmark/nanogpt_report.py</desc>", svg, flags=re.S)
    with open(path, "w") as f:
        f.write(svg)
    return "gnuplot"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logdir")
    ap.add_argument("--plot", help="write the loss curves of the first round here (SVG)")
    a = ap.parse_args()

    nano = {}  # K -> [runs by round]
    for path in sorted(glob.glob(os.path.join(a.logdir, "nanogpt*-r*.log"))):
        k, r = map(int, re.search(r"nanogpt(\d+)-r(\d+)\.log$", path).groups())
        with open(path) as f:
            nano.setdefault(k, []).append((r, parse_nanogpt(f.read())))
    sf = []
    for path in sorted(glob.glob(os.path.join(a.logdir, "staticformer-r*.log"))):
        r = int(re.search(r"-r(\d+)\.log$", path)[1])
        with open(path) as f:
            sf.append((r, parse_staticformer(f.read())))
    sf.sort()
    for k in nano:
        nano[k].sort()
    if not sf or not nano:
        sys.exit(f"nanogpt_report.py: no logs in {a.logdir}")

    def show(r, run, extra):
        evals = ", ".join(f"{s}: {v:.4f}" for s, _, v in run["evals"])
        print(f"  round {r} {run['label']}: wall {run['wall']:.1f} s, CPU {run['cpu']:.1f} s (load at the end "
              f"{run['load']:.2f}), {extra}")
        print(f"    val loss at {evals}")

    print("Runs (each pinned to one core, one thread; val = the validation loss over 20 batches):")
    for k in sorted(nano):
        for r, run in nano[k]:
            show(r, run, f"median {median(run['iter_ms']):.1f} ms per iteration (iterations without an evaluation)")
    for r, run in sf:
        show(r, run, f"{run['seconds'] / run['steps'] * 1e3:.1f} ms per step, evaluations included; "
                     f"val loss over the whole split at the end {run['val_whole']:.4f}")

    sf_wall = median([run["wall"] for _, run in sf])
    sf_cpu = median([run["cpu"] for _, run in sf])
    sf_val = median([run["evals"][-1][2] for _, run in sf])
    sf_whole = median([run["val_whole"] for _, run in sf])
    sf_ms = median([run["seconds"] / run["steps"] * 1e3 for _, run in sf])
    last = sf[0][1]["evals"][-1][0]
    print(f"\nstaticformer (median of {len(sf)}): wall {sf_wall:.1f} s, CPU {sf_cpu:.1f} s, {sf_ms:.1f} ms per step "
          "with the evaluations, "
          f"val loss at {last} {sf_val:.4f} (whole split {sf_whole:.4f})")
    for k in sorted(nano):
        runs = [run for _, run in nano[k]]
        wall = median([run["wall"] for run in runs])
        cpu = median([run["cpu"] for run in runs])
        val = median([run["evals"][-1][2] for run in runs])
        ms = median([median(run["iter_ms"]) for run in runs])
        print(f"{runs[0]['label']} (median of {len(runs)}): wall {wall:.1f} s, CPU {cpu:.1f} s, {ms:.1f} ms per iteration without "
              f"evaluations, val loss at {runs[0]['evals'][-1][0]} {val:.4f}")
        print(f"  staticformer / nanoGPT: wall time x{sf_wall / wall:.3f} (target <= 0.55), CPU time x{sf_cpu / cpu:.3f}, "
              f"val loss {sf_val - val:+.4f} (target |d| <= 0.03; whole split {sf_whole - val:+.4f})")

    if a.plot:
        colours = ["#1f77b4", "#2ca02c", "#9467bd"]
        series = []
        for k in sorted(nano)[:1]:  # nanoGPT under the first --python only
            r, run = nano[k][0]
            c = colours[(k - 1) % len(colours)]
            series.append((f"{run['label']}: val", c, False, [(s, v) for s, _, v in run["evals"]]))
            series.append((f"{run['label']}: train (20 batches)", c, True, [(s, t) for s, t, _ in run["evals"]]))
        r, run = sf[0]
        series.append(("staticformer: val", "#d62728", False, [(s, v) for s, _, v in run["evals"]]))
        series.append(("staticformer: train (mean of the steps since the last)", "#d62728", True,
                       [(s, t) for s, t, _ in run["evals"]]))
        how = plot(series, a.plot, "nanoGPT's shakespeare_char CPU recipe: nanoGPT and staticformer, round 1")
        print(f"\nplot: {a.plot} ({how})")


if __name__ == "__main__":
    main()
