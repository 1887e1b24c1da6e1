"""Growing a size-free net: more residual blocks, more channels, the same play.

A trained net is copied into a larger one so that the larger net computes
exactly what the smaller one did (Net2Net's function-preserving idea, Chen et
al. 2016), and training goes on from there with the extra capacity:

- new channels get the larger net's fresh random weights on their inputs and
  zero weights on everything they feed into an old channel, the policy logit or
  the value head. They compute features from the first update on, but those
  features change nothing until training gives them a weight, and because they
  are nonzero the gradient of the weights they feed is nonzero too;
- new residual blocks go after the old ones with the scale of their second
  batch norm at zero: such a block adds 0 to its input, and its input is a ReLU
  output already, so the block passes it through unchanged;
- an old block that gains a global pooling branch (``model.GlobalPoolBlock``) gets
  its linear layer at zero, so the branch adds a bias of 0 until training moves
  it; the pooled features are nonzero, so that layer's gradient is nonzero from
  the first update on. A block that pooled before keeps its branch, widened as
  the channels are. The pooling blocks of the small net must stay pooling blocks
  (``spec.pooling_blocks`` places them by the count of blocks).

A net of any architecture can also take a later input version
(``carry_inputs``): the first convolution, the only layer that reads the
planes, gets zero weights on the new planes, so the net computes what it did
from the planes it had; the new planes' weights have a gradient from the first
update on.

Everything here works on weight dicts of NumPy arrays (``PolicyValueModel.weights``),
so it needs no Paddle.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gomoku.net.spec import NetSpec, pool_channels, pooling_blocks

_BN = ("weight", "bias", "_mean", "_variance")


def check_growable(small: NetSpec, large: NetSpec) -> None:
    """Raises ValueError unless ``large`` is ``small`` with more blocks and/or channels."""
    if small.arch != "sizefree" or large.arch != "sizefree":
        raise ValueError(f"only size-free nets can grow (this model is {small.arch!r}, "
                         f"the net asked for {large.arch!r})")
    if small.n_in_row != large.n_in_row:
        raise ValueError(f"a model for {small.n_in_row} in a row cannot grow into one for {large.n_in_row}")
    if small.inputs != large.inputs:
        raise ValueError(f"growing keeps the input version ({small.inputs}); carry_inputs changes it")
    if large.res_blocks < small.res_blocks or large.res_filters < small.res_filters:
        raise ValueError(f"a net can grow but not shrink: the model has {small.res_blocks} blocks of "
                         f"{small.res_filters} channels, the net asked for {large.res_blocks} of "
                         f"{large.res_filters}")
    if large.global_pool < small.global_pool:
        raise ValueError(f"a net can gain global pooling blocks but not lose them: the model has "
                         f"{small.global_pool}, the net asked for {large.global_pool}")
    if (large.res_blocks, large.res_filters, large.global_pool) == (
            small.res_blocks, small.res_filters, small.global_pool):
        raise ValueError(f"the model already has {small.res_blocks} blocks of {small.res_filters} "
                         f"channels: ask for more blocks, channels or global pooling blocks to grow it")
    kept = set(pooling_blocks(small.res_blocks, small.global_pool))
    if not kept <= set(pooling_blocks(large.res_blocks, large.global_pool)):
        raise ValueError(f"the model's global pooling blocks {sorted(kept)} would not all pool in a net of "
                         f"{large.res_blocks} blocks with {large.global_pool} pooling: ask for another count")


def grow_weights(small: NetSpec, weights: dict[str, np.ndarray], large: NetSpec,
                 fresh: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The weights of ``large`` that play exactly as ``weights`` of ``small`` do.

    Args:
        small, weights: the trained net.
        large: the net to grow it into (``check_growable`` must accept the pair).
        fresh: a freshly initialised ``large`` net's weights, the source of the
            new channels' and blocks' random weights.

    Raises:
        ValueError: ``large`` is not a larger ``small``, or a weight dict does not fit its spec.
    """
    check_growable(small, large)
    f = small.res_filters
    out = {name: np.array(value, copy=True) for name, value in fresh.items()}

    def take(name: str, shape: tuple) -> np.ndarray:
        value = weights.get(name)
        if value is None or value.shape != shape:
            raise ValueError(f"weight {name} does not fit a net of {small.res_blocks} blocks of {f} "
                             f"channels ({None if value is None else value.shape}, expected {shape})")
        return value

    def conv(name: str, inputs: int) -> None:
        # old outputs read the old inputs as before and nothing from new inputs;
        # new outputs keep their random weights on every input
        grown = out[name]
        grown[:f, :inputs] = take(name, (f, inputs, 3, 3))
        grown[:f, inputs:] = 0.0

    def batch_norm(prefix: str) -> None:
        for part in _BN:
            out[f"{prefix}.{part}"][:f] = take(f"{prefix}.{part}", (f,))

    def pool_branch(prefix: str) -> None:
        # a pooling branch both nets have: the old pooled channels read the old channels as before,
        # and the linear layer gives old channels what it gave them, from the old pooled ones alone
        g, big_g = pool_channels(f), pool_channels(large.res_filters)
        grown = out[f"{prefix}.pool_conv.weight"]
        grown[:g, :f] = take(f"{prefix}.pool_conv.weight", (g, f, 3, 3))
        grown[:g, f:] = 0.0
        for part in _BN:
            out[f"{prefix}.pool_bn.{part}"][:g] = take(f"{prefix}.pool_bn.{part}", (g,))
        old_fc, fc = take(f"{prefix}.pool_fc.weight", (3 * g, f)), out[f"{prefix}.pool_fc.weight"]
        fc[:, :f] = 0.0
        for k in range(3):  # the mean, the size-scaled mean and the max of each pooled channel
            fc[k * big_g:k * big_g + g, :f] = old_fc[k * g:(k + 1) * g]
        out[f"{prefix}.pool_fc.bias"][:f] = take(f"{prefix}.pool_fc.bias", (f,))

    conv("conv1.weight", small.channels)
    batch_norm("bn1")
    for i in range(small.res_blocks):
        for layer in ("conv1", "conv2"):
            conv(f"blocks.{i}.{layer}.weight", f)
            batch_norm(f"blocks.{i}.bn{layer[-1]}")
    small_pool = pooling_blocks(small.res_blocks, small.global_pool)
    for i in pooling_blocks(large.res_blocks, large.global_pool):
        if i in small_pool:
            pool_branch(f"blocks.{i}")
        elif i < small.res_blocks:
            out[f"blocks.{i}.pool_fc.weight"][:] = 0.0  # a bias of 0: the block computes what it did
            out[f"blocks.{i}.pool_fc.bias"][:] = 0.0
    for i in range(small.res_blocks, large.res_blocks):
        out[f"blocks.{i}.bn2.weight"][:] = 0.0  # the block adds bn2's bias: 0 as well
        out[f"blocks.{i}.bn2.bias"][:] = 0.0

    policy = out["policy_conv.weight"]
    policy[:] = 0.0
    policy[:, :f] = take("policy_conv.weight", (1, f, 1, 1))
    out["policy_conv.bias"] = take("policy_conv.bias", (1,)).copy()

    # value_fc1 reads [mean over the board of each channel, max of each channel]
    hidden = out["value_fc1.weight"].shape[1]
    old_fc1 = take("value_fc1.weight", (2 * f, hidden))
    fc1 = np.zeros_like(out["value_fc1.weight"])
    fc1[:f] = old_fc1[:f]
    fc1[large.res_filters:large.res_filters + f] = old_fc1[f:]
    out["value_fc1.weight"] = fc1
    for name in ("value_fc1.bias", "value_fc2.weight", "value_fc2.bias"):
        out[name] = take(name, out[name].shape).copy()
    return out


def grown_model(model, trunk: dict, **kwargs):
    """A ``PolicyValueModel`` of ``model``'s net grown to the size-free ``trunk`` (its blocks and
    channels, ``spec.trunk_of``), playing as ``model`` did; ``kwargs`` go to the new model.

    Raises:
        ValueError: the net cannot grow to that trunk (``check_growable``).
    """
    from gomoku.net.policy_value import PolicyValueModel

    large = replace(model.spec, **trunk)
    check_growable(model.spec, large)
    grown = PolicyValueModel(large, **kwargs)
    grown.set_weights(grow_weights(model.spec, model.weights(), large, grown.weights()))
    return grown


def carry_inputs(spec: NetSpec, weights: dict[str, np.ndarray], inputs: int) -> tuple[NetSpec, dict]:
    """The net ``spec`` with input version ``inputs``, and weights with which it plays exactly as
    ``weights`` did: the first convolution reads the old planes as before (a later version's
    planes begin with the earlier version's) and the new ones with zero weights.

    Raises:
        ValueError: ``inputs`` is not a later version than the net's, or the weights do not fit.
    """
    if inputs <= spec.inputs:
        raise ValueError(f"a net can take a later input version, not version {inputs} "
                         f"(the model takes version {spec.inputs})")
    wider = replace(spec, inputs=inputs)
    conv = weights.get("conv1.weight")
    if conv is None or conv.ndim != 4 or conv.shape[1] != spec.channels:
        raise ValueError(f"weight conv1.weight does not fit a net of input version {spec.inputs} "
                         f"({None if conv is None else conv.shape})")
    grown = np.zeros((conv.shape[0], wider.channels, *conv.shape[2:]), dtype=conv.dtype)
    grown[:, :spec.channels] = conv
    out = {name: np.array(value, copy=True) for name, value in weights.items()}
    out["conv1.weight"] = grown
    return wider, out
