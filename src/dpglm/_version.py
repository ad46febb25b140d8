"""The library's version, in a leaf module that every layer may import.

The package top re-exports it as ``dpglm.__version__``; the privacy report
records it without importing the package top, which would run upward.

Examples
--------
>>> from dpglm._version import __version__
>>> __version__ == __import__("dpglm").__version__
True
"""

__version__ = "0.1.0.dev0"
