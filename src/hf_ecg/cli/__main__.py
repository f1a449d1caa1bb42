"""``python -m hf_ecg.cli`` (as ``accelerate launch -m hf_ecg.cli`` runs it)."""

import sys

from . import main

sys.exit(main())
