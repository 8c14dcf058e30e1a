# ruff: noqa: F401  (re-exports)
from ._error_code import *  # noqa: F401,F403 - torch_npu 1.x named it error_code
from ._error_code import ErrCode, dist_error, graph_error, ops_error, pta_error, prof_error
