"""The wheel's packages, found rather than listed: a hand-kept list left praib.tables out of the wheel.

The folders generation/ and perturb/ are the packages praib.generation and praib.perturb. setuptools'
``find:`` (setup.cfg) cannot give what it finds in a folder another package's name, so the packages
are found here, in each folder of PACKAGE_DIRS, and named as it maps them. Everything else is in setup.cfg.
"""

from setuptools import find_packages, setup

#: The folder of each top-level package.
PACKAGE_DIRS = {"praib": "praib", "praib.generation": "generation", "praib.perturb": "perturb",
                # The evaluate modules (metrics/<name>: no Python package, their files are package data).
                "praib.evaluate_modules": "metrics"}

setup(
    package_dir=PACKAGE_DIRS,
    packages=[f"{package}.{found}" if found else package
              for package, folder in PACKAGE_DIRS.items() for found in ["", *find_packages(folder)]],
)
