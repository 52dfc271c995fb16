"""The plots of the performance page (PNG, matplotlib): Cholesky GFLOP/s against n, FMM time
against N at equal error, UTS/BOTS speedups, spawn and hand-off costs, a colour per system. The
caller (bench/report) has made sure matplotlib can be imported."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from report_results import (fmm_at_error, natural_key, order_systems,  # noqa: E402
                            param_fields, series_label)

# A colour per system, the same in every plot (Versa's blues, StarPU's oranges and reds); other
# systems and series take the remaining colours of tab20 in turn.
SYSTEM_COLOURS = {
    "versa": "#1f77b4", "versa-steady": "#6baed6", "versa-1rank": "#9ecae1",
    "versa-add": "#1f77b4", "versa-write": "#9ecae1",
    "starpu": "#ff7f0e", "starpu-lws": "#ff7f0e", "starpu-eager": "#fdae6b",
    "starpu-dmda": "#d62728", "starpu-dmdas": "#ff9896", "starpu-mpi": "#ff7f0e",
    "openmp": "#2ca02c", "tbb": "#9467bd", "openblas": "#8c564b", "cusolver": "#e377c2",
    "fmm3d": "#bcbd22", "threads": "#7f7f7f", "sequential": "#000000",
}
colours = {}


def colour_of(series):
    """The colour of a system, or of a series such as (system, devices)."""
    if series in SYSTEM_COLOURS:
        return SYSTEM_COLOURS[series]
    if series not in colours:
        spare = [c for c in plt.get_cmap("tab20").colors
                 if matplotlib.colors.to_hex(c) not in SYSTEM_COLOURS.values()]
        colours[series] = spare[len(colours) % len(spare)]
    return colours[series]


def legend(ax):
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def new_figure(panels, width=6.0, height=4.2):
    fig, axes = plt.subplots(1, panels, figsize=(width * panels, height), squeeze=False)
    return fig, list(axes[0])


def save(fig, path):
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def grouped_bars(ax, groups, systems, value):
    """Bars of value(group, system) (None: no bar), a cluster per group, a colour per system."""
    width = min(0.8 / max(len(systems), 1), 0.2)
    for i, system in enumerate(systems):
        xs = [g + (i - (len(systems) - 1) / 2) * width for g in range(len(groups))]
        heights = [value(group, system) for group in groups]
        ax.bar([x for x, h in zip(xs, heights) if h is not None],
               [h for h in heights if h is not None], width, label=system,
               color=colour_of(system))
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30 if len(groups) > 4 else 0, ha="right"
                       if len(groups) > 4 else "center")


def plot_cholesky(results, path, options):
    """GFLOP/s against n, a line per system (its best tile at each n), a panel per devices."""
    best = {}
    for r in results:
        if r.bench == "cholesky" and r.metric == "gflops":
            f = param_fields(r.param)
            key = (f.get("devices", "cpu"), r.system, int(f.get("n", 0)))
            best[key] = max(best.get(key, 0.0), r.value)
    if not best:
        return False
    devices = sorted({d for d, _, _ in best})
    fig, axes = new_figure(len(devices))
    for ax, device in zip(axes, devices):
        for system in order_systems([s for d, s, _ in best if d == device], "versa"):
            points = sorted((n, v) for (d, s, n), v in best.items() if d == device and s == system)
            ax.plot(*zip(*points), marker="o", label=system, color=colour_of(system))
        sizes = sorted({n for d, _, n in best if d == device})
        ax.set(title=f"tiled Cholesky, devices={device}", xlabel="n",
               ylabel="GFLOP/s (best tile per n)", xscale="log", xticks=sizes)
        ax.set_xticklabels([str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        legend(ax)
    save(fig, path)
    return True


def plot_fmm(results, path, options):
    """Seconds against N at equal achieved error, a line per system, a panel per distribution."""
    best = fmm_at_error(results, options.fmm_error)
    if not best:
        return False
    dists = sorted({dist for _, _, dist, _ in best})
    fig, axes = new_figure(len(dists))
    for ax, dist in zip(axes, dists):
        series = order_systems([(s, d) for s, d, di, _ in best if di == dist], ("versa", "cpu"))
        for system, devices in series:
            points = sorted((n, v[0]) for (s, d, di, n), v in best.items()
                            if (s, d, di) == (system, devices, dist))
            ax.plot(*zip(*points), marker="o", label=series_label(system, devices),
                    color=colour_of(system if devices == "cpu" else (system, devices)))
        ax.set(title=f"FMM, {dist}, potential error <= {options.fmm_error:g}", xlabel="N",
               ylabel="seconds", xscale="log", yscale="log")
        legend(ax)
    save(fig, path)
    return True


def speedups_at_most_workers(results, bench, label_field):
    """({(label, system): speedup}, workers) of `bench` at the largest worker count it was run
    with; None when it has no speedup."""
    mine = [r for r in results if r.bench == bench and r.metric == "speedup"
            and r.system != "sequential"]
    if not mine:
        return None
    workers = max(int(param_fields(r.param).get("workers", 0)) for r in mine)
    return {(param_fields(r.param).get(label_field, r.param), r.system): r.value for r in mine
            if int(param_fields(r.param).get("workers", 0)) == workers}, workers


def plot_fine_grained(results, path, options):
    """Speedup over the sequential program, per UTS tree and BOTS kernel, a bar per system."""
    panels = []
    for bench, label_field in (("uts", "tree"), ("bots", "kernel")):
        found = speedups_at_most_workers(results, bench, label_field)
        if found:
            panels.append((bench, label_field) + found)
    if not panels:
        return False
    fig, axes = new_figure(len(panels), width=7.0)
    for ax, (bench, label_field, speedup, workers) in zip(axes, panels):
        groups = sorted({g for g, _ in speedup}, key=natural_key)
        systems = order_systems([s for _, s in speedup], "versa")
        grouped_bars(ax, groups, systems, lambda g, s: speedup.get((g, s)))
        ax.axhline(1.0, color="#888888", linewidth=0.8)
        ax.set(title=f"{bench.upper()}, {workers} workers", xlabel=label_field,
               ylabel="speedup over sequential")
        legend(ax)
    save(fig, path)
    return True


def plot_micro(results, path, options):
    """Spawn (ns per empty task) and hand-off cost (generations: ns per task of a writer, its
    readers and the next writers), a bar per system; the machine's cache-line round trip between
    two threads as a line."""
    spawn = {(r.param, r.system): r.value for r in results
             if r.bench == "spawn" and r.metric == "ns_per_task"}
    handoff = {(r.param, r.system): r.value for r in results
               if r.bench == "generations" and r.metric == "ns_per_task"}
    round_trip = [r.value for r in results if r.bench == "round-trip"]
    panels = [(title, values) for title, values in
              (("spawn: ns per empty task", spawn),
               ("hand-off: generations, ns per task", handoff)) if values]
    if not panels:
        return False
    fig, axes = new_figure(len(panels), width=7.0)
    for ax, (title, values) in zip(axes, panels):
        groups = sorted({g for g, _ in values}, key=natural_key)
        systems = order_systems([s for _, s in values], "versa")
        grouped_bars(ax, groups, systems, lambda g, s: values.get((g, s)))
        if round_trip and title.startswith("hand-off"):
            ax.axhline(round_trip[0], color="#444444", linestyle="--", linewidth=0.9,
                       label="cache-line round trip")
        ax.set(title=title, ylabel="ns (log scale)", yscale="log")
        legend(ax)
    save(fig, path)
    return True
