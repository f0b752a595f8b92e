"""Resources counted per product model (GPU cards, NICs, ...): one plugin per ``CountedRecord`` subclass (its
``NAME`` and ``NOUN``) in its manifest (``manifest.py`` for GPUs), the code written once and parametrized
by name and wording."""
