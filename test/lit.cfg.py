# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats

config.name = "fly-snapshot"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fly_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

# A hang fails its test instead of the whole run (lit kills the process tree
# with psutil: python3-psutil, scripts/setup.sh). --timeout overrides it.
if not lit_config.maxIndividualTestTime:
    try:
        import psutil  # noqa: F401

        lit_config.maxIndividualTestTime = 600
    except ImportError:
        lit_config.warning("no per-test timeout: python3-psutil is not installed")

# Tools: ours first, then LLVM 22's (mlir-opt, FileCheck, not, split-file).
config.environment["PATH"] = os.pathsep.join(
    [config.fly_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
# Tests must not share or reuse a user's compile cache.
config.environment["FLY_CACHE_DIR"] = os.path.join(config.test_exec_root, "fly-cache")
for var in ["FLY_ENABLE_CACHE", "FLY_DUMP_IR", "FLY_DUMP_DIR"]:
    config.environment.pop(var, None)

config.substitutions.append(("%fly_plugin", config.fly_plugin))
config.substitutions.append(("%fly_src", config.fly_src_root))
config.substitutions.append(("%fly_obj", config.fly_obj_root))
config.substitutions.append(("%fly_capi_lib", config.fly_capi_lib))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%llvm_prefix", os.path.dirname(config.llvm_tools_dir)))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))
config.substitutions.append(("%rocm_toolkit", config.rocm_toolkit))
# The system's python3 (Debian's, not one of a version manager) and whether
# it can make virtual environments (python3-venv): test/Python.
system_python = ("/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                 else shutil.which("python3") or "python3")
if subprocess.run([system_python, "-c", "import ensurepip, venv"],
                  capture_output=True).returncode == 0:
    config.available_features.add("python-venv")
config.substitutions.append(("%system_python", system_python))
config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit))

# Each backend toolchain is a feature, so its tests skip where it is missing.
if config.rocm_toolkit and os.path.exists(
    os.path.join(config.rocm_toolkit, "llvm", "bin", "ld.lld")
):
    config.available_features.add("rocdl-toolkit")
if config.ptxas and os.access(config.ptxas, os.X_OK):
    config.available_features.add("ptxas")

# fly-run (test/Runtime): the HIP backend plugin, and real devices. A device
# feature is only set when fly-run --probe really finds one, so GPU tests
# skip cleanly on GPU-less machines and in CI.
import subprocess

fly_run = os.path.join(config.fly_tools_dir, "fly-run")
if os.path.exists(os.path.join(config.fly_lib_dir, "libFlyRuntimeHip.so")):
    config.available_features.add("hip-backend")


def fly_run_probe(backend):
    env = {k: v for k, v in os.environ.items()
           if k not in ("FLY_LIBCUDA", "FLY_HIP_BACKEND")}
    try:
        return subprocess.run([fly_run, "--probe", "--backend=" + backend],
                              env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


if os.access(fly_run, os.X_OK):
    if fly_run_probe("cuda"):
        config.available_features.add("cuda-device")
    if fly_run_probe("hip"):
        config.available_features.add("hip-device")

# Disk-full tests mount a small tmpfs: only where mounting works (root with
# CAP_SYS_ADMIN); elsewhere they are unsupported.
def can_mount_tmpfs():
    import tempfile
    point = tempfile.mkdtemp(prefix="fly-lit-mount-")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", point],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          timeout=10).returncode != 0:
            return False
        subprocess.run(["umount", point], timeout=10)
        return True
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        try:
            os.rmdir(point)
        except OSError:
            pass


if can_mount_tmpfs():
    config.available_features.add("tmpfs-mount")

# test/Tools/out-dir-no-exchange.test: strace, where ptrace is allowed, makes
# a filesystem without renameat2's exchange and interrupts at chosen calls.
try:
    if shutil.which("strace") and subprocess.run(
            ["strace", "-o", "/dev/null", "true"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=10).returncode == 0:
        config.available_features.add("strace")
except (OSError, subprocess.SubprocessError):
    pass

# test/SelfContained: the -DFLY_SELF_CONTAINED=ON artefacts, and (as root)
# a private mount namespace in which to hide the system's LLVM from them.
if config.fly_self_contained.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("self-contained")
try:
    if os.geteuid() == 0 and subprocess.run(
            ["unshare", "-m", "true"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=10).returncode == 0:
        config.available_features.add("mount-namespace")
except (OSError, subprocess.SubprocessError):
    pass

# Slurm (test/Slurm): the test cluster of scripts/slurm-local.sh, never the
# user's SLURM_CONF. The feature is set only when its controller answers.
slurm_conf = os.environ.get("FLY_TEST_SLURM_CONF") or os.path.join(
    os.environ.get("FLY_SLURM_RUN", "/tmp/fly-slurm"), "slurm.conf")
config.environment.pop("SLURM_CONF", None)
if shutil.which("scontrol") is None:
    lit_config.note("test/Slurm skipped: Slurm is not installed "
                    "(scripts/slurm-local.sh start installs and starts it)")
elif not os.path.exists(slurm_conf):
    # (scontrol would look for a controller in DNS without it.)
    lit_config.note("test/Slurm skipped: no test cluster (" + slurm_conf +
                    " does not exist; scripts/slurm-local.sh start)")
else:
    try:
        slurm_up = subprocess.run(
            ["scontrol", "ping"], env=dict(os.environ, SLURM_CONF=slurm_conf),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        slurm_up = False
    if slurm_up:
        config.available_features.add("slurm")
        config.environment["SLURM_CONF"] = slurm_conf
    else:
        lit_config.note("test/Slurm skipped: no controller answers "
                        "'scontrol ping' with SLURM_CONF=" + slurm_conf +
                        " (scripts/slurm-local.sh start)")

# The docs test (test/Docs) skips blocks whose toolchain is missing.
config.substitutions.append(
    ("%fly_features", ",".join(sorted(config.available_features)) or "none"))
