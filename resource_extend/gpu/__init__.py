"""The GPU plugin: cards counted per product model."""
