"""The wheel: built from python/ by scikit-build-core, installed into a fresh venv, imported
with no DGEMM_* variable set; it must find its own runtime library and its complete kernel
bundle (the runtime's index and checksum check, dgemm_check_kernel_bundle). No GPU needed.

The bundle packaged is ``$DGEMM_BUNDLE_DIR``, else the build's ``share/dgemm/kernels``
(``$DGEMM_BUILD_DIR``, else ``build/``), which the project's build generates. With
``$DGEMM_WHEEL`` set, that wheel (from scripts/build_wheel.sh, of the same bundle) is installed
instead of one built here: how the GPU machine, which has no MLIR, tests the release wheel. Skipped, with
the reason, without scikit-build-core (``scripts/install-deps.sh --python`` installs it) or
without such a bundle.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

_PYTHON_DIR = Path(__file__).resolve().parents[1]
_REPO = _PYTHON_DIR.parent


def _bundle_dir():
    for d in (os.environ.get("DGEMM_BUNDLE_DIR"),
              os.path.join(os.environ.get("DGEMM_BUILD_DIR") or _REPO / "build",
                           "share", "dgemm", "kernels")):
        if d and (Path(d) / "index.txt").is_file():
            return Path(d)
    return None


def _clean_env():
    # Nothing may point the installed package at the repository.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DGEMM_") and k != "PYTHONPATH"}
    return env


def _probe(installed, code, timeout=120):
    """Runs ``code`` in the installed environment; a failure shows its stderr."""
    out = subprocess.run([str(installed["python"]), "-c", code], capture_output=True,
                         text=True, env=installed["env"], cwd=installed["work"],
                         timeout=timeout)
    if out.returncode != 0:
        pytest.fail(f"the installed package's probe exited {out.returncode}:\n"
                    f"{out.stderr[-4000:]}")
    return out


_PROBE = r"""
import json, pathlib, dgemm
from dgemm import _runtime
info = dgemm.check_kernel_bundle()
pkg = pathlib.Path(dgemm.__file__).resolve().parent
print(json.dumps({"package": str(pkg), "library": str(_runtime.loaded_path()),
                  "version": dgemm.runtime_version(), **info}))
"""

_TORCH_PROBE = r"""
import torch, dgemm
dgemm.k_grouped_fp8_gemm_nt_contiguous  # imports the module that defines the op
op = torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous
print(type(op).__name__)
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    if not os.environ.get("DGEMM_WHEEL"):
        try:
            import scikit_build_core  # noqa: F401
        except ImportError:
            pytest.skip("scikit-build-core is not installed (scripts/install-deps.sh --python "
                        "installs it)")
    bundle = _bundle_dir()
    if bundle is None:
        pytest.skip("no kernel bundle to package: build the project (it generates "
                    "build/share/dgemm/kernels) or set DGEMM_BUNDLE_DIR")
    work = tmp_path_factory.mktemp("wheel")
    wheelhouse = work / "wheelhouse"
    env = _clean_env()
    if os.environ.get("DGEMM_WHEEL"):
        # A wheel built elsewhere (scripts/build_wheel.sh), from the bundle given.
        wheels = [Path(os.environ["DGEMM_WHEEL"]).resolve()]
    else:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
             "--disable-pip-version-check", "-w", str(wheelhouse),
             f"-Ccmake.define.DGEMM_BUNDLE_DIR={bundle}",
             f"-Cbuild-dir={work / 'build'}", str(_PYTHON_DIR)],
            check=True, env=env, cwd=work, timeout=900)
        wheels = sorted(wheelhouse.glob("dgemm-*.whl"))
    assert len(wheels) == 1, wheels
    venv = work / "venv"
    # The system's site-packages: torch (and pip) are reused, not downloaded.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        # This interpreter is itself a virtual environment (the GPU machine's torch lives in
        # one): --system-site-packages reaches the base interpreter's packages only, so its
        # own site-packages are added after the new environment's (which still win).
        site_dir = Path(subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True, timeout=60).stdout.strip())
        import site
        (site_dir / "_dgemm_test_parent.pth").write_text(
            "".join(f"{p}\n" for p in site.getsitepackages()))
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--disable-pip-version-check", str(wheels[0])],
                   check=True, env=env, cwd=work, timeout=300)
    return {"wheel": wheels[0], "python": python, "env": env, "work": work, "bundle": bundle}


def test_wheel_is_a_linux_wheel_with_library_and_bundle(installed):
    wheel = installed["wheel"]
    # This machine's build is a linux_x86_64 wheel; scripts/build_wheel.sh's is manylinux_2_28
    # (auditwheel's tag lists the older policies it also meets).
    assert (wheel.name == "dgemm-0.1.0-py3-none-linux_x86_64.whl"
            or (wheel.name.startswith("dgemm-0.1.0-py3-none-")
                and wheel.name.endswith("manylinux_2_28_x86_64.whl"))), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "dgemm/libdgemm_runtime.so" in names
    assert "dgemm/kernels/index.txt" in names
    kernels = [line.split()[0][len("kernel="):] for line in
               (installed["bundle"] / "index.txt").read_text().splitlines()
               if line.startswith("kernel=")]
    assert kernels
    for entry in kernels:
        assert f"dgemm/kernels/{entry}.meta" in names
        assert f"dgemm/kernels/{entry}.ptx" in names


def test_installed_package_finds_its_library_and_complete_bundle(installed):
    out = _probe(installed, _PROBE, timeout=120)
    info = json.loads(out.stdout.strip().splitlines()[-1])
    package = Path(info["package"])
    assert package.parent.name == "site-packages", info
    assert str(package).startswith(str(installed["work"] / "venv")), info
    assert Path(info["library"]) == package / "libdgemm_runtime.so", info
    assert Path(info["dir"]) == package / "kernels", info
    expected = sum(1 for line in (installed["bundle"] / "index.txt").read_text().splitlines()
                   if line.startswith("kernel="))
    assert info["kernels"] == expected, info
    assert "kernel ABI" in info["version"]


def test_installed_package_reports_a_damaged_bundle(installed, tmp_path):
    # The same check on a copy of the installed bundle with one file cut short.
    out = _probe(installed, "import dgemm, pathlib; print(dgemm.__file__)", timeout=120)
    kernels = Path(out.stdout.strip()).parent / "kernels"
    damaged = tmp_path / "kernels"
    damaged.mkdir()
    for f in kernels.iterdir():
        (damaged / f.name).write_bytes(f.read_bytes())
    victim = sorted(damaged.glob("*.ptx"))[0]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    probe = f"import dgemm; dgemm.check_kernel_bundle({str(damaged)!r})"
    res = subprocess.run([str(installed["python"]), "-c", probe], capture_output=True,
                         text=True, env=installed["env"], cwd=installed["work"], timeout=120)
    assert res.returncode != 0
    assert f"{victim.name}: checksum" in res.stderr


def test_installed_package_registers_the_torch_op(installed):
    pytest.importorskip("torch")
    out = _probe(installed, _TORCH_PROBE, timeout=300)
    assert out.stdout.strip() == "OpOverloadPacket"


_SEED_PROBE = r"""
import json, torch, dgemm
from dgemm.testing import calc_diff
ks, m, n = [256, 128, 128, 256], 2048, 2048
g = torch.Generator(device="cuda").manual_seed(0)
x_a = torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16, generator=g)
x_b = torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16, generator=g)
a, b = dgemm.make_k_grouped_operand(x_a, ks), dgemm.make_k_grouped_operand(x_b, ks)
kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
d = torch.full((len(ks), m, n), float("nan"), device="cuda")
dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt)
first = d.clone()
ref = dgemm.k_grouped_reference(a, b, ks, m, n)
same = 0
for _ in range(50):
    d.fill_(float("nan"))
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt)
    same += bool(torch.equal(d, first))
print(json.dumps({"diff": calc_diff(first.double(), ref), "bitwise_equal_repeats": same,
                  "library": str(dgemm._runtime.loaded_path())}))
"""


@pytest.mark.gpu
def test_installed_package_runs_the_seed_case_on_the_gpu(installed):
    # The check on the GPU machine: the wheel, installed into a fresh environment with
    # no DGEMM_* variable, runs the bug report's shape correct and bitwise repeatable.
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device (torch.cuda.is_available() is False)")
    out = _probe(installed, _SEED_PROBE, timeout=600)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"wheel seed case: {r}")
    assert r["library"].startswith(str(installed["work"] / "venv")), r
    assert r["diff"] < 1e-3, r
    assert r["bitwise_equal_repeats"] == 50, r
