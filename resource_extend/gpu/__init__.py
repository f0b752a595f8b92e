"""The GPU plugin, and every resource counted per product model (GPU cards, NICs, ...): one plugin per
``CountedRecord`` subclass (its ``NAME`` and ``NOUN``), declared by one ``manifest.counted_plugin`` call, the
code written once and parametrized by name and wording."""
