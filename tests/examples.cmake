# The example host programs (examples/c), built here against the in-tree libtri.so and run on
# every host target: "cpu" at full size, "interp" (the reference interpreter) at smaller sizes;
# each checks its kernel's result against plain C. README's first
# command builds the same programs against the installed library.
foreach(name vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax)
  add_executable(example_${name} ${PROJECT_SOURCE_DIR}/examples/c/${name}.c)
  target_compile_definitions(example_${name} PRIVATE TRI_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples" _GNU_SOURCE)
  target_link_libraries(example_${name} PRIVATE tri m ${CMAKE_DL_LIBS})
  foreach(target cpu interp)
    add_test(NAME examples/${name}/${target} COMMAND example_${name})
    set_tests_properties(examples/${name}/${target} PROPERTIES ENVIRONMENT "TRI_TARGET=${target}" LABELS examples)
  endforeach()
endforeach()
# On the GPU: each example through tri_launch on the default stream, on a non-blocking stream of
# its own, captured into a CUDA graph, and in a context the program created after allocating its
# buffers (TRI_EXAMPLE_LAUNCH, examples/c/common.h); "skipped: no CUDA device" (exit code 77)
# where there is none.
foreach(name vector_add gelu softmax layernorm matmul_leaky_relu flash_attention cumsum histogram argmax)
  foreach(mode default stream graph context)
    add_test(NAME examples/${name}/cuda/${mode} COMMAND example_${name})
    set(launch_env "TRI_TARGET=cuda")
    if(NOT mode STREQUAL "default")
      set(launch_env "TRI_TARGET=cuda;TRI_EXAMPLE_LAUNCH=${mode}")
    endif()
    set_tests_properties(examples/${name}/cuda/${mode} PROPERTIES ENVIRONMENT "${launch_env}"
                         LABELS "examples;gpu" TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
# The loops that feed dot, with their loads an iteration ahead (tri_compile_options_set_num_stages
# 2, passes/pipeline_loads.h) and without, on both host targets: the results must not change.
foreach(name matmul_leaky_relu flash_attention)
  foreach(target cpu interp)
    foreach(stages 1 2 3)
      add_test(NAME examples/${name}/${target}/stages${stages} COMMAND example_${name})
      set_tests_properties(examples/${name}/${target}/stages${stages} PROPERTIES
                           ENVIRONMENT "TRI_TARGET=${target};TRI_NUM_STAGES=${stages}" LABELS examples)
    endforeach()
  endforeach()
endforeach()
# The distributed examples (docs/distributed.md): teams of 1, 2, 4 and 8 host ranks on both host
# targets, each rank's result checked against plain C.
foreach(name allgather_gemm gemm_reduce_scatter)
  add_executable(example_${name} ${PROJECT_SOURCE_DIR}/examples/c/${name}.c)
  target_compile_definitions(example_${name} PRIVATE TRI_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples" _GNU_SOURCE)
  target_link_libraries(example_${name} PRIVATE tri m ${CMAKE_DL_LIBS})
  foreach(target cpu interp)
    foreach(ranks 1 2 4 8)
      add_test(NAME examples/${name}/${target}/ranks${ranks} COMMAND example_${name})
      set_tests_properties(examples/${name}/${target}/ranks${ranks} PROPERTIES
                           ENVIRONMENT "TRI_TARGET=${target};TRI_RANKS=${ranks}" LABELS examples TIMEOUT 120)
    endforeach()
  endforeach()
  # GPU teams: one process per GPU on NVSHMEM; skipped where there are fewer GPUs (or no NVSHMEM).
  foreach(ranks 1 2 4)
    add_test(NAME examples/${name}/cuda/ranks${ranks} COMMAND example_${name})
    set_tests_properties(examples/${name}/cuda/ranks${ranks} PROPERTIES
                         ENVIRONMENT "TRI_TARGET=cuda;TRI_RANKS=${ranks}" LABELS "examples;gpu" TIMEOUT 120
                         SKIP_REGULAR_EXPRESSION "skipped: ")
  endforeach()
endforeach()

# The signal/wait ordering test on GPU teams (tests/capi/ring_gpu.c: the ring of
# tests/capi/test_team.c, one process per GPU); skipped without enough GPUs or NVSHMEM.
add_executable(ring_gpu ${PROJECT_SOURCE_DIR}/tests/capi/ring_gpu.c)
target_compile_definitions(ring_gpu PRIVATE TRI_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples" _GNU_SOURCE)
target_link_libraries(ring_gpu PRIVATE tri m ${CMAKE_DL_LIBS})
foreach(ranks 2 4)
  add_test(NAME capi/ring_gpu/ranks${ranks} COMMAND ring_gpu)
  set_tests_properties(capi/ring_gpu/ranks${ranks} PROPERTIES ENVIRONMENT "TRI_TARGET=cuda;TRI_RANKS=${ranks}"
                       LABELS "capi;gpu" TIMEOUT 120 SKIP_REGULAR_EXPRESSION "skipped: ")
endforeach()
