"""my_attention.py: a user's attention function, validated and timed by benchdb (docs/peers.md)."""
import math

import torch
from benchdb_peer import attention_peer


def my_attention(q, k, v, causal):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


attention_peer(my_attention)
