#!/usr/bin/env python3
"""Stands in for dgemm-opt in fuzz-opt.test: aborts on every input, so the
test shows that the fuzzer reports a crash (it is not a test that cannot
fail)."""
import os

os.abort()
