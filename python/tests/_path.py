"""Makes the package importable when the tests run from a checkout (python3 -m unittest discover -s python/tests)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
