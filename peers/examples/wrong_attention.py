"""wrong_attention.py: a planted wrong kernel (the scale is 1/head_dim, not 1/sqrt(head_dim)): fast,
plausible, and wrong. benchdb must store its cases as `error`, never time them (tests/cli/kit_test.sh)."""
import torch
from benchdb_peer import attention_peer


def wrong_attention(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                            scale=1.0 / q.shape[-1])


attention_peer(wrong_attention)
