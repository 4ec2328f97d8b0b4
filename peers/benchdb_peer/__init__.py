"""benchdb_peer: turn Python callables into benchdb peers (schemas/peer-protocol.md), standard
library only (PyTorch is imported when a case needs it).

    attention_peer(fn)      fn(q, k, v, causal) -> o: a peer of the attention suite
    train_peer(factory)     factory(case) -> (model, loss[, optimizer]): a peer of the e2e suite
    serve(run_case)         any peer: run_case(case, out) prints through out (protocol.Output)

Each validates against a float64 reference before timing, times warm-up and measured iterations
per phase (CUDA events on a GPU, a monotonic nanosecond clock on the CPU), reports peak memory per
phase, and turns exceptions into statuses (Unsupported -> unsupported, out of memory -> oom,
anything else -> error with the traceback's last line). The guide: docs/peers.md.
"""
from .protocol import Case, CheckFailed, Output, Unsupported, serve
from .attention import attention_peer
from .train import Training, train_peer

__all__ = ["Case", "CheckFailed", "Output", "Unsupported", "serve", "attention_peer",
           "Training", "train_peer"]
__version__ = "0.1.0"
