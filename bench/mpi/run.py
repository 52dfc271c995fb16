#!/usr/bin/env python3
"""The distributed benchmark: Versa's distributed Cholesky and FMM against StarPU-MPI and against
Versa on one rank, the cost of a pruned task, and the distributed fuzzer. Run through
`bench/run mpi`, which builds the programs.

    run.py --build DIR --tests-build DIR [--sizes N,...] [--tiles B,...] [--ranks R,...]
           [--reps N] [--quick] [--calibrate N] [--solve trsm|inverse] [--fmm-points N]
           [--fmm-starpu-sched prio]

For each size, tile and rank count R, each repetition runs, one after the other (interleaved, so
that a change of the machine's load hits every system alike):
  versa        cholesky_mpi on R ranks x 1 worker (mpirun -n R)
  versa-1rank  the single-process `cholesky` example with R workers (--devices cpu): the same
               cores, no MPI
  starpu-mpi   versa-bench-mpi-starpu on R ranks x 1 worker, scheduler dmda (--starpu-sched)
and the table gives the median GFLOP/s (n^3/3 flops over the time from the first submission to
the end) and the ratios of the medians (--solve inverse: every system solves each panel through
L(k,k)^-1, and the RESULT lines say ",solve=inverse"); a second table the peak resident memory
of the largest rank of versa and starpu-mpi (each rank prints its own), where each rank holds
its own tiles. StarPU's dmda reads history-based models: before the repetitions, --calibrate
runs of each configuration (STARPU_CALIBRATE=1, not timed) fill them, and the timed runs load
them from STARPU_HOME. Then the FMM (--fmm-points uniform points, eps 1e-6): fmm_mpi on R ranks
x 1 worker and on 1 rank x R workers, and its StarPU-MPI twin (versa-bench-mpi-fmm-starpu, the
same groups on the same ranks, scheduler prio: one worker per rank, which takes its tasks by
priority as Versa's does) on R ranks x 1 worker, all under `mpirun --bind-to none` (mpirun binds
a lone rank to one core otherwise), interleaved the same way, in seconds from the tree to the
results gathered on rank 0. Then, per rank count, the cost of a pruned task
(versa-bench-mpi-submit) and the distributed fuzzer (versa_mpi_tests filtered to
DistributedFuzz, each rank writing its own gtest XML report: a seed passes when it passed on
every rank). Only the Python standard library is needed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

RESULT = re.compile(r"^RESULT bench=(\S+) system=(\S+) param=(\S+) metric=(\S+) value=(\S+) "
                    r"unit=(\S+)\s*$", re.MULTILINE)
SYSTEMS = ("versa", "versa-1rank", "starpu-mpi")

# Shared memory and loopback only, allowed as root, more ranks than cores: as the tests run.
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}


def mpirun(ranks):
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader",
            "-n", str(ranks)]


def run(command, env=None, timeout=900):
    """Runs a command and returns its stdout; fails loudly with its output when it fails."""
    full_env = dict(os.environ, **MPI_ENV, **(env or {}))
    p = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"run.py: {' '.join(command)} exited with {p.returncode}")
    return p.stdout


def result_value(output, bench):
    for m in RESULT.finditer(output):
        if m.group(1) == bench:
            return float(m.group(5))
    raise SystemExit(f"run.py: no RESULT bench={bench} line in:\n{output}")


def cholesky_command(build, system, n, tile, ranks, sched, solve):
    size = ["--n", str(n), "--tile", str(tile), "--solve", solve]
    if system == "versa":
        return mpirun(ranks) + [str(build / "examples/cholesky/cholesky_mpi"), *size]
    if system == "versa-1rank":
        return [str(build / "examples/cholesky/cholesky"), *size, "--workers", str(ranks),
                "--devices", "cpu", "--repeat", "1"]
    return mpirun(ranks) + [str(build / "bench/versa-bench-mpi-starpu"), *size,
                            "--sched", sched]


RESIDENT = re.compile(r"([0-9.]+) MiB resident at most")


def gflops(build, system, n, tile, ranks, sched, solve):
    """GFLOP/s, and the peak resident memory of the largest rank in MiB (None for one process)."""
    out = run(cholesky_command(build, system, n, tile, ranks, sched, solve))
    if system == "versa-1rank":
        return result_value(out, "cholesky"), None
    peaks = [float(m.group(1)) for m in RESIDENT.finditer(out)]
    if len(peaks) != ranks:
        raise SystemExit(f"run.py: {ranks} 'MiB resident at most' lines expected in:\n{out}")
    return result_value(out, "mpi-cholesky"), max(peaks)


def cholesky_table(args, build, configs):
    for n, tile, ranks in configs:  # StarPU's models, filled before any timed run
        for _ in range(args.calibrate):
            run(cholesky_command(build, "starpu-mpi", n, tile, ranks, args.starpu_sched,
                                 args.solve),
                env={"STARPU_CALIBRATE": "1"})
    samples, peaks = {}, {}
    for rep in range(args.reps):
        for n, tile, ranks in configs:
            for system in SYSTEMS:
                value, peak = gflops(build, system, n, tile, ranks, args.starpu_sched,
                                     args.solve)
                samples.setdefault((n, tile, ranks, system), []).append(value)
                if peak is not None:
                    peaks.setdefault((n, tile, ranks, system), []).append(peak)
                print(f"# rep {rep + 1}/{args.reps} n={n} tile={tile} ranks={ranks} "
                      f"{system}: {value:.2f} GFLOP/s" +
                      (f", {peak:.0f} MiB at most on a rank" if peak is not None else ""),
                      file=sys.stderr, flush=True)
    print(f"\nDistributed Cholesky, GFLOP/s (median of {args.reps}, interleaved); "
          "versa and starpu-mpi: R ranks x 1 worker; versa-1rank: 1 process x R workers; "
          f"StarPU scheduler {args.starpu_sched}; panels solved by {args.solve}")
    print(f"{'n':>6} {'tile':>5} {'R':>2} {'versa':>8} {'versa-1rank':>12} {'starpu-mpi':>11} "
          f"{'versa/1rank':>12} {'versa/starpu-mpi':>17}")
    for n, tile, ranks in configs:
        med = {s: statistics.median(samples[(n, tile, ranks, s)]) for s in SYSTEMS}
        print(f"{n:>6} {tile:>5} {ranks:>2} {med['versa']:>8.2f} {med['versa-1rank']:>12.2f} "
              f"{med['starpu-mpi']:>11.2f} {med['versa'] / med['versa-1rank']:>12.2f} "
              f"{med['versa'] / med['starpu-mpi']:>17.2f}")
    print(f"\nPeak resident memory of the largest rank, MiB (median of {args.reps}; each process "
          "also holds what MPI and OpenBLAS take before any tile: the matrix's share is the rest)")
    print(f"{'n':>6} {'tile':>5} {'R':>2} {'versa':>8} {'starpu-mpi':>11} {'matrix':>8}")
    for n, tile, ranks in configs:
        med = {s: statistics.median(peaks[(n, tile, ranks, s)]) for s in ("versa", "starpu-mpi")}
        print(f"{n:>6} {tile:>5} {ranks:>2} {med['versa']:>8.0f} {med['starpu-mpi']:>11.0f} "
              f"{n * n * 8 / 2**20:>8.0f}")
    for n, tile, ranks in configs:
        for system in SYSTEMS:
            r, w = (1, ranks) if system == "versa-1rank" else (ranks, 1)
            param = f"n={n},tile={tile},ranks={r},workers={w}" + (
                ",solve=inverse" if args.solve == "inverse" else "")
            print(f"RESULT bench=mpi-cholesky system={system} param={param} metric=gflops "
                  f"value={statistics.median(samples[(n, tile, ranks, system)]):.6g} "
                  "unit=GFLOP/s")
            if (n, tile, ranks, system) in peaks:
                print(f"RESULT bench=mpi-cholesky system={system} param={param} "
                      "metric=peak_resident_mib "
                      f"value={statistics.median(peaks[(n, tile, ranks, system)]):.6g} unit=MiB")


FMM_SYSTEMS = ("versa", "versa-1rank", "starpu-mpi")


def fmm_seconds(build, system, points, ranks, sched):
    """Seconds from the tree to the gathered results: R ranks x 1 worker, or 1 rank x R."""
    if system == "versa-1rank":
        r, program = 1, [str(build / "examples/fmm/fmm_mpi"), "--workers", str(ranks)]
    elif system == "versa":
        r, program = ranks, [str(build / "examples/fmm/fmm_mpi")]
    else:
        r, program = ranks, [str(build / "bench/versa-bench-mpi-fmm-starpu"), "--sched", sched]
    out = run(mpirun(r)[:1] + ["--bind-to", "none"] + mpirun(r)[1:] + program +
              ["--n", str(points)])
    return result_value(out, "mpi-fmm")


def fmm_table(args, build):
    samples = {}
    for rep in range(args.reps):
        for ranks in args.ranks:
            for system in FMM_SYSTEMS:
                value = fmm_seconds(build, system, args.fmm_points, ranks,
                                    args.fmm_starpu_sched)
                samples.setdefault((ranks, system), []).append(value)
                print(f"# rep {rep + 1}/{args.reps} fmm ranks={ranks} {system}: {value:.3f} s",
                      file=sys.stderr, flush=True)
    print(f"\nDistributed FMM, {args.fmm_points} uniform points, eps 1e-6, seconds (median of "
          f"{args.reps}, interleaved); versa and starpu-mpi: R ranks x 1 worker; versa-1rank: "
          f"1 rank x R workers; StarPU scheduler {args.fmm_starpu_sched}")
    print(f"{'R':>2} {'versa':>8} {'versa-1rank':>12} {'starpu-mpi':>11} {'1rank/versa':>12} "
          f"{'starpu-mpi/versa':>17}")
    for ranks in args.ranks:
        med = {s: statistics.median(samples[(ranks, s)]) for s in FMM_SYSTEMS}
        print(f"{ranks:>2} {med['versa']:>8.3f} {med['versa-1rank']:>12.3f} "
              f"{med['starpu-mpi']:>11.3f} {med['versa-1rank'] / med['versa']:>12.2f} "
              f"{med['starpu-mpi'] / med['versa']:>17.2f}")
    for ranks in args.ranks:
        for system in FMM_SYSTEMS:
            r, w = (1, ranks) if system == "versa-1rank" else (ranks, 1)
            print(f"RESULT bench=mpi-fmm system={system} "
                  f"param=points={args.fmm_points},ranks={r},workers={w} metric=seconds "
                  f"value={statistics.median(samples[(ranks, system)]):.6g} unit=s")


def fuzz_passed(tests_build, ranks, tasks):
    """Runs the distributed fuzzer on `ranks` ranks; returns (passed, programs)."""
    binary = tests_build / "tests/versa_mpi_tests"
    with tempfile.TemporaryDirectory() as reports:
        # Each rank writes its own report (Open MPI gives each its rank in the environment).
        script = ('exec "$0" --gtest_filter="Seeds/DistributedFuzz.*" '
                  f'--gtest_output="xml:{reports}/rank_$OMPI_COMM_WORLD_RANK.xml"')
        env = {"VERSA_MPI_FUZZ_TASKS": str(tasks)} if tasks else {}
        p = subprocess.run(mpirun(ranks) + ["bash", "-c", script, str(binary)],
                           env=dict(os.environ, **MPI_ENV, **env), capture_output=True,
                           text=True, timeout=1800)
        verdicts = {}  # seed -> passed on every rank so far
        for rank in range(ranks):
            path = Path(reports) / f"rank_{rank}.xml"
            if not path.exists():
                sys.stderr.write(p.stdout + p.stderr)
                raise SystemExit(f"run.py: the fuzzer wrote no report for rank {rank}")
            for case in ElementTree.parse(path).iter("testcase"):
                ok = case.find("failure") is None and case.get("result", "completed") == "completed"
                name = case.get("name")
                verdicts[name] = verdicts.get(name, True) and ok
        return sum(verdicts.values()), len(verdicts)


def distributed_layer(args, build, tests_build):
    print("\nThe distributed layer")
    for ranks in args.ranks:
        out = run(mpirun(ranks) + [str(build / "bench/versa-bench-mpi-submit"), "--reps",
                                   str(args.reps)])
        ns = result_value(out, "mpi-submit")
        print(f"{ranks} ranks: {ns:.1f} ns per pruned task (median of {args.reps})")
        print(f"RESULT bench=mpi-submit system=versa param=ranks={ranks} "
              f"metric=ns_per_pruned_task value={ns:.6g} unit=ns")
    for ranks in args.ranks:
        passed, programs = fuzz_passed(tests_build, ranks, args.fuzz_tasks)
        print(f"{ranks} ranks: {passed} of {programs} fuzzer programs passed on every rank")
        print(f"RESULT bench=mpi-fuzz system=versa param=ranks={ranks} "
              f"metric=programs_passed value={passed} unit=programs")


def numbers(text):
    return [int(v) for v in text.split(",") if v]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--tests-build", type=Path, required=True)
    parser.add_argument("--sizes", type=numbers, help="matrix sizes (4096; --quick 2048)")
    parser.add_argument("--tiles", type=numbers, help="tile sizes (512; --quick 256)")
    parser.add_argument("--ranks", type=numbers, default=[2], help="rank counts, e.g. 2,4")
    parser.add_argument("--reps", type=int, help="repetitions (5; --quick 1)")
    parser.add_argument("--calibrate", type=int,
                        help="untimed StarPU runs per configuration before the timed ones "
                             "(3; --quick 1)")
    parser.add_argument("--starpu-sched", default="dmda", help="StarPU-MPI's scheduler")
    parser.add_argument("--solve", choices=("trsm", "inverse"), default="trsm",
                        help="how every Cholesky solves its panels: trsm, or through L(k,k)^-1")
    parser.add_argument("--fmm-points", type=int, help="FMM points (200000; --quick 50000)")
    parser.add_argument("--fmm-starpu-sched", default="prio",
                        help="the StarPU-MPI FMM's scheduler (one CPU worker per rank)")
    parser.add_argument("--quick", action="store_true",
                        help="smaller defaults, and 2000 tasks per fuzzer program")
    args = parser.parse_args()
    quick = args.quick
    args.sizes = args.sizes or ([2048] if quick else [4096])
    args.tiles = args.tiles or ([256] if quick else [512])
    args.reps = args.reps or (1 if quick else 5)
    args.calibrate = args.calibrate if args.calibrate is not None else (1 if quick else 3)
    args.fmm_points = args.fmm_points or (50000 if quick else 200000)
    args.fuzz_tasks = 2000 if quick else 0  # 0: the fuzzer's own count (10^4 per program)
    if min(args.ranks) < 2:
        raise SystemExit("run.py: --ranks needs at least two ranks")
    args.build, args.tests_build = args.build.resolve(), args.tests_build.resolve()
    configs = [(n, t, r) for n in args.sizes for t in args.tiles for r in args.ranks]
    cholesky_table(args, args.build, configs)
    fmm_table(args, args.build)
    distributed_layer(args, args.build, args.tests_build)


if __name__ == "__main__":
    main()
