#pragma once
// The method tables of apex._apexnpu, one per binding file, each ending with a null entry.
#include "python/binding.h"

namespace apexnpu::py {

extern PyMethodDef kCoreMethods[];       // bind_core.cpp: version, ISA, float status, fp16 conversion
extern PyMethodDef kAmpMethods[];        // bind_amp.cpp: unscale, grad norms, loss scaler
extern PyMethodDef kOptimMethods[];      // bind_optim.cpp: fused optimizer steps
extern PyMethodDef kEmulationMethods[];  // bind_emulation.cpp: fp16 and bf16 operations in one pass

// Adds module-level constants (dtype codes ...) defined by the binding files.
int add_core_constants(PyObject* module);
int add_optim_constants(PyObject* module);
int add_amp_types(PyObject* module);

}  // namespace apexnpu::py
