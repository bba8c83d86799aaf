# -*- Python -*-
import glob
import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DGEMM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.substitutions.append(("%python", sys.executable))
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dgemm_obj_root, "test")

# Every FileCheck variable is scoped to its CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%dgemm_src", config.dgemm_src_root))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.dgemm_tools_dir, config.llvm_tools_dir]
tools = ["dgemm-opt", "dgemm-translate", "not", "count"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Generated PTX is assembled for sm_90a wherever ptxas is installed.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))


# cuobjdump (with nvdisasm beside it) disassembles the assembled kernels for the SASS tests:
# the CUDA toolkit's, or the one scripts/install-deps.sh installs from NVIDIA's PyPI wheel
# into the Python it installs packages for ($PYTHON, else python3 on PATH).
def find_cuobjdump():
    for cand in (shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"):
        if cand and os.access(cand, os.X_OK) and (
                shutil.which("nvdisasm") or os.path.exists(os.path.join(os.path.dirname(cand), "nvdisasm"))):
            return cand
    py = shutil.which(os.environ.get("PYTHON", "python3"))
    if not py:
        return None
    try:
        out = subprocess.run([py, "-c", "import nvidia; print(chr(10).join(nvidia.__path__))"],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for base in out.split():
        for cand in sorted(glob.glob(os.path.join(base, "cu*", "bin", "cuobjdump"))):
            if os.access(cand, os.X_OK) and os.path.exists(os.path.join(os.path.dirname(cand), "nvdisasm")):
                return cand
    return None


cuobjdump = find_cuobjdump()
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
