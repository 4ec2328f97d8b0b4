"""benchdb_peer.check: a peer's outputs against a float64 reference, under benchdb's tolerance rule
(peer-protocol.md "Validation"; the rule of kernels/ref/attention_check.h).

An element passes when |x - ref| <= atol * scale + rtol * |ref|. For attention, scale is max |ref|
over the compared tensor's (batch, head) slice — of dV where dQ or dK is exactly 0 everywhere, as
with a single key, so that rounding noise around 0 is not an error; for the e2e model's scalars
(loss, gradient norm) it is |ref|. The worst element (largest |x - ref| / bound) is what is
reported, with where it is.

Attention is checked as benchdb checks its own kernels: the whole problem when the float64
reference costs at most FULL_CHECK_MADDS multiply-adds; above that, the forward on SAMPLE_ROWS
spread query rows (plus the first and the last) of every (batch, head) pair on the CPU (of up to
SAMPLE_HEADS spread pairs on a GPU) at the case's shape, and the backward on a problem of batch =
min(batch, 2), heads = min(heads, 2) and seq_len = REDUCED_SEQ with the case's head_dim and causal
flag, through the same function (two of each, so that a backward right only for the first batch
or head cannot pass).

dQ and dK's scale is at least GRAD_FLOOR of dV's in their slice (kernels/ref/attention_check.h's
ATTENTION_GRAD_FLOOR): with two keys a row's dS is (x, -x), and a head whose largest dQ is by
chance ~1e-5 of its largest dV would otherwise be held below float32's rounding noise.
"""
import math

FULL_CHECK_MADDS = 2e8
SAMPLE_ROWS = 32
SAMPLE_HEADS = 8
REDUCED_SEQ = 193
REDUCED_PAIRS = 2
GRAD_FLOOR = 1e-2


def attention_madds(B, H, S, D, backward, causal=False):
    """The float64 reference's multiply-adds, as benchdb counts them (kernels/ref/attention_ref.c):
    the forward 2·S²·D per head (QKᵀ and PV), halved when causal; the backward 3 times that."""
    forward = 2.0 * B * H * S * S * D
    if causal:
        forward /= 2
    return forward * (4.0 if backward else 1.0)


def attention_reference(q, k, v, causal, do=None, rows=None):
    """O (and dQ, dK, dV given dO) in float64 of q, k, v (B, H, S, D), on their device. rows: the
    query rows to compute (forward only), else all."""
    import torch
    q, k, v = q.double(), k.double(), v.double()
    S, D = k.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(D)
    qr = q if rows is None else q[..., rows, :]
    s = (qr @ k.transpose(-2, -1)) * scale
    if causal:
        pos = torch.arange(S, device=q.device) if rows is None else torch.as_tensor(rows, device=q.device)
        mask = torch.arange(S, device=q.device)[None, :] > pos[:, None]
        s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = p @ v
    if do is None:
        return o, None
    do = do.double()
    dv = p.transpose(-2, -1) @ do
    dp = do @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = (ds @ k) * scale
    dk = (ds.transpose(-2, -1) @ q) * scale
    return o, (dq, dk, dv)


def worst(x, ref, atol, rtol, scale):
    """(ratio, diff, bound, index) of the worst element of x against ref (same shape, float64 ok);
    scale: a tensor broadcastable to ref (max |ref| per slice). NaN in x is the worst."""
    import torch
    x = x.double()
    ref = ref.double()
    diff = (x - ref).abs()
    bound = atol * scale + rtol * ref.abs()
    bound = torch.where(bound > 0, bound, torch.full_like(bound, 1e-300))
    ratio = diff / bound
    ratio = torch.where(torch.isnan(ratio), torch.full_like(ratio, float("inf")), ratio)
    flat = int(torch.argmax(ratio).item())
    idx = []
    for n in reversed(ref.shape):
        idx.append(flat % n)
        flat //= n
    idx = tuple(reversed(idx))
    return float(ratio[idx].item()), float(diff[idx].item()), float(bound[idx].item()), idx


def _slice_scale(ref):
    """max |ref| over each (batch, head) slice, shaped to broadcast."""
    return ref.abs().amax(dim=(-2, -1), keepdim=True)


def attention_worst(name, x, ref, case, rows=None, heads=None, scale=None):
    """(ratio, diff, bound, where) of the worst element of one attention tensor x (B, H, S, D)
    against ref; scale: max |ref| per (batch, head) slice (default: ref's own). rows: the query
    positions the tensors hold along dimension 2, heads: the (batch, head) pairs along dimension 1
    (batch 1), when sampled."""
    import torch
    scale = _slice_scale(ref) if scale is None else scale
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    ratio, diff, bound, idx = worst(x, ref, case.atol, case.rtol, scale)
    b, h, s, d = idx
    if heads is not None:   # the tensors hold the sampled heads along dimension 1
        b, h = heads[h]
    if rows is not None:
        s = rows[s]
    letter = {"output": "O", "output_reduced": "O", "output_again": "O", "dq": "dQ", "dk": "dK",
              "dv": "dV"}.get(name, name)
    return ratio, diff, bound, "%s[b=%d, h=%d, s=%d, d=%d]" % (letter, b, h, s, d)


def check_attention_tensors(out, stage_names, results, refs, case, rows=None, heads=None):
    """Print one check line per tensor (worst element, where); CheckFailed on the first failure."""
    import torch
    # O, dQ, dK, dV: in each (batch, head) slice, dQ's and dK's scale is their own max |ref|, dV's
    # where theirs is exactly 0 (a single key), and at least GRAD_FLOOR of dV's (two keys)
    dv_scale = _slice_scale(refs[3]) if len(refs) == 4 else None
    for i, (name, x, ref) in enumerate(zip(stage_names, results, refs)):
        scale = None
        if dv_scale is not None and i in (1, 2):
            own = _slice_scale(ref)
            scale = torch.where(own == 0, dv_scale, torch.maximum(own, GRAD_FLOOR * dv_scale))
        _, diff, bound, where = attention_worst(name, x, ref, case, rows, heads, scale)
        out.check(name, diff, bound, where)


def sample_rows(S):
    rows = [0] + [i * (S - 1) // (SAMPLE_ROWS + 1) for i in range(1, SAMPLE_ROWS + 1)] + [S - 1]
    return sorted(set(rows))


def sample_heads(B, H, every=False):
    """The (batch, head) pairs a sampled check compares: every one where every (the CPU, whose
    memory is the host's, as benchdb's own check there), else SAMPLE_HEADS spread ones, the first
    and the last included (kernels/workloads/attention.c)."""
    pairs = [(b, h) for b in range(B) for h in range(H)]
    n = len(pairs)
    if every or n <= SAMPLE_HEADS:
        return pairs
    return [pairs[i * (n - 1) // (SAMPLE_HEADS - 1)] for i in range(SAMPLE_HEADS)]


def scalar(out, stage, value, ref, atol):
    """A scalar (the loss, a gradient norm) against its reference: bound atol * |ref|."""
    diff = abs(value - ref) if math.isfinite(value) else float("nan")
    bound = atol * abs(ref) if ref != 0 else atol
    out.check(stage, diff, bound, "%s %.9g vs reference %.9g" % (stage, value, ref))


def gradients(out, stage, grads, refs, atol, rtol=0.0):
    """Every parameter's gradient against its reference, element by element, as benchdb checks its
    own model (kernels/workloads/e2e.c): scale max |ref| of that parameter's gradient (1 where it
    is 0 everywhere). grads and refs: [(name, tensor or None)] in the same order (None: the
    backward left no gradient, i.e. zeros). One check line, the worst element of all."""
    import torch
    best = None
    for (name, g), (_, ref) in zip(grads, refs):
        if (g is None and ref is None) or (ref if g is None else g).numel() == 0:
            continue
        ref = torch.zeros_like(g, dtype=torch.float64) if ref is None else ref.detach().double()
        g = torch.zeros_like(ref) if g is None else g.detach().to(ref.device)
        if tuple(g.shape) != tuple(ref.shape):
            raise ValueError("the gradient of %s has shape %s, the reference's %s"
                             % (name, tuple(g.shape), tuple(ref.shape)))
        scale = ref.abs().max()
        scale = scale if scale > 0 else ref.new_ones(())
        ratio, diff, bound, idx = worst(g, ref, atol, rtol, scale)
        if best is None or ratio > best[0]:
            where = "%s[%s]" % (name, ", ".join(str(i) for i in idx)) if idx else name
            best = (ratio, diff, bound, where)
    if best is not None:
        out.check(stage, best[1], best[2], "gradient of " + best[3])
