//===- Interrupts.h - What SIGINT/SIGTERM must undo -------------*- C++ -*-===//
//
// LLVM keeps a single interrupt function (sys::SetInterruptFunction): set
// from several places, the last one wins and a reset drops the others. The
// parts of fly-snapshot that must act on an interrupt (end child process
// groups, cancel Slurm arrays, empty a staging directory) register a
// callback here instead; on SIGINT, SIGTERM, SIGHUP or SIGUSR2 each runs
// once, in registration order, and the process then ends as interrupted.
//
// Callbacks run in a signal handler: async-signal-safe calls only, and they
// must decide from their own (atomic) state whether there is anything to do.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_INTERRUPTS_H
#define FLY_SUPPORT_INTERRUPTS_H

namespace fly {

using InterruptCallback = void (*)();

/// Registers `callback` for the rest of the process (registering it again
/// does nothing). At most 8 callbacks; false when full.
bool addInterruptCallback(InterruptCallback callback);

} // namespace fly

#endif // FLY_SUPPORT_INTERRUPTS_H
