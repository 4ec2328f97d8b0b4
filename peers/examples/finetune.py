"""finetune.py: a team's fine-tuning job as a benchdb peer (docs/peers.md "Your training job").

One training step of a small causal LM — embedding, pre-norm transformer layers, LM head — timed
as benchdb times its own (fwd, bwd, opt per iteration). Two peer parameters make the job's
configurations sweep axes, part of each case's key, so `report --where`, `--group-by` and
`compare --baseline optimizer=adamw` work on them:

    optimizer   adamw | sgd | adafactor          (peers: finetune: params: optimizer: ...)
    lora_rank   0: full fine-tuning; r > 0: the base weights frozen, rank-r LoRA adapters
                (A: d x r, B: r x d, B zero at start) on every attention and MLP projection

samples/s and tokens/s come from the case's batch_size and context_length and the step's
median time (`report --derived`), cost per 1K samples from `--price`, node consistency from
`report nodes`, as for benchdb's own cases. The model's parameters come from the case (a preset
of the sweep's `models:`); the kit validates the loss and the gradient norm against a float64 copy.
"""
import math

import torch
from benchdb_peer import Training, Unsupported, train_peer


class LoRALinear(torch.nn.Module):
    """y = x W^T (+ (x A) B · alpha/r when rank > 0, with W frozen)."""

    def __init__(self, d_in, d_out, rank, alpha=16.0):
        super().__init__()
        self.base = torch.nn.Linear(d_in, d_out, bias=False)
        self.rank = rank
        if rank > 0:
            self.base.weight.requires_grad_(False)
            self.a = torch.nn.Parameter(torch.randn(d_in, rank) / math.sqrt(d_in))
            self.b = torch.nn.Parameter(torch.zeros(rank, d_out))
            self.scale = alpha / rank

    def forward(self, x):
        y = self.base(x)
        if self.rank > 0:
            y = y + (x @ self.a) @ self.b * self.scale
        return y


class Block(torch.nn.Module):
    def __init__(self, d, heads, d_ff, rank):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = LoRALinear(d, 3 * d, rank), LoRALinear(d, d, rank)
        self.up, self.down = LoRALinear(d, d_ff, rank), LoRALinear(d_ff, d, rank)

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, self.heads, d // self.heads).unbind(2)
        a = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, d))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class LM(torch.nn.Module):
    def __init__(self, vocab, d, layers, heads, d_ff, rank):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads, d_ff, rank) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        if rank > 0:   # fine-tuning only the adapters
            for p in (self.embed.weight, self.head.weight):
                p.requires_grad_(False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def make(case):
    rank = int(case.get("lora_rank", 0))
    model = LM(case.vocab_size, case.d_model, case.num_layers, case.num_heads, case.d_ff, rank)
    trainable = [p for p in model.parameters() if p.requires_grad]
    name = str(case.get("optimizer", "adamw"))
    if name == "adamw":
        optimizer = torch.optim.AdamW(trainable, lr=1e-4, weight_decay=0.01)
    elif name == "sgd":
        optimizer = torch.optim.SGD(trainable, lr=1e-3, momentum=0.9)
    elif name == "adafactor" and hasattr(torch.optim, "Adafactor"):   # torch >= 2.5
        optimizer = torch.optim.Adafactor(trainable, lr=1e-3)
    else:
        raise Unsupported("optimizer %s is not in torch %s" % (name, torch.__version__))
    tokens = case.randint(case.vocab_size, (case.batch_size, case.context_length + 1))
    x, y = tokens[:, :-1], tokens[:, 1:]

    def loss(m):
        return torch.nn.functional.cross_entropy(m(x).flatten(0, 1).float(), y.flatten())
    return Training(model, loss, optimizer)


if __name__ == "__main__":
    train_peer(make)
