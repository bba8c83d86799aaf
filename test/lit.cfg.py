# -*- Python -*-
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
# LLVM's own llc, for tests that show what upstream lowerings become in PTX.
llvm_config.add_tool_substitutions(["llc"], [config.llvm_tools_dir])

# Generated PTX is assembled for sm_90a wherever ptxas is installed.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))


# cuobjdump (with nvdisasm) disassembles the assembled kernels for the SASS tests. The lookup
# is scripts/sass_report.py's, run by the Python that scripts/install-deps.sh installs packages
# for ($PYTHON, else python3 on PATH), which may hold NVIDIA's cuobjdump and nvdisasm wheels.
def find_cuobjdump():
    py = shutil.which(os.environ.get("PYTHON", "python3")) or sys.executable
    script = os.path.join(config.dgemm_src_root, "scripts", "sass_report.py")
    try:
        out = subprocess.run([py, script, "--find-cuobjdump"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


cuobjdump = find_cuobjdump()
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
