"""The policy-value networks, built from a ``NetSpec``.

``PolicyValueNet`` (docs/algorithm.md, section 3) maps the input planes (4 for input version
1, ``Board.planes``; more for later versions, ``gomoku.game.features``) to log
move probabilities over all ``width * height`` cells and a value in [-1, 1]
for the player to move. Only the first convolution reads the planes, so the
input version changes its input channels alone. ``SizeFreeNet`` (docs/algorithm.md, section 7)
has no layer sized to the board, so one set of weights evaluates any ``H x W``.
"""

from __future__ import annotations

from gomoku.net.backend import paddle
import paddle.nn as nn
import paddle.nn.functional as F

from gomoku.net.spec import ARCHS, NetSpec, pool_channels, pooling_blocks


class PolicyValueNet(nn.Layer):
    """The ``conv3`` net: a trunk of three 3x3 convolutions, a policy head and a value head."""

    def __init__(self, width: int, height: int, channels: int = 4):
        super().__init__()
        self.conv1 = nn.Conv2D(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2D(32, 64, 3, padding=1)
        self.conv3 = nn.Conv2D(64, 128, 3, padding=1)
        self.policy_conv = nn.Conv2D(128, 4, 1)
        self.policy_fc = nn.Linear(4 * width * height, width * height)
        self.value_conv = nn.Conv2D(128, 2, 1)
        self.value_fc1 = nn.Linear(2 * width * height, 64)
        self.value_fc2 = nn.Linear(64, 1)

    def trunk(self, x):
        x = F.relu(self.conv1(x))  # (B, 32, H, W)
        x = F.relu(self.conv2(x))  # (B, 64, H, W)
        return F.relu(self.conv3(x))  # (B, 128, H, W)

    def forward(self, x):
        x = self.trunk(x)
        p = F.relu(self.policy_conv(x)).flatten(1)  # (B, 4*H*W)
        log_p = F.log_softmax(self.policy_fc(p), axis=-1)  # (B, H*W)
        v = F.relu(self.value_conv(x)).flatten(1)  # (B, 2*H*W)
        v = paddle.tanh(self.value_fc2(F.relu(self.value_fc1(v))))  # (B, 1)
        return log_p, v


class ResidualBlock(nn.Layer):
    def __init__(self, filters: int):
        super().__init__()
        self.conv1 = nn.Conv2D(filters, filters, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(filters)
        self.conv2 = nn.Conv2D(filters, filters, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(filters)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


POOL_SIZE_CENTRE = 14.0
"""the board side (the square root of its area) at which the size-scaled mean is 0, as in KataGo"""


class GlobalPoolBlock(ResidualBlock):
    """A residual block that also sees the whole board (KataGo's global pooling bias).

    A 3x3 convolution of the block's input gives ``pool_channels`` extra channels;
    their mean, their mean scaled by the board's size and their max over the board
    go through one linear layer to a bias per trunk channel, added to the first
    convolution's output before its ReLU. The rest is a plain residual block. The
    pooling is over the whole board whatever its size, so the block has no layer
    sized to the board.
    """

    def __init__(self, filters: int):
        super().__init__(filters)
        pooled = pool_channels(filters)
        self.pool_conv = nn.Conv2D(filters, pooled, 3, padding=1, bias_attr=False)
        self.pool_bn = nn.BatchNorm2D(pooled)
        self.pool_fc = nn.Linear(3 * pooled, filters)

    def forward(self, x):
        g = F.relu(self.pool_bn(self.pool_conv(x)))  # (B, G, H, W)
        shape = paddle.shape(g)  # the board is open in an exported net: read its size at run time
        side = paddle.sqrt(paddle.cast(shape[2] * shape[3], "float32"))
        mean = F.adaptive_avg_pool2d(g, 1).flatten(1)  # (B, G)
        pooled = paddle.concat([mean, mean * (side - POOL_SIZE_CENTRE) / 10.0,
                                F.adaptive_max_pool2d(g, 1).flatten(1)], axis=1)  # (B, 3G)
        bias = self.pool_fc(pooled).unsqueeze([2, 3])  # (B, F, 1, 1)
        y = F.relu(self.bn1(self.conv1(x)) + bias)
        return F.relu(x + self.bn2(self.conv2(y)))


class ResidualPolicyValueNet(PolicyValueNet):
    """The same heads on a deeper residual trunk (an option, not the default)."""

    def __init__(self, width: int, height: int, blocks: int, filters: int, channels: int = 4):
        super().__init__(width, height, channels)
        self.conv1 = nn.Conv2D(channels, filters, 3, padding=1)
        self.conv2 = self.conv3 = None
        self.blocks = nn.LayerList([ResidualBlock(filters) for _ in range(blocks)])
        self.policy_conv = nn.Conv2D(filters, 4, 1)
        self.value_conv = nn.Conv2D(filters, 2, 1)

    def trunk(self, x):
        x = F.relu(self.conv1(x))  # (B, F, H, W)
        for block in self.blocks:
            x = block(x)
        return x


OCCUPIED_LOGIT = -1e9
"""added to an occupied cell's policy logit: finite, so that ``pi * log p`` stays 0 where ``pi`` is 0"""


class SizeFreeNet(nn.Layer):
    """A fully convolutional net: any board size, one weight file (docs/algorithm.md, section 7).

    Trunk: a 3x3 convolution to ``filters`` channels, then ``blocks`` residual
    blocks. Policy: a 1x1 convolution to one logit per cell; occupied cells
    (planes 0 and 1) are masked before the log-softmax, so they get probability 0.
    Value: the trunk's mean and max over the board, then two fully connected
    layers and tanh. Every layer's size depends on the channels alone. With
    ``global_pool`` the trunk has that many ``GlobalPoolBlock``s (``pooling_blocks``
    places them), so the policy, too, can depend on the whole board.
    """

    def __init__(self, blocks: int, filters: int, channels: int = 4, global_pool: int = 0):
        super().__init__()
        self.conv1 = nn.Conv2D(channels, filters, 3, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(filters)
        pooled = pooling_blocks(blocks, global_pool)
        self.blocks = nn.LayerList([GlobalPoolBlock(filters) if i in pooled else ResidualBlock(filters)
                                    for i in range(blocks)])
        self.policy_conv = nn.Conv2D(filters, 1, 1)
        self.value_fc1 = nn.Linear(2 * filters, 64)
        self.value_fc2 = nn.Linear(64, 1)

    def forward(self, planes):
        x = F.relu(self.bn1(self.conv1(planes)))  # (B, F, H, W)
        for block in self.blocks:
            x = block(x)
        logits = self.policy_conv(x).flatten(1)  # (B, H*W)
        occupied = (planes[:, 0] + planes[:, 1]).flatten(1)  # (B, H*W), 1 where a stone is
        log_p = F.log_softmax(logits + OCCUPIED_LOGIT * occupied, axis=-1)  # (B, H*W)
        # Pooling ops rather than reductions: Paddle Inference's oneDNN check of a mean reduction
        # prints a line to stdout every time a predictor is built.
        pooled = paddle.concat([F.adaptive_avg_pool2d(x, 1).flatten(1),
                                F.adaptive_max_pool2d(x, 1).flatten(1)], axis=1)  # (B, 2F)
        v = paddle.tanh(self.value_fc2(F.relu(self.value_fc1(pooled))))  # (B, 1)
        return log_p, v


def build_net(spec: NetSpec) -> nn.Layer:
    """The net ``spec`` describes.

    Raises:
        ValueError: an unknown architecture.
    """
    if spec.arch == "conv3":
        return PolicyValueNet(spec.width, spec.height, spec.channels)
    if spec.arch == "resnet":
        return ResidualPolicyValueNet(spec.width, spec.height, spec.res_blocks, spec.res_filters, spec.channels)
    if spec.arch == "sizefree":
        return SizeFreeNet(spec.res_blocks, spec.res_filters, spec.channels, spec.global_pool)
    raise ValueError(f"unknown architecture {spec.arch!r}: use one of {', '.join(ARCHS)}")


