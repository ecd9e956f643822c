"""Writes a tensor-core benchmark's results (bench/gpu/matmul.py, attention.py): NAME-bench.json in
the shape of ../shared/design/PERF.md, and NAME-bench.md with a table of Tri against the anchor
library and Triton, followed by every configuration's line."""
import datetime
import json
import os

import torch
import triton


def write(out_dir, name, commit, rows, lines, config_label, anchor_key, anchor_label):
    """rows: dicts with workload, tri, tri_config, triton and `anchor_key`; lines: the per-config
    lines printed during the run. Prints the table and returns it."""
    res = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), "commit": commit,
           "command": f"python3 bench/gpu/{name}.py", "triton": triton.__version__, "torch": torch.__version__,
           "rows": rows}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{name}-bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    table = [f"GPU: {res['gpu']}, Triton {triton.__version__}, torch {torch.__version__}, commit {commit}", "",
             f"| workload | Tri TFLOP/s ({config_label}) | Triton | {anchor_label} | Tri/{anchor_label} | Tri/Triton |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['workload']} | {r['tri']:.0f} {tuple(r['tri_config'])} | {r['triton']:.0f} | "
                     f"{r[anchor_key]:.0f} | {r['tri'] / r[anchor_key]:.2f} | {r['tri'] / r['triton']:.2f} |")
    with open(os.path.join(out_dir, f"{name}-bench.md"), "w") as f:
        f.write("\n".join(table + ["", "every configuration:"] + lines) + "\n")
    print("\n".join(table))
    return table
