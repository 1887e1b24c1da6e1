"""The net layer: the Paddle policy-value network and everything that holds its weights.

``model`` (the networks and ``NetSpec``), ``device`` (where Paddle runs),
``inference`` (the Paddle Inference fast path), ``training`` (Adam steps on a
mini-batch), ``modelfile`` (the ``.npz`` model format) and ``policy_value``
(``PolicyValueModel``, which ties them together). It imports only the game
layer below it; ``modelfile`` alone imports no Paddle, so reading a model's
board needs no Paddle start-up.
"""

from importlib.util import find_spec

# Paddle is an extra of the package (its CPU and CUDA builds are two distributions of one
# `paddle` module): say how to get it, instead of a bare "No module named 'paddle'" from deep inside.
if find_spec("paddle") is None:
    raise ImportError("PaddlePaddle is not installed: pip install -r requirements.txt (its CPU build) "
                      "or -r requirements-gpu.txt (its CUDA build), from the repository root; "
                      "or pip install '.[cpu]'")
