#!/usr/bin/env python3
"""peers/pytorch_e2e.py: benchdb's end-to-end transformer (docs/design.md, "The e2e model") in PyTorch, or
a student's own model, as a benchdb peer of suite e2e, built on the peer kit (peers/benchdb_peer,
docs/peers.md): protocol 1 and 2, one process per case or persistent.

    peers:
      pytorch: {command: "python3 ../peers/pytorch_e2e.py", suite: e2e, persistent: true}
      pytorch_compile: {command: "python3 ../peers/pytorch_e2e.py --compile", suite: e2e}
      mine: {command: "python3 ../peers/pytorch_e2e.py --model my_model:build", suite: e2e}

Options:
  --compile              run the model through torch.compile (or the peer parameter `compile`)
  --model MODULE:CALLABLE  the user's model instead of benchdb's: CALLABLE(vocab_size=,
                         context_length=, d_model=, num_layers=, num_heads=, d_ff=) returns an
                         nn.Module mapping token ids (batch, context) to logits (batch, context,
                         vocab); the loss is the mean cross-entropy against the case's targets.
                         MODULE is imported from the sweep file's directory (or a path to a .py
                         file). The coursework sweeps, tables and `report warmup` then run on it.
  --work benchdb         claim benchdb's FLOPs for --model (it is the same architecture);
                         without it a --model case has no FLOPs, so no report shows a rate for it

benchdb's model: token embedding; num_layers x [RMSNorm -> causal multi-head attention (bias-free
Q, K, V, O projections; RoPE, theta 10000, on interleaved pairs (x[2i], x[2i+1]) of Q and K) ->
residual -> RMSNorm -> SwiGLU w2(silu(w1 x) * w3 x) -> residual]; final RMSNorm; bias-free LM head
(not tied); mean cross-entropy; torch.optim.AdamW(lr 1e-3, betas (0.9, 0.95), eps 1e-8,
weight_decay 0.01), the settings of kernels/model/model.c. RMSNorm (eps 1e-5, learnable gain) and
the softmax run in float32. Weights start uniform with standard deviation 0.02 (norm gains 1), as
in benchdb. attention naive is the explicit softmax(QK^T / sqrt(d) + mask) V; flash and sdpa use
torch.nn.functional.scaled_dot_product_attention(is_causal=True) (on CUDA, flash restricts it to
the FlashAttention backend).

What each pass times, how bfloat16 (autocast over float32 master weights) and float16 (CUDA only)
run, the validation (loss, gradient norm and, in float32, each parameter's gradient against a
float64 copy of the model), memory and statuses: benchdb_peer/train.py. Every case prints an `info {...}` object (torch, its BLAS, MKL,
oneDNN, CPU capability, threads; benchdb_peer/torchinfo.py), stored as cases.impl_info.
"""
import importlib
import importlib.util
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # the kit, beside this file
from benchdb_peer import Training, Unsupported, serve   # noqa: E402
from benchdb_peer import train   # noqa: E402

NORM_EPS = 1e-5
ROPE_THETA = 10000.0
INIT_STD = 0.02
MODEL_KEYS = ("vocab_size", "context_length", "d_model", "num_layers", "num_heads", "d_ff")


def param_count(c):
    d, f, L, V = c["d_model"], c["d_ff"], c["num_layers"], c["vocab_size"]
    return L * (4 * d * d + 3 * d * f + 2 * d) + 2 * V * d + d


def build(torch, c):
    """The model class for case c (torch is imported lazily, so that its absence is a status)."""
    nn, F = torch.nn, torch.nn.functional
    d, h = c["d_model"], c["num_heads"]
    dh = d // h
    sdpa = getattr(F, "scaled_dot_product_attention", None)

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)
            return (y * self.weight.float()).to(x.dtype)

    def rope(x, cos, sin):
        """Rotate interleaved pairs (x[..., 2i], x[..., 2i+1]) of x (B, H, T, dh)."""
        x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
        y = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return y.flatten(-2).to(x.dtype)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm = RMSNorm()
            self.q = nn.Linear(d, d, bias=False)
            self.k = nn.Linear(d, d, bias=False)
            self.v = nn.Linear(d, d, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.ffn_norm = RMSNorm()
            self.w1 = nn.Linear(d, c["d_ff"], bias=False)
            self.w3 = nn.Linear(d, c["d_ff"], bias=False)
            self.w2 = nn.Linear(c["d_ff"], d, bias=False)

        def attention(self, q, k, v, mask):
            if c["attention"] == "naive":
                s = (q @ k.transpose(-2, -1)).float() * (1.0 / math.sqrt(dh))
                p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
                return p.to(v.dtype) @ v
            return sdpa(q, k, v, is_causal=True)

        def forward(self, x, cos, sin, mask):
            B, T, _ = x.shape
            n = self.attn_norm(x)
            q, k, v = (proj(n).view(B, T, h, dh).transpose(1, 2) for proj in (self.q, self.k, self.v))
            a = self.attention(rope(q, cos, sin), rope(k, cos, sin), v, mask)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, d))
            n = self.ffn_norm(x)
            return x + self.w2(F.silu(self.w1(n)) * self.w3(n))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(c["vocab_size"], d)
            self.layers = nn.ModuleList(Block() for _ in range(c["num_layers"]))
            self.final_norm = RMSNorm()
            self.lm_head = nn.Linear(d, c["vocab_size"], bias=False)
            T = c["context_length"]
            i = torch.arange(dh // 2, dtype=torch.float64)
            angle = torch.arange(T, dtype=torch.float64)[:, None] * ROPE_THETA ** (-2.0 * i / dh)
            self.register_buffer("cos", torch.cos(angle).float(), persistent=False)   # (T, dh/2)
            self.register_buffer("sin", torch.sin(angle).float(), persistent=False)
            self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).tril(), persistent=False)

        def forward(self, tokens, targets):
            x = self.embedding(tokens)
            for layer in self.layers:
                x = layer(x, self.cos, self.sin, self.mask)
            logits = self.lm_head(self.final_norm(x))
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    return LM


def load_factory(spec):
    """MODULE:CALLABLE (MODULE a dotted name importable from the sweep's directory, or a .py path)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError("--model takes MODULE:CALLABLE, got %r" % spec)
    if module_name.endswith(".py"):
        loaded = importlib.util.spec_from_file_location("user_model", module_name)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    return getattr(module, attr)


def make_factory(options):
    def factory(case):
        import torch
        c = {key: int(getattr(case, key)) for key in MODEL_KEYS}
        shape = (case.batch_size, case.context_length)
        g = torch.Generator().manual_seed(case.seed)
        tokens = torch.randint(c["vocab_size"], shape, generator=g).to(case.device)
        targets = torch.randint(c["vocab_size"], shape, generator=g).to(case.device)
        if options["model"]:
            net = load_factory(options["model"])(**c)
            V = c["vocab_size"]

            def loss(m):
                logits = m(tokens)
                return torch.nn.functional.cross_entropy(logits.float().reshape(-1, V), targets.reshape(-1))
            return Training(net, loss, work="benchdb" if options["work"] == "benchdb" else None)
        c["attention"] = str(case.get("attention", "naive"))
        if c["attention"] not in ("naive", "flash", "sdpa"):
            raise Unsupported("attention %s (valid: naive, flash, sdpa)" % c["attention"])
        if c["attention"] != "naive" and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            raise Unsupported("attention %s needs torch.nn.functional.scaled_dot_product_attention "
                              "(torch >= 2.0; this is torch %s)" % (c["attention"], torch.__version__))
        cuda = case.device == "cuda"
        if cuda and c["attention"] == "flash" and case.dtype == "float32":
            raise Unsupported("torch's FlashAttention backend needs float16 or bfloat16")
        if c["num_heads"] < 1 or c["d_model"] % c["num_heads"] or (c["d_model"] // c["num_heads"]) % 2:
            raise Unsupported("num_heads %d must divide d_model %d with an even quotient"
                              % (c["num_heads"], c["d_model"]))
        model = build(torch, c)()
        a = INIT_STD * math.sqrt(3.0)   # uniform on [-a, a] has standard deviation INIT_STD
        with torch.no_grad():
            for name, p in model.named_parameters():
                if not name.endswith("norm.weight"):
                    p.uniform_(-a, a)
        n_params = sum(p.numel() for p in model.parameters())
        if n_params != param_count(c):
            raise RuntimeError("the model has %d parameters, the formula says %d" % (n_params, param_count(c)))

        def loss(m):
            if not (cuda and c["attention"] == "flash"):
                return m(tokens, targets)
            from torch.nn.attention import SDPBackend, sdpa_kernel   # torch >= 2.3
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return m(tokens, targets)
        return Training(model, loss, work="benchdb")
    return factory


def parse_args(argv):
    options = {"compile": None, "model": None, "work": None}
    args = list(argv[1:])
    while args:
        arg = args.pop(0)
        if arg == "--compile":
            options["compile"] = True
        elif arg in ("--model", "--work") and args:
            options[arg[2:]] = args.pop(0)
        else:
            raise SystemExit("pytorch_e2e.py: unknown argument %r (valid: --compile, --model "
                             "MODULE:CALLABLE, --work benchdb)" % arg)
    if options["work"] not in (None, "benchdb"):
        raise SystemExit("pytorch_e2e.py: --work takes benchdb, got %r" % options["work"])
    return options


def main(argv):
    options = parse_args(argv)
    factory = make_factory(options)
    extra = {"model": options["model"] or "benchdb"}
    if options["compile"]:
        extra["compile_backend"] = "inductor"
    return serve(lambda case, out: train.run_case(factory, case, out, info_extra=extra,
                                                  compile_model=options["compile"]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
