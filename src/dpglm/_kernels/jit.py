"""The numba decorator shared by every kernel.

All kernels are compiled with the same options:

* ``cache=True``: compiled code is stored beside the module, so only the first
  import on a machine pays the compilation;
* ``nogil=True``: several fits can run at once in a thread pool;
* ``fastmath={"reassoc", "contract", "nsz"}``: reassociation lets LLVM vectorise
  reductions (1.8x faster than strict IEEE) and ``contract`` allows fused
  multiply-adds, while NaN and infinity keep their IEEE meaning (``fastmath=True``
  would also assume that they never occur, and make clipping of NaN undefined);
* ``error_model="numpy"``: a float division by zero gives ``inf`` or ``nan``
  instead of raising, which removes a branch from every division and lets loops
  that divide be vectorised.

With ``NUMBA_DISABLE_JIT=1`` numba returns the plain Python functions, and
``numba.prange`` is ``range``, so every kernel also runs as ordinary Python.
"""

from __future__ import annotations

import contextlib

import numba

FASTMATH = frozenset({"reassoc", "contract", "nsz"})


def kernel(func=None, *, parallel=False, fastmath=FASTMATH):
    """Compile ``func`` with the options shared by all kernels.

    Parameters
    ----------
    func : callable, optional
        The function to compile. Without it, return the decorator.
    parallel : bool, default=False
        Enable ``numba.prange``; only for kernels that use it.
    fastmath : set of str, default=FASTMATH
        LLVM fast-math flags. Helpers whose accuracy depends on the order of
        operations (such as :func:`dpglm._kernels.losses.fast_exp`) pass a
        smaller set.

    Returns
    -------
    callable
        The numba dispatcher, or ``func`` itself when ``NUMBA_DISABLE_JIT=1``.

    Examples
    --------
    >>> decorate = kernel(parallel=True)
    >>> callable(decorate)
    True

    Applied as ``@kernel`` or ``@kernel(parallel=True)`` to a module-level
    function (caching needs a source file).
    """
    options = {
        "cache": True,
        "nogil": True,
        "fastmath": set(fastmath),
        "error_model": "numpy",
    }
    if parallel:
        options["parallel"] = True
    decorate = numba.njit(**options)
    return decorate if func is None else decorate(func)


#: dense full-gradient kernels over fewer entries than this run on one thread:
#: waking the second one costs tens of microseconds, milliseconds on a loaded machine
PARALLEL_MIN_ENTRIES = 1 << 20


@contextlib.contextmanager
def threads_for(entries: float):
    """Run parallel kernels on one numba thread when a call reads fewer than
    :data:`PARALLEL_MIN_ENTRIES` entries, on the default number otherwise.

    Examples
    --------
    >>> with threads_for(1000):
    ...     numba.get_num_threads()
    1
    """
    if entries >= PARALLEL_MIN_ENTRIES:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _prefetch_python(a, i):
    """Pure-Python stand-in for :func:`prefetch`: a hint has no effect."""


if numba.config.DISABLE_JIT:
    prefetch = _prefetch_python
else:
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, a, i):
        """Hint the CPU to load ``a[i]`` (1-D contiguous ``a``) into the L1 cache.

        A prefetch never faults and has no visible effect; it only starts the
        memory transfer early, so that a loop doing other work overlaps with it.
        """
        sig = numba.types.void(a, i)

        def codegen(context, builder, signature, args):
            array = context.make_array(signature.args[0])(context, builder, args[0])
            pointer = builder.bitcast(
                builder.gep(array.data, [args[1]]), ir.IntType(8).as_pointer()
            )
            int32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [pointer.type, int32, int32, int32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            # read access, highest temporal locality (all cache levels), data cache
            builder.call(fn, [pointer, int32(0), int32(3), int32(1)])
            return context.get_dummy_value()

        return sig, codegen
