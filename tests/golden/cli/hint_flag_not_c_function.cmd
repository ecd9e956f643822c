tri compile examples/vector_add.tri --target sm_90 --num-warps 3
