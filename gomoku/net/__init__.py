"""The net layer: the Paddle policy-value network and everything that holds its weights.

``model`` (the networks and ``NetSpec``), ``device`` (where Paddle runs),
``inference`` (the Paddle Inference fast path), ``training`` (Adam steps on a
mini-batch), ``modelfile`` (the ``.npz`` model format) and ``policy_value``
(``PolicyValueModel``, which ties them together). It imports only the game
layer below it; ``modelfile`` alone imports no Paddle, so reading a model's
board needs no Paddle start-up.
"""
