"""Puts libtrainsim.so into the package: the library TRAINSIM_LIBRARY names, else the
repository's build/libtrainsim.so, built with CMake first when it is missing. The package then
needs nothing from the source tree (only Debian's libsimgrid and libyaml, which the library
links)."""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def library_path():
    given = os.environ.get("TRAINSIM_LIBRARY")
    if given:
        if not os.path.isfile(given):
            raise SystemExit(f"trainsim: TRAINSIM_LIBRARY={given}: no such file")
        return given
    build = os.environ.get("TRAINSIM_BUILD_DIR", os.path.join(REPO, "build"))
    built = os.path.join(build, "libtrainsim.so")
    if not os.path.isfile(built):
        if not os.path.isfile(os.path.join(REPO, "CMakeLists.txt")):
            raise SystemExit("trainsim: set TRAINSIM_LIBRARY to a built libtrainsim.so")
        subprocess.check_call(["cmake", "-S", REPO, "-B", build])
        subprocess.check_call(["cmake", "--build", build, "--target", "trainsim_shared",
                               "-j", str(os.cpu_count() or 1)])
    return built


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "trainsim", "libtrainsim.so")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(library_path(), target)


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
