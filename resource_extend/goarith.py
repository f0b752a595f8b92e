"""Go's arithmetic where Python's differs, as the reference computes deploy capacity: integer division that
truncates, and core's float division that answers 0 for a 0 on either side.

Every calculate verb and the GPU plugin's node verbs use it; get-nodes-deploy-capacity's answer is
``capacity``, which only its verb loads.
"""

from __future__ import annotations


def ratio(a: int, b: int) -> float:
    """Core's ``AdvancedDivide`` over the two values as float64: 0 when either is 0."""
    return 0.0 if a == 0 or b == 0 else float(a) / float(b)


def trunc_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero (Python's ``//`` floors)."""
    return a // b if (a >= 0) == (b >= 0) else -(abs(a) // abs(b))
