"""Training losses: ``nn.Module`` classes registered by name (see
:mod:`adapter_zoo.losses.registry`); ``--loss`` and ``TrainingConfig.loss`` name one.

Example:
    >>> from adapter_zoo.losses import get_loss
    >>> get_loss("pairwise").summary
    'hinge on the (positive, negative) margin plus BCE (Laskar et al. 2020)'
"""

from adapter_zoo.losses.registry import (
    LossSpec,
    build_loss,
    default_loss,
    get_loss,
    loss_names,
    register_loss,
)

__all__ = ["LossSpec", "build_loss", "default_loss", "get_loss", "loss_names", "register_loss"]
