"""numba's ``njit`` for the core, cached on disk; the same functions as plain Python without numba.

The first start compiles the kernels (about a minute of CPU, the threat searches' kernels
included) and caches them beside the module; later starts load them in a second or two
(``cache``: where, and the lock that lets one process of the machine compile them). ``NUMBA_DISABLE_JIT=1`` runs the
kernels as plain Python (slow, for debugging). Without numba installed the core is off and
the search runs the reference Python trees (``available`` is False).
"""

from __future__ import annotations

try:
    import numba
    from numba import types
    from numba.typed import Dict, List

    available = True
except ImportError:  # the core is an accelerator, never a requirement of correctness
    numba = types = Dict = List = None
    available = False


def njit(function):
    """``numba.njit(cache=True)``, or the function itself where numba is missing.

    A call from compiled code types its constant arguments as literals (``Literal[int](0)``, a
    module constant's value), and numba would compile the callee once for each set of literals
    it meets (``vcf.search`` is called with five). The dispatcher here types every call with the
    literals' plain types (int64, bool), so each kernel compiles once; no kernel may therefore
    need a literal argument (a tuple indexed by an argument)."""
    if numba is None:
        return function
    dispatcher = numba.njit(cache=True, nogil=True)(function)
    if not hasattr(dispatcher, "get_call_template"):
        return dispatcher  # NUMBA_DISABLE_JIT: numba hands back the plain function
    template = dispatcher.get_call_template

    def plain_call_template(args, kws):
        return template(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = plain_call_template
    return dispatcher
