"""The job a PyTorch script runs, as ringlab's JobConfig JSON (engine/job/job_config.cpp).

The controller reads rank 0's RunBegin text with JobConfig's from_json, which takes each field
it finds and keeps its own default for the rest, and refuses a field of the wrong type (a float
where a whole number belongs). So only what the script really tells is written, with the types
the C++ side wants; `overrides` (watch(..., job={...})) win over anything derived here.
"""
import json
from typing import Any, Dict, Optional

# PyTorch's own defaults, which JobConfig spells as -1 ("PyTorch's").
_TORCH_BUCKET_CAP_BYTES = 25 * 1024 * 1024
_TORCH_FIRST_BUCKET_BYTES = 1024 * 1024

_WHOLE_NUMBER_FIELDS = ("world_size", "samples", "features", "batch_size", "epochs", "bucket_cap_kb",
                        "first_bucket_kb", "grad_accum", "seed")
_KNOWN_FIELDS = set(_WHOLE_NUMBER_FIELDS) | {
    "backend", "algorithm", "hidden", "lr", "momentum", "weight_decay", "drop_last", "shuffle", "set_epoch",
    "timeout_s", "trace_level", "faults", "uneven", "join", "check_collectives", "ranks_per_node"}


def linear_chain(module) -> Optional[Dict[str, Any]]:
    """features and hidden widths when the model is a chain of Linear layers (an MLP), else None."""
    import torch
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        return None
    for before, after in zip(linears, linears[1:]):
        if before.out_features != after.in_features:
            return None  # not one chain: JobConfig cannot describe it
    return {"features": linears[0].in_features, "hidden": [m.out_features for m in linears[:-1]]}


def optimizer_fields(optimizer) -> Dict[str, Any]:
    if optimizer is None or not optimizer.param_groups:
        return {}
    group = optimizer.param_groups[0]
    fields = {}
    for key in ("lr", "momentum", "weight_decay"):
        if isinstance(group.get(key), (int, float)):
            fields[key] = float(group[key])
    return fields


def sampler_fields(sampler) -> Dict[str, Any]:
    if sampler is None:
        return {}
    fields = {}
    dataset = getattr(sampler, "dataset", None)
    if dataset is not None:
        try:
            fields["samples"] = len(dataset)
        except TypeError:
            pass  # an iterable dataset has no length
    for key in ("shuffle", "drop_last"):
        if isinstance(getattr(sampler, key, None), bool):
            fields[key] = getattr(sampler, key)
    return fields


def ddp_fields(ddp_model) -> Dict[str, Any]:
    import torch.distributed as dist
    fields = {}
    cap = getattr(ddp_model, "bucket_bytes_cap", _TORCH_BUCKET_CAP_BYTES)
    if cap != _TORCH_BUCKET_CAP_BYTES:
        fields["bucket_cap_kb"] = max(1, int(cap) // 1024)
    first = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", _TORCH_FIRST_BUCKET_BYTES)
    if first != _TORCH_FIRST_BUCKET_BYTES:
        fields["first_bucket_kb"] = max(1, int(first) // 1024)
    return fields


def seed_as_job_field(seed: int) -> int:
    """JobConfig's seed is a u64; torch.manual_seed(-1) means 2**64 - 1, as ringlab parses it."""
    return int(seed) % (1 << 64)


def build_job(*, world_size: int, backend: str, teaching: bool, ddp_model, sampler=None, optimizer=None,
              batch_size: Optional[int] = None, epochs: Optional[int] = None, seed: Optional[int] = None,
              overrides: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The job's fields as a dict ready for json.dumps, overrides applied and checked."""
    job: Dict[str, Any] = {"world_size": int(world_size), "backend": backend,
                           "algorithm": "ring" if teaching else "native",
                           # ringlab's own fingerprint check is not run by a PyTorch script
                           "check_collectives": False}
    chain = linear_chain(getattr(ddp_model, "module", ddp_model))
    if chain:
        job.update(chain)
    job.update(ddp_fields(ddp_model))
    job.update(sampler_fields(sampler))
    job.update(optimizer_fields(optimizer))
    if batch_size is not None:
        job["batch_size"] = int(batch_size)
    if epochs is not None:
        job["epochs"] = int(epochs)
    if seed is not None:
        job["seed"] = seed_as_job_field(seed)
    job.update(check_overrides(overrides or {}))
    return job


def check_overrides(overrides: Dict[str, Any]) -> Dict[str, Any]:
    """Refuses here, naming the field, what the controller's from_json would refuse later."""
    for key, value in overrides.items():
        if key not in _KNOWN_FIELDS:
            raise ValueError(f"watch(job=...): '{key}' is not a field of ringlab's job "
                             f"(known: {', '.join(sorted(_KNOWN_FIELDS))})")
        if key in _WHOLE_NUMBER_FIELDS and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"watch(job=...): '{key}' must be a whole number, got {value!r}")
    fixed = dict(overrides)
    if "seed" in fixed:
        fixed["seed"] = seed_as_job_field(fixed["seed"])
    return fixed


def job_json(job: Dict[str, Any]) -> str:
    return json.dumps(job, separators=(",", ":"), sort_keys=True)
