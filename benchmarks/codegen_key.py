"""The code cache's key: ``expression_key`` (each node's type and hashable content, hashed once
per distinct node) against the ``srepr`` of the expressions it replaced, side by side in one
process, on the outputs of the multi-head flows the Sagitova claims generate (the flow's
gradient, same-token Hessian blocks and noise integrand; H = 2 and H = 4, L = 4, softmax). The
key is computed at every lookup of a model's generated code, cached or not.

    python benchmarks/codegen_key.py [--repeats 3] [--out benchmarks/codegen_key.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.timing import interleaved  # noqa: E402


def _flow_outputs(H: int):
    from theory import derive
    from theory.multihead import MultiHeadModel
    md = derive(MultiHeadModel(H, 4, 2, "softmax"))
    outs = [g for row in md.loss_gradient for g in row]
    outs += [md.loss_hessian_blocks[l][h][k] for l in range(4) for h in range(H) for k in range(h, H)]
    outs += [md.noise_integrand[h][k] for h in range(H) for k in range(h, H)]
    return md.arguments, outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("codegen_key.json"))
    args = ap.parse_args()
    import sympy as sp
    from sympy.core.cache import clear_cache
    from numerics.codegen.base import expression_key
    from numerics.codegen.cache import atomic_write_text
    out = {"repeats": args.repeats, "cases": {}}
    for H in (2, 4):
        syms, outs = _flow_outputs(H)
        # SymPy's cache is cleared before each timing: a model's expressions are new objects
        # in every process (and, before the shared derivations, in every claim)
        t = interleaved({"srepr": lambda s=syms, o=outs: (clear_cache(), sp.srepr(tuple(s)),
                                                          sp.srepr(tuple(o))),
                         "expression_key": lambda s=syms, o=outs: (clear_cache(), expression_key(s),
                                                                   expression_key(o))},
                        n=1, repeats=args.repeats)
        out["cases"][f"H={H}"] = {"outputs": len(outs), "srepr_s": t["srepr"],
                                  "expression_key_s": t["expression_key"],
                                  "ratio_key_vs_srepr": t["expression_key"] / t["srepr"]}
        print(f"H={H}: {json.dumps(out['cases'][f'H={H}'])}", flush=True)
    atomic_write_text(args.out, json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
