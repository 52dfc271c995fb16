#!/usr/bin/env python3
"""FMM3D (the Flatiron Institute's FMM, through its Python package fmm3dpy) on the points the
Versa tool evaluated, checked against the tool's own direct sum at the same targets.

    fmm3d_peer.py --points P --reference R --dist uniform --eps 1e-6 [--reps 3]

P and R are the files `fmm --save-points P --save-reference R --check` writes
(examples/fmm/point_files.hpp). Prints the median time of `reps` calls of lfmm3d (tree build
included) and the achieved relative L2 errors of the potential and of the field, as RESULT lines
(CONVENTIONS.md) with system=fmm3d.
"""
import argparse
import math
import statistics
import sys
import time

import numpy as np
import fmm3dpy

# FMM3D's Laplace kernel is 1/(4 pi r); ours is 1/r (examples/fmm/points.hpp). Its gradient is,
# like ours, the gradient of the potential with respect to the target (not its negative; checked
# against a direct sum), so only this factor differs.
KERNEL_SCALE = 4 * math.pi


def read_points(path):
    """The points file: "VFMMPTS1", n (uint64), then x, y, z, charge (float64[n] each)."""
    with open(path, "rb") as f:
        if f.read(8) != b"VFMMPTS1":
            sys.exit(f"{path}: not a points file")
        n = int(np.frombuffer(f.read(8), "<u8")[0])
        arrays = np.frombuffer(f.read(4 * 8 * n), "<f8").reshape(4, n)
    # Fortran order (3, n): what lfmm3d reads without a copy.
    return np.asfortranarray(arrays[:3]), np.ascontiguousarray(arrays[3])


def read_reference(path):
    """The reference file: "VFMMREF1", n, m (uint64), index[m] (uint64), then potential,
    field_x, field_y, field_z (float64[m] each), the direct sum at points[index]."""
    with open(path, "rb") as f:
        if f.read(8) != b"VFMMREF1":
            sys.exit(f"{path}: not a reference file")
        n, m = (int(v) for v in np.frombuffer(f.read(16), "<u8"))
        index = np.frombuffer(f.read(8 * m), "<u8").astype(np.intp)
        values = np.frombuffer(f.read(4 * 8 * m), "<f8").reshape(4, m)
    return n, index, values[0], values[1:]


def relative_l2(value, reference):
    """||value - reference|| / ||reference||, as examples/fmm/accuracy.cpp measures it."""
    norm = np.linalg.norm(reference)
    error = np.linalg.norm(value - reference)
    return error / norm if norm > 0 else error


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--dist", required=True, help="the distribution's name, for the labels")
    parser.add_argument("--eps", type=float, required=True)
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()

    sources, charges = read_points(args.points)
    n = charges.size
    reference_n, index, potential_ref, field_ref = read_reference(args.reference)
    if reference_n != n:
        sys.exit(f"{args.reference} is for {reference_n} points, {args.points} has {n}")

    seconds = []
    for _ in range(args.reps):
        start = time.perf_counter()
        out = fmm3dpy.lfmm3d(eps=args.eps, sources=sources, charges=charges, pg=2)
        seconds.append(time.perf_counter() - start)
    potential = KERNEL_SCALE * out.pot[index]
    field = KERNEL_SCALE * out.grad[:, index]
    time_median = statistics.median(seconds)
    error_potential = relative_l2(potential, potential_ref)
    error_field = relative_l2(field, field_ref)

    print(f"fmm3d       {n} {args.dist}, eps {args.eps:g}: {time_median:.4f} s "
          f"(median of {args.reps}), error at {index.size} targets: potential "
          f"{error_potential:.3g}, field {error_field:.3g}")
    param = f"n={n},dist={args.dist},eps={args.eps:g}"
    for metric, value, unit in (("seconds", time_median, "s"),
                                ("rel_error_potential", error_potential, "1"),
                                ("rel_error_field", error_field, "1")):
        print(f"RESULT bench=fmm system=fmm3d param={param} metric={metric} "
              f"value={value:.6g} unit={unit}")


if __name__ == "__main__":
    main()
