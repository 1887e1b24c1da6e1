"""Developer tools, outside the installed package: run from a checkout (``python -m devtools.NAME``).
They use the package; the package never imports them."""
