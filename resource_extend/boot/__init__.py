"""What the executables run before the plugin: build.py copies these files into each archive, and the
library never imports them."""
