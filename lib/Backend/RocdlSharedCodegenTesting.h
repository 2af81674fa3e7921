//===- RocdlSharedCodegenTesting.h - Hooks for its tests ------*- C++ -*-===//
//
// The check of a target's continuations and a continuation waiting for its
// verdict happen on two threads; a unit test orders them through these
// hooks instead of timing them.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_LIB_BACKEND_ROCDLSHAREDCODEGENTESTING_H
#define FLY_LIB_BACKEND_ROCDLSHAREDCODEGENTESTING_H

#include <functional>

namespace fly {

/// Each told which check: of continuations from before the first pass that
/// reads the pressure limits (`early`), or from the cut.
struct RocdlSharedCodegenTestHooks {
  /// On the thread that claimed a target's check, before it runs.
  std::function<void(bool early)> checking;
  /// On a thread whose continuation is to wait for another's check.
  std::function<void(bool early)> awaitingVerdict;
  /// On the thread making a state to continue elsewhere from, before it
  /// compiles (other variants of its module wait for it meanwhile).
  std::function<void()> makingState;
  /// On the thread that checks continuations elsewhere, before the whole
  /// compile the check compares them with, and before the continuation from
  /// the cut it checks then (`fromCut`).
  std::function<void(bool fromCut)> checkingElsewhere;
};

/// Replaces the hooks; set only while no variant compiles.
void setRocdlSharedCodegenTestHooks(RocdlSharedCodegenTestHooks hooks);

} // namespace fly

#endif // FLY_LIB_BACKEND_ROCDLSHAREDCODEGENTESTING_H
