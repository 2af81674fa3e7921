// Errors fly-snapshot reports before it compiles anything, each at the
// location it concerns and each failing the run. IR-shape cases share one
// pipeline and are the `// -----` splits of ir-shape.mlir; every option case
// needs its own options, so it gets its own file (split-file) with its own
// expected diagnostics, checked with -verify-diagnostics and then run once
// more without it to see mlir-opt exit non-zero.

// RUN: rm -rf %t && split-file %s %t
// DEFINE: %{opt} = mlir-opt --load-pass-plugin=%fly_plugin -o /dev/null

// RUN: %{opt} -split-input-file -verify-diagnostics %t/ir-shape.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\"})"
// Without the expected-* comments (which mlir-opt 22 reports in split mode
// even without -verify-diagnostics), one error per split and a failing exit.
// RUN: grep -v "expected-" %t/ir-shape.mlir > %t/ir-shape-plain.mlir
// RUN: not %{opt} -split-input-file %t/ir-shape-plain.mlir 2>&1 \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\"})" \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// SHAPE:      ir-shape-plain.mlir:[[#]]:1: error: fly-snapshot found no gpu.module with a target attribute
// SHAPE:      ir-shape-plain.mlir:[[#]]:5: error: kernel @k is still a gpu.func
// SHAPE:      ir-shape-plain.mlir:[[#]]:3: error: gpu.module @kernels has no llvm.func
// SHAPE:      ir-shape-plain.mlir:[[#]]:3: error: hint 'waves_per_eu' (hint set 'waves_per_eu=2') does not apply to a nvvm target
// SHAPE-NOT:  error:

// RUN: %{opt} -verify-diagnostics %t/unknown-hint.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;wave_per_eu=2\"})"
// RUN: not %{opt} %t/unknown-hint.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=1;wave_per_eu=2\"})"

// RUN: %{opt} -verify-diagnostics %t/waves-out-of-range.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=99\"})"
// RUN: not %{opt} %t/waves-out-of-range.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=99\"})"

// RUN: %{opt} -verify-diagnostics %t/maxnreg-ill-typed.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=abc\"})"
// RUN: not %{opt} %t/maxnreg-ill-typed.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=abc\"})"

// RUN: %{opt} -verify-diagnostics %t/nvvm-maxnreg-limit.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=255;maxnreg=300\"})"
// RUN: not %{opt} %t/nvvm-maxnreg-limit.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"maxnreg=255;maxnreg=300\"})"

// RUN: %{opt} -verify-diagnostics %t/bad-binary-pass.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" binary-pass=canonicalize})"
// RUN: not %{opt} %t/bad-binary-pass.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" binary-pass=canonicalize})"

// RUN: %{opt} -verify-diagnostics %t/bad-binary-pass-option.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" binary-pass=\"gpu-module-to-binary{bogus=1}\"})"
// RUN: not %{opt} %t/bad-binary-pass-option.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" binary-pass=\"gpu-module-to-binary{bogus=1}\"})"

// RUN: %{opt} -verify-diagnostics %t/func-not-attribute.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"func.fly.x=not an attribute\"})"
// RUN: not %{opt} %t/func-not-attribute.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"func.fly.x=not an attribute\"})"

// RUN: %{opt} -verify-diagnostics %t/snapshot-format.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" snapshot-file=%t/snap.mlirbc snapshot-format=xml})"
// RUN: not %{opt} %t/snapshot-format.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=2\" snapshot-file=%t/snap.mlirbc snapshot-format=xml})"
// RUN: not ls %t/snap.mlirbc

// RUN: %{opt} -verify-diagnostics %t/hints-file-malformed.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/malformed.json})"
// RUN: not %{opt} %t/hints-file-malformed.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/malformed.json})"

// RUN: %{opt} -verify-diagnostics %t/hints-file-wrong-type.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/wrong-type.json})"
// RUN: not %{opt} %t/hints-file-wrong-type.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/wrong-type.json})"

// RUN: %{opt} -verify-diagnostics %t/hints-file-missing.mlir \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/missing.json})"
// RUN: not %{opt} %t/hints-file-missing.mlir 2>/dev/null \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints-file=%t/missing.json})"

//--- ir-shape.mlir
// No gpu.module carries a target yet: the pass runs too early.
// expected-error@+1 {{fly-snapshot found no gpu.module with a target attribute (#rocdl.target or #nvvm.target); place it after the target is attached}}
module attributes {gpu.container_module} {
  // expected-note@+1 {{this gpu.module has no target}}
  gpu.module @kernels {
    llvm.func @k() attributes {gpu.kernel} {
      llvm.return
    }
  }
}

// -----

// The kernel is not lowered to LLVM yet.
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    // expected-error@+1 {{kernel @k is still a gpu.func: fly-snapshot must run after the GPU-to-LLVM lowering}}
    gpu.func @k() kernel {
      gpu.return
    }
  }
}

// -----

// A targeted gpu.module with nothing lowered in it.
module attributes {gpu.container_module} {
  // expected-error@+1 {{gpu.module @kernels has no llvm.func: fly-snapshot must run after the kernels are lowered to LLVM}}
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
  }
}

// -----

// waves_per_eu is an AMDGPU hint: it does not apply to an NVVM target.
module attributes {gpu.container_module} {
  // expected-error@+1 {{hint 'waves_per_eu' (hint set 'waves_per_eu=2') does not apply to a nvvm target; it is accepted for: rocdl}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

//--- unknown-hint.mlir
// expected-error@+1 {{fly-snapshot: invalid hints: hint set #1 ('wave_per_eu=2'): unknown hint 'wave_per_eu'; accepted: waves_per_eu=<0..20>}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- waves-out-of-range.mlir
// expected-error@+1 {{fly-snapshot: invalid hints: hint set #0 ('waves_per_eu=99'): hint 'waves_per_eu' = 99 is out of range [0, 20]}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- maxnreg-ill-typed.mlir
// expected-error@+1 {{fly-snapshot: invalid hints: hint set #0 ('maxnreg=abc'): hint 'maxnreg' expects an integer in [1, 512], got 'abc'}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- nvvm-maxnreg-limit.mlir
// 300 is a valid AMDGPU register count but above what PTX allows.
module attributes {gpu.container_module} {
  // expected-error@+1 {{hint 'maxnreg' (hint set 'maxnreg=300') = 300 exceeds the NVVM limit of 255}}
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

//--- bad-binary-pass.mlir
// expected-error@+1 {{binary pass must be exactly one gpu-module-to-binary (with its options), got 'canonicalize'}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- bad-binary-pass-option.mlir
// expected-error@+1 {{cannot parse binary pass 'gpu-module-to-binary{bogus=1}': <Pass-Options-Parser>: no such option bogus}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- func-not-attribute.mlir
// One error, at the gpu.module, that includes the parser's complaint.
module attributes {gpu.container_module} {
  // expected-error@+1 {{hint 'func.fly.x' (hint set 'func.fly.x="not an attribute"') has a value that is not an MLIR attribute: 'not an attribute' (expected attribute value)}}
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- snapshot-format.mlir
// expected-error@+1 {{fly-snapshot: snapshot-format must be 'bytecode' or 'text', got 'xml'}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- hints-file-malformed.mlir
// expected-error@+1 {{malformed.json: malformed hints JSON: }}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- malformed.json
[{"waves_per_eu": 2},

//--- hints-file-wrong-type.mlir
// expected-error@+1 {{wrong-type.json: hint set #1: hint 'maxnreg' must be an integer, boolean or string in JSON}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}

//--- wrong-type.json
[{"waves_per_eu": 2}, {"maxnreg": null}]

//--- hints-file-missing.mlir
// expected-error@+1 {{fly-snapshot: invalid hints file: hints file: cannot read}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k() attributes {gpu.kernel, rocdl.kernel} {
      llvm.return
    }
  }
}
