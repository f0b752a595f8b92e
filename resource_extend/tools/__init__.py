"""The operator's tools beside the verbs, which core never calls: ``doctor`` (doctor.py, with the pure
checks of one record in diagnosis.py) and ``explain`` (explain.py)."""
