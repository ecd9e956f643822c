"""`python3 -m tri.triton kernels.py -o out/`: Triton kernels to Tri IR (tri.triton.main)."""

import sys

from . import main

sys.exit(main())
