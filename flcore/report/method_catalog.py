"""The book's catalog of every registered method, generated from the recipes.

``render_catalog()`` gives the Markdown of ``book/methods/catalog.md``: one section per
method (its summary with the update rule and citation, its parts in the notation of
docs/algorithms.md section 7.1, its hyper-parameters with their values at the paper scale on
CIFAR-10 at alpha = 0, communication per round and gradient evaluations per step).  A test
keeps the committed page equal to the rendered one; regenerate it with
``python -m flcore.report.method_catalog > book/methods/catalog.md``.
"""
from __future__ import annotations

from flcore.algorithms.part_ids import declared_part_names
from flcore.config.method_catalog import describe_methods

PART_NAMES = {
    "P0": "gradient at the iterate", "P1": "local SAM", "P2": "local ASAM",
    "P3": "FedSMOO corrected SAM", "P4": "FedLESAM estimated global perturbation",
    "P5": "FedGF blend of perturbed points", "P6": "FedGloSS perturbed start",
    "P6x": "NaiveFedGloSS exact perturbation", "P7": "SAM~ previous-step gradient",
    "C0": "no correction", "C1": "prox", "C2": "SCAFFOLD control variates",
    "C3": "FedDyn/ADMM dual", "C3s": "FedSpeed prox-correction", "C4": "AdaBest bias",
    "C5": "global momentum mixing", "C6": "FedSpeed gradient mixing",
    "C8": "momentum control variates",
    "S0": "average", "S2": "server momentum", "S3": "adaptive server optimizer",
    "S4": "FedNova normalized averaging", "S5": "FedGMA sign mask", "S6": "FedDyn server correction",
    "S7": "AdaBest extrapolation", "S8": "server-side SAM",
    "S9": "global Nesterov momentum, extrapolated start",
    "S10": "moving-average control variate",
    "A1": "SWA", "A2": "IMA", "L1": "SWA cyclical lr", "L2": "exponential lr decay", "L3": "IMA exploration",
    "L4": "linear decay within the round",
}


def _describe_parts(parts) -> str:
    out = []
    for part in parts:
        known = {**declared_part_names(), **PART_NAMES}
        names = [known.get(p.strip(), "") for p in part.replace("+", "/").split("/")]
        label = ", ".join(n for n in names if n)
        out.append(f"{part} ({label})" if label else part)
    return "; ".join(out)


def _label(name: str) -> str:
    return "catalog-" + name.replace("+", "-plus-")


def _describe_state(row: dict) -> str:
    """Client and server state names with shapes (``RoundResult`` names them so)."""
    client = ", ".join(f"`{s['name']}` {s['shape']}" for s in row["client_state"])
    server = ", ".join(f"`{s['name']}` {s['shape']}" for s in row["server_state"])
    return f"per client {client or 'none'}; server {server or 'none'}"


def render_catalog() -> str:

    rows = describe_methods(scale="paper", dataset="cifar10", alpha=0.0)
    lines = [
        "# Catalog of methods",
        "",
        "Every method flcore runs (`flcore run --method NAME`), generated from the parts its"
        " recipe builds (`flcore methods --json` gives the same data). Parts use the notation of the"
        " [methods overview](index.md): P = where the local gradient is taken, C = what is"
        " added to it, S = the server step, A = averaging of global models, L = the local"
        " learning-rate schedule. Hyper-parameters are shown with their values at the"
        " `paper` scale on CIFAR-10 at alpha = 0. Communication counts model-sized vectors"
        " per participating client and round (down / up): the model, plus what the parts"
        " declare they send.",
        "",
        "| method | parts | comm (down/up) | grad evals / step |",
        "|---|---|---|---|",
    ]
    for r in rows:
        anchor = _label(r["name"])
        lines.append(f"| {{ref}}`{r['name']} <{anchor}>` | {' + '.join(r['parts'])} | "
                     f"{r['downloads_per_round']}/{r['uploads_per_round']} | {r['grad_evals_per_step']} |")
    for r in rows:
        anchor = _label(r["name"])
        hp = ", ".join(f"`{k}` = `{v}`" for k, v in r["hyperparameters"].items()) or "none beyond the client SGD's"
        lines += [
            "",
            f"({anchor})=",
            f"## `{r['name']}`",
            "",
            r["summary"],
            "",
            f"- Parts: {_describe_parts(r['parts'])}.",
            f"- Hyper-parameters: {hp}.",
            f"- Communication per round: {r['downloads_per_round']} down, {r['uploads_per_round']} up;"
            f" gradient evaluations per local step: {r['grad_evals_per_step']}.",
            f"- State kept across rounds: {_describe_state(r)}.",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_catalog(), end="")
