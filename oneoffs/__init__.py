"""One-off research scripts, outside the installed package: each measured one thing, and its
result is recorded in docs/results.md (oneoffs/README.md says where). Run from a checkout:
``python -m oneoffs.NAME``."""
