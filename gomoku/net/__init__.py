"""The net layer: the Paddle policy-value network and everything that holds its weights.

``model`` (the networks and ``NetSpec``), ``device`` (where Paddle runs),
``inference`` (the Paddle Inference fast path), ``training`` (Adam steps on a
mini-batch), ``modelfile`` (the ``.npz`` model format) and ``policy_value``
(``PolicyValueModel``, which ties them together). It imports only the game
layer below it; ``modelfile`` and ``spec`` import no Paddle, so reading a model's
board needs neither Paddle's start-up nor Paddle itself. The modules that need it
import it from ``backend``: without Paddle they raise ``util.PaddleMissingError``,
whose message says how to install it.
"""
