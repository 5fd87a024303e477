#!/usr/bin/env bash
# The Python binding's PyPI dependencies (pytest, psutil, matplotlib), put
# into the venv that `make test-python` uses, together with the package.
set -euo pipefail
cd "$(dirname "$0")/../.."
make python-install
