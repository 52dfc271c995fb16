#!/usr/bin/env python3
"""The measurement behind fmm::leaf_size_for_order: the FMM tool's time per evaluation at each
order (through the eps that chooses it) and leaf size, on each distribution and size, and for
each order the leaf size whose times are the least over all of them (the geometric mean of each
time over the fastest at its distribution and size). Run through `bench/run fmm-leaf`.

    leaf_sizes.py --build DIR [--reps R] [--sizes N,...] [--dists D,...] [--eps E,...]
                  [--leaves L,...]

Prints a table per order and `RESULT bench=fmm-leaf system=versa param=n=<N>,dist=<d>,eps=<e>,
leaf=<L> metric=seconds` lines, then `RESULT ... param=eps=<e>,order=<p> metric=best_leaf_size`.
"""
import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

TIME = re.compile(r"^time\s+(\S+) s per evaluation")
ORDER = re.compile(r"^order\s+(\d+) for eps")


def measure(tool, n, dist, eps, leaf, reps):
    """(order, seconds per evaluation) of one run of the tool."""
    line = [str(tool), "--n", str(n), "--dist", dist, "--eps", eps, "--leaf", str(leaf),
            "--repeat", str(reps)]
    out = subprocess.run(line, check=True, capture_output=True, text=True).stdout
    order = seconds = None
    for text in out.splitlines():
        if m := ORDER.match(text):
            order = int(m.group(1))
        if m := TIME.match(text):
            seconds = float(m.group(1))
    if order is None or seconds is None:
        sys.exit(f"leaf_sizes.py: no order or time in the output of {' '.join(line)}")
    return order, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the build folder holding the fmm tool")
    parser.add_argument("--reps", type=int, default=3, help="evaluations per measurement (median)")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--dists", default="uniform,blobs")
    parser.add_argument("--eps", default="1e-3,1e-4,1e-6,1e-7,3e-8,1e-8,1e-9")
    parser.add_argument("--leaves", default="128,256,512,1024")
    args = parser.parse_args()
    tool = Path(args.build) / "examples" / "fmm" / "fmm"
    leaves = [int(v) for v in args.leaves.split(",")]
    cases = [(int(n), d) for n in args.sizes.split(",") for d in args.dists.split(",")]
    for eps in args.eps.split(","):
        times = {}  # (n, dist, leaf) -> seconds
        order = None
        print(f"\neps {eps}")
        print(f"{'N':>8} {'dist':8} " + " ".join(f"{'leaf ' + str(leaf):>10}" for leaf in leaves))
        for n, dist in cases:
            row = []
            for leaf in leaves:
                order, seconds = measure(tool, n, dist, eps, leaf, args.reps)
                times[n, dist, leaf] = seconds
                row.append(f"{seconds:10.4f}")
                print(f"RESULT bench=fmm-leaf system=versa param=n={n},dist={dist},eps={eps},"
                      f"leaf={leaf} metric=seconds value={seconds:.6g} unit=s", flush=True)
            print(f"{n:8} {dist:8} " + " ".join(row), flush=True)
        # Each leaf size's times relative to the fastest of its case, as a geometric mean.
        def slowdown(leaf):
            ratios = [times[n, d, leaf] / min(times[n, d, l] for l in leaves) for n, d in cases]
            return math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        best = min(leaves, key=slowdown)
        print(f"order {order}: " + ", ".join(f"leaf {l} x{slowdown(l):.3f}" for l in leaves) +
              f"; best {best}")
        print(f"RESULT bench=fmm-leaf system=versa param=eps={eps},order={order} "
              f"metric=best_leaf_size value={best} unit=points")


if __name__ == "__main__":
    main()
