"""Builds Huawei's Ascend apex tree (the working directory) into a wheel, as its setup.py does
with ``--cpp_ext``, but with torch's own cpp_extension: ``python setup_cpp_ext.py bdist_wheel``.
See huawei_apex.py."""

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="apex",
    version="0.1+ascend",
    packages=find_packages(
        exclude=("build", "csrc", "include", "tests", "dist", "docs", "examples", "apex.egg-info")
    ),
    ext_modules=[
        CppExtension("apex_C", ["csrc/flatten_unflatten.cpp"]),
        CppExtension("change_data_ptr", ["csrc/combine_tensors/change_dataptr.cpp"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
