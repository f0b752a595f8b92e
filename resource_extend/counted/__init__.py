"""Resources counted per product model (GPU cards, NICs, ...): one plugin per ``Words`` and ``CountedRecord``
subclass in its manifest (``gpu.py``), the code written once and parametrized by name and wording."""
