"""Deploy-capacity arithmetic both plugins share, in the reference's (Go's) number semantics.

Every calculate verb and the GPU plugin's node verbs load it: get-nodes-deploy-capacity's answer and ``Limit``
(explain's) are in ``capacity.answer``, which only those import; get-nodes-deploy-capacity's request in
``capacity.request``.
"""

from __future__ import annotations


def ratio(a: int, b: int) -> float:
    """Core's ``AdvancedDivide`` over the two values as float64: 0 when either is 0."""
    return 0.0 if a == 0 or b == 0 else float(a) / float(b)


def trunc_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero (Python's ``//`` floors)."""
    return a // b if (a >= 0) == (b >= 0) else -(abs(a) // abs(b))
