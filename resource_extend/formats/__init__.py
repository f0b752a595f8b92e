"""The input and output formats: JSON as Go writes it (jsonio.py), the config's YAML subset (yamlsubset.py),
Go's number and decoding rules (decoding.py), and the JSON Schema checks of every verb's request and answer
(validation.py, schemafiles.py, schemaerror.py, bigdocs.py)."""
