#pragma once
// change_data_ptr(dst, src, offset): re-points dst into src's storage, `offset` elements after
// src's first element (src.offset + offset in the storage); dst keeps its numel and dtype and
// shares ownership of the storage, so it stays valid after src and every other view are gone.
// ArgumentError, each with its own message, for: a negative offset; a src without storage;
// dtypes that differ or are not float16/float32; dst.numel + offset beyond src.numel.
#include <cstdint>

#include "tensor/tensor_view.h"

namespace apexnpu::rt {

void change_data_ptr(TensorView& dst, const TensorView& src, std::int64_t offset);

}  // namespace apexnpu::rt
