"""The saved benchmark results that bench/report reads: the results files of bench/results (a
`# key: value` header, then a run's output with its RESULT lines), the most recent figure of
each benchmark, and what the tables and the plots both need to read them."""
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

RESULT = re.compile(r"^RESULT bench=(\S+) system=(\S+) param=(\S+) metric=(\S+) value=(\S+) "
                    r"unit=(\S+)\s*$")
HEADER = re.compile(r"^# ([a-z][a-z-]*): (.*)$")

@dataclass
class Run:
    """One results file: its header (`# key: value` lines) and its RESULT lines."""
    path: Path
    header: dict
    results: list = field(default_factory=list)

    @property
    def date(self):
        return self.header.get("date", "")

    @property
    def on_gpu_machine(self):
        return self.header.get("gpu", "none") not in ("", "none")


@dataclass(frozen=True)
class Result:
    bench: str
    system: str
    param: str
    metric: str
    value: float
    unit: str
    run: Run = field(compare=False, hash=False, repr=False)

    @property
    def key(self):
        return (self.bench, self.system, self.param, self.metric)


def read_run(path):
    """A results file: the `# key: value` lines that open it, then the RESULT lines (those with
    a finite value) of the output that follows."""
    lines = path.read_text(errors="replace").splitlines()
    run = Run(path, {})
    body = 0
    while body < len(lines) and HEADER.match(lines[body]):
        key, value = HEADER.match(lines[body]).groups()
        run.header[key] = value.strip()
        body += 1
    for line in lines[body:]:
        m = RESULT.match(line)
        if m and math.isfinite(float(m.group(5))):
            run.results.append(Result(*m.group(1, 2, 3, 4), float(m.group(5)), m.group(6), run))
    return run


def read_runs(directory):
    """Every results file of `directory`, oldest first (by the date in its header)."""
    runs = [read_run(p) for p in sorted(Path(directory).glob("*.txt"))]
    return sorted((r for r in runs if r.results), key=lambda r: (r.date, r.path.name))


def latest(runs):
    """The most recent result of each (bench, system, param, metric) among `runs`."""
    kept = {}
    for run in runs:  # oldest first: a later run replaces
        for result in run.results:
            kept[result.key] = result
    return list(kept.values())


def param_fields(param):
    """"n=4096,tile=256,devices=cpu,gpu" as {"n": "4096", "tile": "256", "devices": "cpu,gpu"}:
    a piece without "=" continues the value before it."""
    fields, last = {}, None
    for piece in param.split(","):
        if "=" in piece or last is None:
            last, _, value = piece.partition("=")
            fields[last] = value
        else:
            fields[last] += "," + piece
    return fields


def natural_key(text):
    """A sort key that orders the numbers in a text by value: "n=512" before "n=1024"."""
    parts = re.split(r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)", text)
    return [(0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts)]



def order_systems(systems, reference):
    """The reference system first, then Versa's other variants, then the others, each in their
    order of appearance."""
    def rank(system):
        name = system[0] if isinstance(system, tuple) else system
        return (system != reference, not name.startswith("versa"))
    return sorted(dict.fromkeys(systems), key=rank)

def series_label(system, devices):
    return system if devices in ("", "cpu") else f"{system} ({devices})"

def fmm_at_error(results, bound):
    """For each (system, devices, dist, n): the quickest evaluation whose achieved relative
    potential error is at most `bound`, as (seconds, eps, error, run, variant), the variant the
    run's other param fields (placement, leaf, group, overlap; "" for none). Time and error come
    from the same run."""
    runs = {}
    for r in results:
        if r.bench == "fmm" and r.metric in ("seconds", "rel_error_potential"):
            runs.setdefault((r.system, r.param), {})[r.metric] = r
    best = {}
    for (system, param), metrics in runs.items():
        seconds, error = metrics.get("seconds"), metrics.get("rel_error_potential")
        if not seconds or not error or seconds.run is not error.run or error.value > bound:
            continue
        f = param_fields(param)
        key = (system, f.get("devices", "cpu"), f.get("dist", "?"), int(f.get("n", 0)))
        variant = ",".join(f"{k}={v}" for k, v in f.items()
                           if k not in ("n", "dist", "eps", "devices"))
        if key not in best or seconds.value < best[key][0]:
            best[key] = (seconds.value, f.get("eps", "?"), error.value, seconds.run, variant)
    return best
