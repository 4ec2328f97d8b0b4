"""student_model.py: a student's own transformer LM, as `peers/pytorch_e2e.py --model
student_model:build` runs it (docs/peers.md "Your own model"): a pre-norm decoder built from
torch.nn.TransformerEncoderLayer with a causal mask. build() takes the case's model parameters
and returns a module mapping token ids (batch, context) to logits (batch, context, vocab)."""
import torch


class StudentLM(torch.nn.Module):
    def __init__(self, vocab_size, context_length, d_model, num_layers, num_heads, d_ff):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab_size, d_model)
        self.pos = torch.nn.Parameter(torch.zeros(context_length, d_model))
        layer = torch.nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0,
                                                 activation="gelu", batch_first=True, norm_first=True)
        self.layers = torch.nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(d_model)
        self.head = torch.nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens):
        T = tokens.shape[1]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        x = self.embed(tokens) + self.pos[:T]
        return self.head(self.norm(self.layers(x, mask=mask, is_causal=True)))


def build(vocab_size, context_length, d_model, num_layers, num_heads, d_ff):
    return StudentLM(vocab_size, context_length, d_model, num_layers, num_heads, d_ff)
