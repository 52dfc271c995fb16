#!/usr/bin/env python3
"""scripts/trace-compare on small made-up traces, whose figures are worked out by hand: the GPU's
busy time as the union of two kernel tracks that overlap, its idle time, mean concurrency and
gaps; the per-type counts and durations; the copies; the device worker's reservations and
launches; the potrf starts; --window and --last-run; the warning for tasks placed on a CPU beside
a GPU; exit 2 for a trace it cannot read.

    python3 tests/scripts/trace_compare_test.py [-v]

Standard library only; runs from any directory."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = (Path(__file__).resolve().parent / "../../scripts/trace-compare").resolve()
# Timestamps do not start at 0 in a real trace: every figure must be relative to the span.
T0 = 5000.0
DEVICE = "cuda:0 (Fake GPU)"


def meta(pid, tid, kind, name):
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def tracks():
    return [meta(0, 0, "process_name", "host"), meta(0, 0, "thread_name", "cpu worker 0"),
            meta(1, 0, "process_name", DEVICE),
            meta(1, 0, "thread_name", f"{DEVICE} kernels, stream 0"),
            meta(1, 1, "thread_name", f"{DEVICE} kernels, high-priority stream 1"),
            meta(1, 2, "thread_name", f"{DEVICE} copies to device"),
            meta(1, 3, "thread_name", "copies to host"),
            meta(1, 4, "thread_name", f"{DEVICE} reduction flushes"),
            meta(1, 5, "thread_name", f"{DEVICE} worker thread")]


def starpu_tracks():
    """The tracks of bench/common/starpu_task_trace.hpp's traces: no copies, a track a worker."""
    return [meta(0, 0, "process_name", "host"), meta(0, 0, "thread_name", "cpu worker 0"),
            meta(1, 0, "process_name", "cuda:0 (StarPU)"),
            meta(1, 0, "thread_name", "kernels, worker 0"),
            meta(1, 1, "thread_name", "kernels, worker 1")]


CPU, STREAM, HIGH, TO_DEVICE, TO_HOST, FLUSHES, WORKER = (
    (0, 0), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5))


def piece(track, name, start, end, cat="task"):
    """A slice from start to end, in us after T0."""
    return {"name": name, "ph": "X", "pid": track[0], "tid": track[1], "cat": cat,
            "ts": T0 + start, "dur": end - start}


# Kernel union: [300,600] [800,1100] [1120,1220] [1300,1450] = 850 us of a 1500 us span; the
# kernels' own durations add to 970 us. Gaps: 200 and 80 us (the 20 us one is under 50).
ONE_RUN = tracks() + [
    piece(TO_DEVICE, "to device", 0, 100, "copy"),
    piece(TO_DEVICE, "to device", 50, 120, "copy"),
    piece(CPU, "potrf A(0,0)", 100, 300),
    # The device's worker thread: two reservations (10 and 30 us), two launches (20 and 40 us).
    piece(WORKER, "reserve", 150, 160, "worker"),
    piece(WORKER, "reserve", 170, 200, "worker"),
    piece(WORKER, "launch", 260, 280, "worker"),
    piece(WORKER, "launch", 290, 330, "worker"),
    piece(STREAM, "trsm", 300, 500),
    piece(HIGH, "potrf A(1,1)", 400, 600),
    piece(STREAM, "gemm", 800, 1100),
    piece(HIGH, "gemm", 1120, 1220),
    piece(STREAM, "gemm", 1150, 1170),
    piece(HIGH, "syrk", 1300, 1450),
    piece(TO_HOST, "to host", 1400, 1500, "copy"),
    piece(CPU, "copy home", 1450, 1460),
    # Neither a flush, an eviction nor the counter is a task: outside the span.
    piece(FLUSHES, "flush", 1500, 3000, "flush"),
    {"name": "evict", "ph": "i", "pid": 1, "tid": 2, "ts": T0 + 4000, "s": "t"},
    {"name": "ready tasks", "ph": "C", "pid": 0, "tid": 0, "ts": T0 - 100, "args": {"ready": 1}},
]

# A factorisation run twice (--repeat 2), traced as StarPU's are: the second starts with its potrf
# A(0,0) at 1000 us; the task just before it is no part of it.
TWO_RUNS = starpu_tracks() + [
    piece(STREAM, "potrf A(0,0)", 0, 100),
    piece(STREAM, "gemm", 100, 200),
    piece(HIGH, "potrf A(1,1)", 200, 250),
    piece(CPU, "copy home", 990, 1000),
    piece(STREAM, "potrf A(0,0)", 1000, 1050),
    piece(STREAM, "trsm", 1060, 1100),
    piece(HIGH, "potrf A(1,1)", 1100, 1130),
    piece(CPU, "gemm", 1130, 1200),
]


class TraceCompare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.one = cls.write("one-run.json", {"displayTimeUnit": "ms", "traceEvents": ONE_RUN})
        cls.two = cls.write("two-runs.json", {"displayTimeUnit": "ms", "traceEvents": TWO_RUNS})

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    @classmethod
    def write(cls, name, content):
        path = os.path.join(cls.dir.name, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def compare(self, *args, status=0):
        # From another directory than the repository's: the script depends on neither.
        done = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=self.dir.name,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, status, done.stderr)
        return done.stdout if status == 0 else done.stderr

    def row(self, out, metric):
        """The values of the table's row for metric (cells are two or more spaces apart)."""
        for line in out.splitlines():
            cells = re.split(r"\s{2,}", line.strip())
            if cells[0] == metric:
                return cells[1:]
        raise AssertionError(f"no row {metric!r} in:\n{out}")

    def test_gpu_busy_is_the_union_of_the_kernel_tracks(self):
        out = self.compare(self.one)
        self.assertEqual(self.row(out, "span ms"), ["1.500"])
        self.assertEqual(self.row(out, "gpu busy ms"), ["0.850"])
        self.assertEqual(self.row(out, "gpu idle ms"), ["0.650"])
        self.assertEqual(self.row(out, "mean concurrency"), ["1.14"])
        self.assertEqual(self.row(out, "idle gaps > 50 us"), ["2"])
        self.assertEqual(self.row(out, "idle in gaps > 50 us ms"), ["0.280"])
        self.assertEqual(self.row(out, "start to first kernel ms"), ["0.300"])
        self.assertEqual(self.row(out, "last kernel to end ms"), ["0.050"])

    def test_kernels_by_type(self):
        out = self.compare(self.one)
        self.assertEqual(self.row(out, "gemm kernels"), ["3"])
        self.assertEqual(self.row(out, "gemm mean ms"), ["0.140"])
        self.assertEqual(self.row(out, "gemm median ms"), ["0.100"])
        self.assertEqual(self.row(out, "gemm sum ms"), ["0.420"])
        self.assertEqual(self.row(out, "trsm kernels"), ["1"])
        self.assertEqual(self.row(out, "trsm mean ms"), ["0.200"])
        self.assertEqual(self.row(out, "syrk median ms"), ["0.150"])
        # The potrf on the CPU worker is no kernel.
        self.assertEqual(self.row(out, "potrf kernels"), ["1"])
        self.assertNotIn("flush", out)

    def test_cpu_tasks_and_the_placement_warning(self):
        out = self.compare(self.one)
        self.assertEqual(self.row(out, "potrf on cpu"), ["1"])
        self.assertEqual(self.row(out, "copy on cpu"), ["1"])
        self.assertIn("warning: one-run: potrf 1 ran on CPU tracks", out)

    def test_copies_per_track(self):
        out = self.compare(self.one)
        # Of the device's name, which prefixes its track names, the rows keep the first word.
        self.assertEqual(self.row(out, "cuda:0 copies to device count"), ["2"])
        self.assertEqual(self.row(out, "cuda:0 copies to device busy ms"), ["0.120"])
        self.assertEqual(self.row(out, "copies to host count"), ["1"])
        self.assertEqual(self.row(out, "copies to host busy ms"), ["0.100"])

    def test_the_worker_threads_reservations_and_launches(self):
        out = self.compare(self.one)
        self.assertEqual(self.row(out, "cuda:0 worker thread: reserve count"), ["2"])
        self.assertEqual(self.row(out, "cuda:0 worker thread: reserve mean ms"), ["0.020"])
        self.assertEqual(self.row(out, "cuda:0 worker thread: reserve max ms"), ["0.030"])
        self.assertEqual(self.row(out, "cuda:0 worker thread: launch sum ms"), ["0.060"])
        # Not tasks: no type of their own, nothing on a CPU.
        self.assertNotIn("launch kernels", out)
        self.assertNotIn("launch on cpu", out)

    def test_no_placement_warning_without_a_gpu(self):
        cpu_only = self.write("cpu-only.json", {"traceEvents": tracks() + [
            piece(CPU, "potrf A(0,0)", 0, 100), piece(CPU, "gemm", 100, 300)]})
        out = self.compare(cpu_only)
        self.assertEqual(self.row(out, "potrf on cpu"), ["1"])
        self.assertNotIn("warning", out)

    def test_potrf_starts_on_one_row(self):
        out = self.compare(self.one)
        self.assertEqual(self.row(out, "potrf starts (ms)"), ["0.100 0.400"])

    def test_window_keeps_the_slices_that_start_in_it(self):
        # potrf A(1,1), the gemm from 800 and both from 1120 and 1150: a span of 400 to 1220 us.
        out = self.compare(self.one, "--window", "0.35", "1.2")
        self.assertEqual(self.row(out, "span ms"), ["0.820"])
        self.assertEqual(self.row(out, "gpu busy ms"), ["0.600"])
        self.assertEqual(self.row(out, "gpu idle ms"), ["0.220"])
        self.assertEqual(self.row(out, "idle gaps > 50 us"), ["1"])
        self.assertEqual(self.row(out, "idle in gaps > 50 us ms"), ["0.200"])
        self.assertEqual(self.row(out, "gemm kernels"), ["3"])
        self.assertNotIn("trsm", out)
        self.assertNotIn("copies", out)
        self.assertNotIn("warning", out)
        # Still from the trace's start, as without a window.
        self.assertEqual(self.row(out, "potrf starts (ms)"), ["0.400"])

    def test_last_run(self):
        whole = self.compare(self.two)
        self.assertEqual(self.row(whole, "span ms"), ["1.200"])
        self.assertEqual(self.row(whole, "potrf kernels"), ["4"])
        self.assertEqual(self.row(whole, "potrf starts (ms)"), ["0.000 0.200"])
        self.assertEqual(self.row(whole, "copy on cpu"), ["1"])

        last = self.compare(self.two, "--last-run")
        self.assertEqual(self.row(last, "span ms"), ["0.200"])
        self.assertEqual(self.row(last, "gpu busy ms"), ["0.120"])
        self.assertEqual(self.row(last, "potrf kernels"), ["2"])
        self.assertEqual(self.row(last, "potrf mean ms"), ["0.040"])
        self.assertEqual(self.row(last, "trsm kernels"), ["1"])
        self.assertEqual(self.row(last, "gemm on cpu"), ["1"])
        self.assertEqual(self.row(last, "potrf starts (ms)"), ["0.000 0.100"])
        self.assertNotIn("copy on cpu", last)
        self.assertIn("warning: two-runs: gemm 1 ran on CPU tracks", last)

        # The window is taken within the last run.
        window = self.compare(self.two, "--last-run", "--window", "0.05", "1")
        self.assertEqual(self.row(window, "span ms"), ["0.140"])
        self.assertEqual(self.row(window, "potrf starts (ms)"), ["0.100"])

    def test_several_traces_side_by_side(self):
        out = self.compare(self.one, self.two)
        self.assertEqual(out.splitlines()[0].split(), ["one-run", "two-runs"])
        self.assertEqual(self.row(out, "span ms"), ["1.500", "1.200"])
        self.assertEqual(self.row(out, "gpu busy ms"), ["0.850", "0.370"])
        self.assertEqual(self.row(out, "syrk kernels"), ["1", "0"])
        self.assertEqual(self.row(out, "syrk mean ms"), ["0.150", "-"])
        self.assertEqual(self.row(out, "cuda:0 copies to device count"), ["2", "-"])
        self.assertEqual(self.row(out, "cuda:0 copies to device busy ms"), ["0.120", "-"])
        self.assertEqual(self.row(out, "potrf 0 start ms"), ["0.100", "0.000"])
        self.assertEqual(self.row(out, "potrf 1 start ms"), ["0.400", "0.200"])
        self.assertNotIn("potrf starts (ms)", out)
        self.assertIn("warning: one-run: potrf 1", out)
        self.assertIn("warning: two-runs: gemm 1", out)

    def test_unreadable_traces_exit_2_naming_the_file(self):
        missing = os.path.join(self.dir.name, "missing.json")
        self.assertIn(missing, self.compare(self.one, missing, status=2))
        not_json = self.write("not-json.json", "{ not json")
        self.assertIn(not_json, self.compare(not_json, status=2))
        empty = self.write("empty.json", {"traceEvents": tracks() + [
            piece(FLUSHES, "flush", 0, 10, "flush"),
            {"name": "evict", "ph": "i", "pid": 1, "tid": 2, "ts": T0, "s": "t"}]})
        self.assertIn(f"{empty}: no task, copy or worker slices", self.compare(empty, status=2))
        self.assertIn(self.one, self.compare(self.one, "--window", "5", "6", status=2))


if __name__ == "__main__":
    unittest.main()
