# SPDX-License-Identifier: Apache-2.0
"""Bundles libpld.so into the package when it is built: PLD_LIBRARY names
it, else the source tree's build/src/libpld.so. The package then finds its
own copy (pld/_lib.py); without one it looks for an installed libpld."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("PLD_LIBRARY") or os.path.join(HERE, "..", "build", "src", "libpld.so")
        if os.path.exists(lib):
            dest = os.path.join(self.build_lib, "pld", "libpld.so")
            shutil.copyfile(os.path.realpath(lib), dest)


setup(cmdclass={"build_py": BuildWithLibrary})
