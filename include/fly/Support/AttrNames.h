//===- AttrNames.h - Attribute names fly writes into IR ---------*- C++ -*-===//
//
// One header for the names, so that the libraries that write them and the
// passes that read them need not depend on each other.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_ATTRNAMES_H
#define FLY_SUPPORT_ATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace fly {

/// On a variant module: its canonical hint set.
inline constexpr llvm::StringLiteral kHintsAttrName = "fly.hints";

/// On a gpu.module: its precompiled ISA, an array with one
/// #gpu.object<..., assembly> per target, in target order (fly-assemble-isa
/// finishes it; SharedIsa.h writes it).
inline constexpr llvm::StringLiteral kIsaAttrName = "fly.isa";

} // namespace fly

#endif // FLY_SUPPORT_ATTRNAMES_H
