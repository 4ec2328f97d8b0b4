"""benchdb_peer.sdpa: PyTorch's torch.nn.functional.scaled_dot_product_attention as a peer of
benchdb's `attention` suite, with the backend chosen per case — the baseline kernel authors name.

    peers:
      torch_sdpa:
        command: "python3 -m benchdb_peer.sdpa"     # or: python3 ../peers/torch_sdpa.py
        suite: attention
        persistent: true
        params: {backend: {values: [auto, flash, efficient, cudnn, math]}}

backend (a peer parameter, so an axis, a case-key token and a --where/--pivot/--group-by key):
`auto` lets torch choose (the choice it would make for the case's dtype, head_dim, seq_len and
device is stored as impl_info's `chosen`); `flash`, `efficient`, `cudnn`, `math` restrict
torch.nn.attention.sdpa_kernel to that one backend for the whole case. A backend that does not
run the case (efficient and cudnn on the CPU, flash in float32 on CUDA, a head_dim it does not
take, an older GPU) is `unsupported` with torch's own reasons. Everything else — inputs,
validation against the float64 attention, timing, memory, and a `compile` parameter where the
sweep declares one (torch.compile of the call, validated as it is timed) — is the kit's
attention_peer.
"""
import contextlib
import sys
import warnings

from . import attention, torchinfo
from .protocol import Unsupported, serve

BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
            "cudnn": "CUDNN_ATTENTION", "math": "MATH"}


def _chosen(torch, case):
    """The backend torch picks for auto on a (1, 1, seq_len, head_dim) problem of the case, by
    name, or None where this torch cannot say."""
    choice = getattr(torch, "_fused_sdp_choice", None)
    if choice is None:
        return None
    try:
        from torch.nn.attention import SDPBackend
        x = case.uniform(1, 1, case.seq_len, case.head_dim, offset=99)
        picked = SDPBackend(choice(x, x, x, None, 0.0, bool(case.causal)))
        names = {v: k for k, v in BACKENDS.items()}
        return names.get(picked.name, picked.name.lower())
    except Exception:   # noqa: BLE001 -- a private API: its absence is not the case's failure
        return None


def run(case, out):
    torch = torchinfo.prepare(case)
    F = torch.nn.functional
    if not hasattr(F, "scaled_dot_product_attention"):
        raise Unsupported("torch %s has no scaled_dot_product_attention (torch >= 2.0)" % torch.__version__)
    backend = str(case.get("backend", "auto"))
    if backend != "auto" and backend not in BACKENDS:
        raise Unsupported("backend %s (valid: auto, %s)" % (backend, ", ".join(BACKENDS)))
    restrict = contextlib.nullcontext()
    if backend != "auto":
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel   # torch >= 2.3
        except ImportError:
            raise Unsupported("choosing an SDPA backend needs torch.nn.attention.sdpa_kernel "
                              "(torch >= 2.3; this is torch %s)" % torch.__version__)
        restrict = sdpa_kernel([getattr(SDPBackend, BACKENDS[backend])])
    chosen = _chosen(torch, case) if backend == "auto" else backend

    def sdpa(q, k, v, causal):
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    with warnings.catch_warnings(record=True) as caught, restrict:
        warnings.simplefilter("always")
        try:
            attention.run_case(sdpa, case, out, info_extra={"backend": backend, "chosen": chosen})
        except RuntimeError as exc:
            text = str(exc)
            if "No viable backend" in text or "No available kernel" in text:
                why = "; ".join(dict.fromkeys(str(w.message).split("\n")[0] for w in caught)) or text
                raise Unsupported("torch %s's %s SDPA backend does not run this case: %s"
                                  % (torch.__version__, backend, why))
            raise


def main():
    return serve(run)


if __name__ == "__main__":
    sys.exit(main())
