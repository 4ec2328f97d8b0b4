#!/usr/bin/env python3
"""peers/torch_sdpa.py: PyTorch's scaled_dot_product_attention as a benchdb peer, per backend
(benchdb_peer/sdpa.py), runnable as a script from a checkout without installing the kit."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchdb_peer import sdpa   # noqa: E402

if __name__ == "__main__":
    sys.exit(sdpa.main())
