//===- Passes.h - fly-snapshot passes ---------------------------*- C++ -*-===//

#ifndef FLY_TRANSFORMS_PASSES_H
#define FLY_TRANSFORMS_PASSES_H

#include "fly/Support/ToolOptions.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace fly {

#define GEN_PASS_DECL
#include "fly/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fly/Transforms/Passes.h.inc"

} // namespace fly

#endif // FLY_TRANSFORMS_PASSES_H
