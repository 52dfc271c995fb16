#!/usr/bin/env python3
"""bench/report on the results files of tests/bench/report_results (made-up figures, chosen so
that each rule shows): the latest figure of each key wins by the date in the file's header, not by
the file's name; ratios to Versa only within one run; an untiled system on every tile row; the
FMM at equal error; a GPU machine's figures in their own section; the plots written. And
scripts/save-results, whose files bench/report reads.

    python3 tests/bench/report_test.py [-v]

Needs a python3 with matplotlib for bench/report (it finds /usr/bin/python3's itself)."""
import os
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "report_results"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_report(results, out):
    subprocess.run([str(REPO / "bench" / "report"), "--results", str(results), "--out", str(out),
                    "--template", str(REPO / "docs" / "performance.md.in")],
                   check=True, capture_output=True, text=True)
    return (Path(out) / "performance.md").read_text()


def section(page, title):
    """The text of the `## title` section of the page."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    if not m:
        raise AssertionError(f"no section {title!r}")
    return m.group(1)


class ReportOnFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.TemporaryDirectory()
        cls.page = run_report(FIXTURE, cls.out.name)

    @classmethod
    def tearDownClass(cls):
        cls.out.cleanup()

    def test_latest_value_by_header_date_and_ratios_only_within_a_run(self):
        cholesky = section(self.page, "Tiled Cholesky")
        self.assertIn("| param | versa | starpu-lws | openblas |", cholesky)
        # versa 12 comes from the later run (named ...-2.txt, which sorts first): no ratios.
        self.assertIn("| n=1024,tile=256,devices=cpu | 12 | 8 | 9 |", cholesky)
        # All three from one run: ratios to versa; openblas (tile=full) on the tile row.
        self.assertIn("| n=2048,tile=256,devices=cpu | 20 | 25 (1.25) | 30 (1.50) |", cholesky)
        self.assertIn("2026-01-01-cholesky-2cpu-2.txt", cholesky)
        self.assertIn("`bench/run cholesky --sizes 1024 --tiles 256 --systems versa`", cholesky)

    def test_gpu_machine_figures_are_apart(self):
        self.assertNotIn("99", section(self.page, "Tiled Cholesky"))
        self.assertNotIn("8192", section(self.page, "Tiled Cholesky"))
        gpu = section(self.page, "On a machine with a GPU")
        self.assertIn("| n=8192,tile=1024,devices=cpu,gpu | 5000 | 6000 (1.20) |", gpu)
        self.assertIn("| n=1024,tile=256,devices=cpu | 99 |  |", gpu)
        self.assertIn("GPU NVIDIA H100 80GB HBM3, 81559 MiB, 580.00", gpu)

    def test_micro_tables(self):
        micro = section(self.page, "CPU runtime micro-benchmarks")
        self.assertIn("| workers=1 | 100 | 50 (0.50) |", micro)
        self.assertIn("| workers=2 | 80 | 120 (1.50) |", micro)
        self.assertIn("| threads=2 | 150 |", micro)
        self.assertIn("| task_us=1 | 0.8 | 0.84 (1.05) |", micro)

    def test_fmm_at_equal_error(self):
        fmm = section(self.page, "Fast multipole method")
        # versa's eps 1e-6 run (1 s) misses the 1e-7 bar; its eps 1e-7 run (1.5 s) makes it.
        self.assertIn("| dist=uniform,n=100000 | 1.5 (eps 1e-07, err 4.0e-08) | "
                      "10 (eps 1e-06, err 5.0e-08) (6.67) |", fmm)
        self.assertIn("6.667", fmm)

    def test_fine_grained_tables(self):
        fine = section(self.page, "Fine-grained tasks: UTS and BOTS")
        self.assertIn("| tree=T3,workers=2 | 1.85 |  | 1.7 (0.92) |", fine)
        self.assertIn("| kernel=fib,workers=2 | 1.5 | 1.2 (0.80) |", fine)

    def test_suites_without_results_say_how_to_measure(self):
        self.assertIn("_No saved results yet (`bench/run --save nbody`)._",
                      section(self.page, "n-body: `add` against `write`"))

    def test_plots_are_written_and_linked(self):
        for name in ("micro", "cholesky", "fmm", "fine-grained", "gpu-cholesky"):
            picture = Path(self.out.name) / "plots" / f"{name}.png"
            self.assertTrue(picture.is_file(), picture)
            self.assertEqual(picture.read_bytes()[:8], PNG_SIGNATURE)
            self.assertIn(f"](plots/{name}.png)", self.page)


class SaveResults(unittest.TestCase):
    def test_a_saved_run_is_read_back(self):
        with tempfile.TemporaryDirectory() as work:
            results = Path(work) / "results"
            line = ("RESULT bench=spawn system=versa param=workers=1 metric=ns_per_task "
                    "value=123.4 unit=ns")
            done = subprocess.run([str(REPO / "scripts" / "save-results"), "micro", "echo", line],
                                  env=dict(os.environ, VERSA_RESULTS_DIR=str(results)),
                                  check=True, capture_output=True, text=True)
            self.assertEqual(done.stdout, line + "\n")  # passed through
            [saved] = results.glob("*-micro-*.txt")
            text = saved.read_text()
            for key in ("date", "host", "cpu", "cores", "memory", "gpu", "os", "commit"):
                self.assertRegex(text, rf"(?m)^# {key}: .+$")
            self.assertIn(f"# command: echo '{line}'\n\n{line}\n", text)
            page = run_report(results, Path(work) / "out")
            self.assertIn("| workers=1 | 123.4 |", page)

    def test_a_run_without_results_keeps_no_file(self):
        with tempfile.TemporaryDirectory() as work:
            done = subprocess.run([str(REPO / "scripts" / "save-results"), "micro", "true"],
                                  env=dict(os.environ, VERSA_RESULTS_DIR=work),
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0)
            self.assertEqual(list(Path(work).iterdir()), [])


if __name__ == "__main__":
    unittest.main()
