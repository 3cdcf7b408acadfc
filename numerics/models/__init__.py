"""The built-in model kinds, one file each, each one ``numerics.kinds.register(Kind(...))``:
``token_sum`` (Marion et al. 2025), ``dohmatob`` (Dohmatob 2025, with its samplers as
simulators) and ``multihead`` (Sagitova et al. 2026). Importing this package registers them,
in this order (``numerics`` does)."""

from . import token_sum  # noqa: F401, I001
from . import dohmatob  # noqa: F401, I001
from . import multihead  # noqa: F401, I001
