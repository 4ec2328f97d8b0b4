"""my_model.py: a user's nn.Module training step, validated and timed by benchdb (docs/peers.md)."""
import torch
from benchdb_peer import train_peer


class TinyLM(torch.nn.Module):
    def __init__(self, vocab, d_model, d_ff):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d_model)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d_model, d_ff), torch.nn.GELU(),
                                       torch.nn.Linear(d_ff, d_model))
        self.head = torch.nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        return self.head(x + self.mlp(x))


def make(case):
    model = TinyLM(case.vocab_size, case.d_model, case.d_ff)
    tokens = case.randint(case.vocab_size, (case.batch_size, case.context_length + 1))
    x, y = tokens[:, :-1], tokens[:, 1:]
    return model, lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten())


train_peer(make)
