; A library a target links (cache-key-inputs.test); helper-one.ll differs
; only in the constant.
target triple = "amdgcn-amd-amdhsa"

define i32 @fly_helper(i32 %x) {
  %r = add i32 %x, 2
  ret i32 %r
}
