"""FedIMA's Fashion-MNIST CNN (Zhou et al. 2024, Table IV, "FMNIST (CNN)" column).

The paper's App. D describes it as "two 5x5 convolutional layers followed by 2x2 max
pooling and two fully connected layers with ReLU activation" and Table IV keeps its last
two layers, FC(384,128) and FC(128,10); the layers the text conversion lost are those of
the official code (``model.py``, ``fmnist``)::

    Conv2d(1, 32, 5) -> ReLU -> MaxPool2d(2)      # 28x28 -> 24x24 -> 12x12
    Conv2d(32, 32, 5) -> ReLU -> MaxPool2d(2)     # 12x12 -> 8x8 -> 4x4
    flatten (32 * 4 * 4 = 512)
    Linear(512, 384) -> ReLU -> Linear(384, 128) -> ReLU -> Linear(128, C)

No padding, no normalisation, no dropout; 274,026 parameters for 10 classes.  The
network has no buffers, so its whole state is its parameters.
"""
from __future__ import annotations

from flcore.models.cnn import TwoConvCNN

#: Input side length the flattened size 512 is computed for.
FMNIST_CNN_IMAGE_SIZE = 28
_FLAT_FEATURES = 32 * 4 * 4


class FMNISTCNN(TwoConvCNN):
    """FedIMA's 2-conv / 3-FC network for ``[N, in_channels, 28, 28]`` input; ``features``
    returns the 128-d penultimate activations (the official code's ``y_feature``)."""

    def __init__(self, num_classes: int, in_channels: int = 1) -> None:
        super().__init__(num_classes, in_channels, channels=32, flat_features=_FLAT_FEATURES, hidden=(384, 128))
