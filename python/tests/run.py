"""ctest's driver for the binding's pytest suite: skips (exit 77) with a
note when this Python lacks pytest or numpy, else runs pytest."""

import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print("python_binding: skipped: %s (apt-get install python3-pytest "
          "python3-numpy)" % e)
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", here]
                     + sys.argv[1:]))
