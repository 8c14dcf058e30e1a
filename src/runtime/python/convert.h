#pragma once
// Python values -> runtime values for the binding: segment tables, dtypes, option dicts.
#include <string>
#include <vector>

#include "backend/dtype.h"
#include "python/binding.h"
#include "tensor/segment_table.h"

namespace apexnpu::py {

// A sequence of (offset, numel) pairs (elements) -> SegmentTable. Returns false with a Python
// exception set on bad input; the runtime's own checks (overlap) throw ArgumentError.
bool parse_segments(PyObject* seq, std::vector<rt::Segment>& out);
// A dtype code (DTYPE_FLOAT32 / DTYPE_FLOAT16 ...) -> DType; false with ValueError otherwise.
bool parse_dtype(int code, rt::DType& out);
// A Python float/int/bool -> double / bool, false with TypeError naming `what`.
bool as_double(PyObject* v, const char* what, double& out);
bool as_bool(PyObject* v, const char* what, bool& out);
// A sequence of non-negative ints -> sizes.
bool parse_sizes(PyObject* seq, const char* what, std::vector<std::size_t>& out);

}  // namespace apexnpu::py
