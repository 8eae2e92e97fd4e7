"""xattn: the Python side of the xattn project (see python/README.md).

Importing this package is cheap and needs neither the compiled library nor
numpy/scipy: the tools import what they use when they run. Subpackages:

  xattn.results   results files: row names (parse_name), loading, storing
  xattn.suites    workload plans of bench suites (read through bench's parser)
  xattn.perf      `xattn compare`, `xattn history`, the run-targets summary
  xattn.plot      `xattn plot`
  xattn.peers     PyTorch / ONNX Runtime peers (`xattn peers`)
  xattn.cases     case folders: `xattn make-case`, the numpy `xattn oracle`
  xattn.children  child processes (benchmarks, builds, peers) that end with the tool

`python3 -m xattn COMMAND ...` runs any command (xattn/__main__.py).
The binding of the compiled library (xattn.extend_attention, reference,
resolve, info, XattnError: xattn/api.py; SGLang / IPEX signatures:
xattn.adapters) is loaded on first use through __getattr__ below, so that the
tools work where the library is not built.
"""

# Names served lazily by a submodule: name -> module (relative to this package).
_LAZY = {"extend_attention": "api", "reference": "api", "resolve": "api", "info": "api",
         "XattnError": "api", "library_path": "api", "adapters": None}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'xattn' has no attribute {name!r}")
    import importlib
    module = _LAZY[name]
    if module is None:  # a submodule itself
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{module}", __name__), name)
