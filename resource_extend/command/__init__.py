"""The command tree both executables share: the command line (cli.py), a plugin's manifest and its calls
(verb.py, with the protocols its parts follow in protocols.py), the node verbs both plugins answer alike
(nodeverbs.py, nodeupkeep.py, deploy.py), the help texts (helptext.py, verbhelp.py) and what the library
knows of the executable it runs in (executable.py)."""
