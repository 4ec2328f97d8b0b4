# tests/flashemu/emu_rewrite.cmake: a .cu file of kernels/cuda/ as host C++ for the emulated
# device (cmake -DSRC=in.cu -DOUT=out.cpp -P emu_rewrite.cmake). Two changes, nothing else:
#   - every launch `kernel<<<grid, block, smem, stream>>>(args)` becomes
#     `emu_launch("kernel", __PRETTY_FUNCTION__, grid, block, smem, stream).go([&](auto... a) { kernel(a...); })(args)`:
#     the arguments are evaluated once, at the launch, and every emulated thread calls the kernel
#     with them (emu_runtime.cpp checks the configuration and runs the grid);
#   - flash.cu's "PTX primitives" section (inline asm) is replaced by emu_prims.h's versions.
# The file starts with cuda_emu.h, which defines __global__, threadIdx, __syncthreads, ...
file(READ "${SRC}" text)
set(launch_re "([A-Za-z_][A-Za-z_0-9]*(<[^<>;()]*>)?)<<<([^<>;]*)>>>")
string(REGEX MATCHALL "${launch_re}" launches "${text}")
string(REGEX REPLACE "${launch_re}"
       "emu_launch(\"\\1\", __PRETTY_FUNCTION__, \\3).go([&](auto... emu_a) { \\1(emu_a...); })" text "${text}")
# flash.cu launches `auto kernel = flash_fwd_mma<T, D>; ... kernel<<<...>>>`: name it as such
string(REGEX REPLACE "auto kernel = ([^;]+);"
       "auto kernel = \\1; const char *emu_kernel_name = \"\\1\";" text "${text}")
string(REPLACE "emu_launch(\"kernel\", " "emu_launch(emu_kernel_name, " text "${text}")
string(FIND "${text}" "<<<" left)
if(NOT left EQUAL -1)
  message(FATAL_ERROR "${SRC}: a launch emu_rewrite.cmake does not understand")
endif()
set(prims "")
string(FIND "${text}" "// ---- PTX primitives" p0)
if(NOT p0 EQUAL -1)
  string(FIND "${text}" "// ---- kernels" p1)
  if(p1 EQUAL -1)
    message(FATAL_ERROR "${SRC}: a PTX primitives section without the kernels after it")
  endif()
  string(SUBSTRING "${text}" 0 ${p0} before)
  string(SUBSTRING "${text}" ${p1} -1 after)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines line)
  string(SUBSTRING "${text}" 0 ${p1} upto)
  string(REGEX MATCHALL "\n" newlines "${upto}")
  list(LENGTH newlines kline)
  math(EXPR kline "${kline} + 1")
  set(text "${before}}  // namespace (emu_prims.h stands in for the PTX primitives)\n#include \"emu_prims.h\"\nnamespace {\n#line ${kline}\n${after}")
endif()
list(LENGTH launches n)
file(WRITE "${OUT}.tmp" "// generated from ${SRC} by emu_rewrite.cmake (${n} launches): do not edit\n#include \"cuda_emu.h\"\n#include \"emu_launch.h\"\n#line 1 \"${SRC}\"\n${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
