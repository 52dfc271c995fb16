#!/usr/bin/env python3
"""The soak test: Versa's fuzzers in a loop for a given time, then one large program, each
program checked against its sequential run. Run through `bench/run soak [--minutes M]`, which
builds the programs.

    run.py --build DIR --tests-build DIR [--minutes M] [--big-tasks N] [--sanitize]

The M minutes are shared out: 30 % to the distributed fuzzer on 2 ranks, first (the tests'
versa_mpi_tests, as `bench/run mpi` runs it, with 2000-task programs, again and again: its
programs pass when they pass on every rank; the resident memory is the largest of a rank's, by
the end of the first run and by the end of the last), then 35 % to the CPU fuzz programs and 35 %
to the device fuzz programs (versa-bench-soak --kind cpu|devices: each program under a new
runtime in one process, the resident memory taken after the first and the last). Then one program of --big-tasks tasks (10^6) over
10^4 handles on 2 CPU workers and 2 emulated devices (versa-bench-soak --kind big). Prints the
RESULT lines of each part: programs_passed and programs_failed, rss_first_mib and rss_last_mib
per kind (cpu, devices, mpi). Exits non-zero when a program failed or memory grew by more than
a tenth. Only the Python standard library is needed.

With --sanitize the programs are those built with ThreadSanitizer and UndefinedBehaviorSanitizer
(`bench/run soak --sanitize` builds them): the first report ends the program, which counts as
failed, so that the fuzzers' programs look for races and undefined behaviour beyond the fixed
seeds of the tests. Memory is not judged then (the sanitizer keeps records of every thread that
ran), and the RESULT lines' parameters say sanitizer=thread.
"""
import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def mpi_bench():
    """bench/mpi/run.py, for its way of running the distributed fuzzer."""
    spec = importlib.util.spec_from_file_location("mpi_bench", HERE.parent / "mpi/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def results(text):
    """The RESULT lines of `text` as {(param, metric): value}."""
    found = {}
    for line in text.splitlines():
        if not line.startswith("RESULT "):
            continue
        fields = dict(item.split("=", 1) for item in line.split()[1:])
        param = line.split(" param=")[1].split(" metric=")[0]
        found[(param, fields["metric"])] = float(fields["value"])
    return found


def labelled(text, label):
    """`text` with `label` (",sanitizer=thread", or "") added to each RESULT line's parameters."""
    return text.replace(" metric=", f"{label} metric=") if label else text


def run_soak(build, arguments, label):
    p = subprocess.run([str(build / "bench/versa-bench-soak"), *arguments], capture_output=True,
                       text=True)
    out = labelled(p.stdout, label)
    sys.stdout.write(out)
    sys.stderr.write(p.stderr)
    return p.returncode, results(out)


def children_peak_mib():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def soak_mpi(tests_build, seconds, label):
    """The distributed fuzzer on 2 ranks, run after run for `seconds`."""
    fuzz = mpi_bench().fuzz_passed
    start = time.monotonic()
    passed = failed = runs = 0
    rss_first = rss_last = 0.0
    while runs == 0 or time.monotonic() - start < seconds:
        before = children_peak_mib()
        ok, programs = fuzz(tests_build, 2, 2000)
        passed += ok
        failed += programs - ok
        runs += 1
        # The peak of every child so far: the first run's, then whether a later one went higher.
        rss_last = max(children_peak_mib(), before)
        if runs == 1:
            rss_first = rss_last
    print(f"soak mpi: {passed} programs passed, {failed} failed in {runs} runs on 2 ranks; "
          f"largest resident {rss_first:.1f} MiB in the first run, {rss_last:.1f} MiB by the last")
    for metric, value, unit in (("programs_passed", passed, "programs"),
                                ("programs_failed", failed, "programs"),
                                ("rss_first_mib", rss_first, "MiB"),
                                ("rss_last_mib", rss_last, "MiB")):
        print(f"RESULT bench=soak system=versa param=kind=mpi{label} metric={metric} "
              f"value={value:.6g} unit={unit}")
    param = f"kind=mpi{label}"
    return {(param, "programs_failed"): failed, (param, "rss_first_mib"): rss_first,
            (param, "rss_last_mib"): rss_last}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--tests-build", type=Path, required=True)
    parser.add_argument("--minutes", type=float, default=10.0, help="time for the fuzzers")
    parser.add_argument("--big-tasks", type=int, default=1000000,
                        help="tasks of the final program")
    parser.add_argument("--sanitize", action="store_true",
                        help="the programs are built with ThreadSanitizer (see above)")
    args = parser.parse_args()
    if args.minutes <= 0 or args.big_tasks <= 0:
        parser.error("--minutes and --big-tasks must be positive")
    total = args.minutes * 60
    print(f"# soak: {args.minutes:g} minutes of fuzz programs (cpu 35 %, devices 35 %, "
          f"mpi on 2 ranks 30 %), then one program of {args.big_tasks} tasks"
          f"{', under ThreadSanitizer' if args.sanitize else ''}", flush=True)
    label = ",sanitizer=thread" if args.sanitize else ""
    if args.sanitize:
        # As the tests run under the sanitizer (scripts/test, tests/CMakeLists.txt): the first
        # report ends the program; Open MPI, not built with the sanitizer, has its reports
        # suppressed (the suppressions name only its frames).
        os.environ.setdefault(
            "TSAN_OPTIONS", "halt_on_error=1 second_deadlock_stack=1 "
            f"suppressions={HERE.parent.parent / 'tests/mpi/tsan.supp'}")
    # The distributed fuzzer first: its memory is read from the largest child process so far,
    # which must not include the in-process parts' runs.
    found = soak_mpi(args.tests_build, total * 0.30, label)
    status = 0
    for kind, share in (("cpu", 0.35), ("devices", 0.35)):
        code, part = run_soak(args.build, ["--kind", kind, "--seconds",
                                           str(max(1, round(total * share)))], label)
        status |= code
        found.update(part)
    code, _ = run_soak(args.build, ["--kind", "big", "--tasks", str(args.big_tasks)], label)
    status |= code
    for kind in ("cpu", "devices", "mpi"):
        param = f"kind={kind}{label}"
        failed = found.get((param, "programs_failed"), 1)
        first = found.get((param, "rss_first_mib"), 0)
        last = found.get((param, "rss_last_mib"), 0)
        if args.sanitize:
            verdict = "ok" if failed == 0 else "NOT MET"
            print(f"{kind:8} {int(failed)} failed (bar: 0 failed; memory not judged under the "
                  f"sanitizer): {verdict}")
        else:
            verdict = "ok" if failed == 0 and last <= 1.1 * first else "NOT MET"
            print(f"{kind:8} {int(failed)} failed, memory {first:.1f} -> {last:.1f} MiB "
                  f"(bar: 0 failed, last <= 1.1 x first): {verdict}")
        if verdict != "ok":
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
