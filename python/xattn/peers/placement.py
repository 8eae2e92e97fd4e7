"""Which CPUs the peers' threads may run on (from sysfs). The peers' thread pools (OpenMP in
torch, ORT's own) cannot be pinned one thread per PU from Python, so the
process is restricted to the n PUs that xattn-bench's policy of the same name
would use, and the pools spread over them. Standard library only."""
import glob
import os


def _topology():
    """[(package, core, pu)] for every online PU, from sysfs."""
    out = []
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
        pu = int(path.split("/")[-2][3:])
        try:
            with open(f"{path}/physical_package_id") as f:
                pkg = int(f.read())
            with open(f"{path}/core_id") as f:
                core = int(f.read())
        except OSError:
            continue
        out.append((pkg, core, pu))
    if not out:
        out = [(0, pu, pu) for pu in sorted(os.sched_getaffinity(0))]
    return sorted(out)


def compact_order():
    """One PU per core, cores in (package, core) order, then the SMT siblings."""
    first, rest, seen = [], [], set()
    for pkg, core, pu in _topology():
        (rest if (pkg, core) in seen else first).append(pu)
        seen.add((pkg, core))
    return first + rest


def _cpulist(text):
    out = []
    for item in text.strip().split(","):
        if item:
            a, _, b = item.partition("-")
            out += range(int(a), int(b or a) + 1)
    return out


def scatter_order():
    """Compact order dealt round-robin over packages (xattn-bench spreads
    over packages, then L3 groups; on one package this is compact)."""
    topo = {pu: pkg for pkg, _, pu in _topology()}
    per = {}
    for pu in compact_order():
        per.setdefault(topo.get(pu, 0), []).append(pu)
    lists = [per[k] for k in sorted(per)]
    out = []
    for i in range(max(len(x) for x in lists)):
        out += [x[i] for x in lists if i < len(x)]
    return out


def numa_order(node):
    try:
        with open(f"/sys/devices/system/node/node{node}/cpulist") as f:
            allowed = set(_cpulist(f.read()))
    except OSError:
        if node != 0:
            raise ValueError(f"placement numa={node}: no NUMA node {node}")
        allowed = set(compact_order())
    return [pu for pu in compact_order() if pu in allowed]


def select(place, threads):
    """PUs for `threads` threads under policy `place`: "compact", "scatter",
    "numa" / "numa=N", or "cores=0,2" / "cores=0-3" (logical core indices in
    compact order). Raises ValueError with one line."""
    order = None
    if place == "compact":
        order = compact_order()
    elif place == "scatter":
        order = scatter_order()
    elif place == "numa" or place.startswith("numa="):
        order = numa_order(int(place[5:]) if "=" in place else 0)
    if order is not None:
        if threads > len(order):
            raise ValueError(f"placement {place}: {threads} threads, it has {len(order)} PUs")
        return order[:threads]
    order = compact_order()
    if place.startswith("cores="):
        idx = []
        for item in place[6:].split(","):
            a, _, b = item.partition("-")
            idx += range(int(a), int(b or a) + 1)
        if len(idx) != threads:
            raise ValueError(f"placement {place}: names {len(idx)} cores for {threads} threads")
        if max(idx) >= len(order):
            raise ValueError(f"placement {place}: core {max(idx)} out of range (0..{len(order) - 1})")
        return [order[i] for i in idx]
    raise ValueError(f"placement {place}: expected compact, scatter, numa[=N] or cores=LIST")
