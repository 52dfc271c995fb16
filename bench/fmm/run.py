#!/usr/bin/env python3
"""The FMM benchmark: Versa's FMM tool against its peers on the same points, compared at equal
achieved error. Run through `bench/run fmm`, which builds the tool and makes FMM3D's venv.

    run.py --build DIR [--fmm3d-python PY] [--reps R] [--quick] [--sizes N,...] [--dists D,...]
           [--systems S,...] [--max-seconds S] [--seed S]

For each distribution and size, every system evaluates the same points (written by the first
Versa run whose check passes, with the direct sum at the check's targets) at each of its eps, and
reports the median time of R evaluations (tree build included) and the achieved relative L2
errors of the potential and of the field against that direct sum. The summary gives, for each
FMM3D eps, the cheapest eps of each other system whose achieved potential error is at most
FMM3D's, and FMM3D's time over that system's. Only the Python standard library is needed here.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The eps each system runs at. FMM3D usually does better than asked (at eps 1e-3 its error is
# about 3e-5, at 1e-6 about 5e-8, at 1e-9 about 2e-11), so Versa also runs at the eps in between
# and beyond, with which its error can be matched to FMM3D's.
VERSA_EPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 3e-8, 1e-8, 1e-9, 1e-10, 3e-11)
FMM3D_EPS = (1e-3, 1e-6, 1e-9)

RESULT = re.compile(r"^RESULT bench=(\S+) system=(\S+) param=(\S+) metric=(\S+) value=(\S+) "
                    r"unit=(\S+)\s*$")
# The tool's human line "phases  tree 0.0683, upward 0.0232, ... s (medians)".
PHASES = re.compile(r"^phases\s+(.*?)\s+s\b")


@dataclass
class System:
    """One system in the comparison. `command(case, eps, reps)` is its command line; `missing`
    says why it is left out (its binary is not built, its venv could not be made); `monotone`,
    that its time grows as eps shrinks, which lets a tighter eps's time be predicted."""
    name: str
    eps: tuple
    command: object
    missing: str = ""
    monotone: bool = True
    writes_points: bool = False  # its runs can write the case's point and reference files


@dataclass
class Case:
    dist: str
    n: int
    seed: int
    points: Path
    reference: Path


@dataclass
class Run:
    system: str
    dist: str
    n: int
    eps: float
    reps: int = 0
    seconds: float = None         # median time of one evaluation
    estimate: float = None        # time of one evaluation, or a lower bound when it timed out
    error_potential: float = None
    error_field: float = None
    phases: str = ""
    param: str = ""               # the param= of its seconds RESULT line
    note: str = ""                # why it was skipped, or how it failed


def versa_like(tool):
    """The command of the Versa tool, or of a tool with the same options (the StarPU one)."""
    def command(case, eps, reps):
        line = [str(tool), "--n", str(case.n), "--dist", case.dist, "--eps", f"{eps:g}",
                "--repeat", str(reps), "--seed", str(case.seed), "--check"]
        if not case.points.exists():
            line += ["--save-points", str(case.points), "--save-reference", str(case.reference)]
        return line
    return command


def fmm3d_command(python):
    def command(case, eps, reps):
        return [str(python), str(HERE / "fmm3d_peer.py"), "--points", str(case.points),
                "--reference", str(case.reference), "--dist", case.dist, "--eps", f"{eps:g}",
                "--reps", str(reps)]
    return command


def make_systems(args):
    build = Path(args.build)
    versa_tool = build / "examples" / "fmm" / "fmm"
    # The same FMM on StarPU (bench/fmm/starpu_main.cpp): the options and output of the fmm
    # tool, with system=starpu. Left out where StarPU is not installed.
    starpu_tool = build / "bench" / "versa-bench-fmm-starpu"
    systems = [
        System("versa", VERSA_EPS, versa_like(versa_tool), writes_points=True,
               missing="" if versa_tool.exists() else f"{versa_tool} not built"),
        System("starpu", VERSA_EPS, versa_like(starpu_tool),
               missing="" if starpu_tool.exists() else f"{starpu_tool} not built (no StarPU)"),
        # FMM3D picks its tree depth from eps, so its time need not grow as eps shrinks.
        System("fmm3d", FMM3D_EPS, fmm3d_command(args.fmm3d_python), monotone=False,
               missing="" if args.fmm3d_python else
               "no venv with fmm3dpy (bench/run could not make one; see above)"),
    ]
    if args.systems:
        wanted = args.systems.split(",")
        systems = [s for s in systems if s.name in wanted]
    return systems


def predict(runs, system, dist, n, eps):
    """The seconds one evaluation of `system` at (dist, n, eps) is expected to take, from what
    this run has measured: linear in N from a smaller size at the same eps, and, for a system
    whose time grows as eps shrinks, geometric per decade of eps from the looser ones at this N.
    None when nothing measured applies."""
    mine = [r for r in runs if r.system == system.name and r.dist == dist and r.estimate]
    guesses = []
    smaller = [r for r in mine if r.eps == eps and r.n < n]
    if smaller:
        r = max(smaller, key=lambda r: r.n)
        guesses.append(r.estimate * n / r.n)
    looser = sorted((r for r in mine if r.n == n and r.eps > eps), key=lambda r: -r.eps)
    if system.monotone and len(looser) >= 2:
        a, b = looser[-2], looser[-1]
        per_decade = max(1.0, b.estimate / a.estimate) ** (1 / math.log10(a.eps / b.eps))
        guesses.append(b.estimate * per_decade ** math.log10(b.eps / eps))
    elif system.monotone and looser:
        guesses.append(looser[-1].estimate)
    return max(guesses) if guesses else None


def parse_output(run, text):
    """Fills `run` from the RESULT lines of a tool's output and passes them through; adds
    phase_seconds_<name> lines from the tool's phases line unless it printed them itself."""
    values, params, has_phases = {}, {}, False
    for line in text.splitlines():
        m = RESULT.match(line)
        if m:
            print(line, flush=True)
            values[m.group(4)] = float(m.group(5))
            params[m.group(4)] = m.group(3)
            has_phases |= m.group(4).startswith("phase_seconds_")
    run.seconds = values.get("seconds")
    run.estimate = run.seconds
    run.error_potential = values.get("rel_error_potential")
    run.error_field = values.get("rel_error_field")
    run.param = params.get("seconds", "")
    for line in text.splitlines():
        m = PHASES.match(line)
        if m:
            phases = [p.split() for p in m.group(1).split(",")]
            run.phases = " ".join(f"{name} {value}" for name, value in phases)
            if not has_phases:
                for name, value in phases:
                    print(f"RESULT bench=fmm system={run.system} param={run.param} "
                          f"metric=phase_seconds_{name} value={value} unit=s", flush=True)


def run_one(system, case, eps, args, runs):
    run = Run(system.name, case.dist, case.n, eps)
    runs.append(run)
    if system.missing:
        run.note = "left out: " + system.missing
        return
    if not system.writes_points and not case.points.exists():
        run.note = "skipped: no points file (no Versa run passed its check)"
        return
    predicted = predict(runs, system, case.dist, case.n, eps)
    if predicted is not None and predicted > args.max_seconds:
        run.note = f"skipped: predicted {predicted:.0f} s > --max-seconds {args.max_seconds:g}"
        run.estimate = predicted  # so that a tighter eps or a larger N is skipped as well
        return
    # Fewer repetitions where they would take the call past --max-seconds.
    run.reps = args.reps
    if predicted is not None:
        run.reps = max(1, min(args.reps, int(args.max_seconds // max(predicted, 1e-9))))
    # A runaway call is stopped: well past what was predicted, or past a generous bound.
    limit = 3 * run.reps * (predicted or args.max_seconds) + 120
    command = system.command(case, eps, run.reps)
    print(f"# {' '.join(command)}", file=sys.stderr, flush=True)
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        run.estimate = (time.monotonic() - start) / run.reps
        run.note = f"timed out after {time.monotonic() - start:.0f} s"
        return
    parse_output(run, done.stdout)
    if run.seconds is None or run.error_potential is None:
        last = done.stderr.strip().splitlines()[-1:] or ["no RESULT line"]
        run.note = f"failed (exit {done.returncode}): {last[0]}"
    elif done.returncode != 0:
        run.note = "check failed"  # the tool's own bar (field error at most 10 eps) was missed


def fmt(value, spec):
    width = int(re.match(r"\d*", spec).group() or 0)
    return format("-", f">{width}") if value is None else format(value, spec)


def print_table(case, runs):
    print(f"\n{case.dist}, N = {case.n}")
    print(f"{'system':8} {'eps':>6} {'reps':>4} {'seconds':>10} {'err pot':>9} {'err field':>9} "
          f"{'<= eps':>6}  phases (s) / note")
    left_out = set()
    for r in runs:
        if r.note.startswith("left out: "):
            if r.system in left_out:
                continue  # said once for the whole system
            left_out.add(r.system)
        ok = None if r.error_potential is None else ("yes" if r.error_potential <= r.eps else "NO")
        print(f"{r.system:8} {r.eps:6.0e} {r.reps or '-':>4} {fmt(r.seconds, '10.4f')} "
              f"{fmt(r.error_potential, '9.2e')} {fmt(r.error_field, '9.2e')} {ok or '-':>6}  "
              f"{'; '.join(x for x in (r.phases, r.note) if x)}")


def print_summary(runs, systems):
    """For each FMM3D eps: the cheapest eps of each other system that reaches FMM3D's achieved
    potential error, and the time ratio."""
    print("\nAt equal achieved error: for each FMM3D eps, the cheapest eps of each system whose "
          "potential error is at most FMM3D's")
    cases = sorted({(r.dist, r.n) for r in runs}, key=lambda c: (c[1], c[0]))
    for dist, n in cases:
        for peer in (r for r in runs if r.system == "fmm3d" and r.dist == dist and r.n == n):
            if peer.seconds is None or peer.error_potential is None:
                continue
            for system in systems:
                if system.name == "fmm3d" or system.missing:
                    continue
                mine = [r for r in runs if r.system == system.name and r.dist == dist and
                        r.n == n and r.seconds is not None and r.error_potential is not None]
                matching = [r for r in mine if r.error_potential <= peer.error_potential]
                head = (f"{dist:8} N={n:<8} fmm3d eps {peer.eps:.0e} (err {peer.error_potential:.2e}, "
                        f"{peer.seconds:.3f} s): ")
                if not matching:
                    best = min(mine, key=lambda r: r.error_potential, default=None)
                    reached = (f"; its lowest error {best.error_potential:.2e} at eps {best.eps:.0e}"
                               if best else "")
                    print(head + f"{system.name} run at no eps that reaches it{reached}")
                    continue
                r = min(matching, key=lambda r: r.seconds)
                ratio = peer.seconds / r.seconds
                print(head + f"{system.name} eps {r.eps:.0e} (err {r.error_potential:.2e}, "
                      f"{r.seconds:.3f} s): fmm3d/{system.name} = {ratio:.2f}")
                print(f"RESULT bench=fmm system={system.name} param={r.param},"
                      f"fmm3d_eps={peer.eps:g} metric=speedup_vs_fmm3d_at_equal_error "
                      f"value={ratio:.6g} unit=1")


def parse_sizes(text):
    return [int(float(s)) for s in re.split(r"[,\s]+", text.strip()) if s]


def main():
    parser = argparse.ArgumentParser(
        description="Versa's FMM against FMM3D (and StarPU) at equal achieved error.")
    parser.add_argument("--build", required=True, help="the build folder holding the tools")
    parser.add_argument("--fmm3d-python", default="", help="a python that imports fmm3dpy")
    parser.add_argument("--reps", type=int, default=3, help="evaluations per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="sizes 10^4 and 10^5")
    parser.add_argument("--sizes", help="comma-separated N (default 100000,1000000)")
    parser.add_argument("--dists", default="uniform,blobs,sphere")
    parser.add_argument("--systems", default="", help="comma-separated: versa,starpu,fmm3d")
    parser.add_argument("--max-seconds", type=float,
                        help="skip a measurement whose one evaluation is predicted to take longer,"
                             " and take fewer repetitions where they would (default 150; quick 60)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    sizes = parse_sizes(args.sizes) if args.sizes else (
        [10000, 100000] if args.quick else [100000, 1000000])
    if args.max_seconds is None:
        args.max_seconds = 60 if args.quick else 150
    systems = make_systems(args)
    for s in systems:
        if s.missing:
            print(f"# {s.name}: left out: {s.missing}", flush=True)

    data = Path(args.build) / "fmm-data"
    data.mkdir(parents=True, exist_ok=True)
    runs = []
    for dist in args.dists.split(","):
        for n in sizes:
            case = Case(dist, n, args.seed, data / f"{dist}-{n}.points", data / f"{dist}-{n}.ref")
            # Fresh files each time: the generator or the direct sum may have changed.
            for path in (case.points, case.reference):
                path.unlink(missing_ok=True)
            first = len(runs)
            for system in systems:
                for eps in system.eps:
                    run_one(system, case, eps, args, runs)
            print_table(case, runs[first:])
            for path in (case.points, case.reference):
                path.unlink(missing_ok=True)
    print_summary(runs, systems)


if __name__ == "__main__":
    main()
