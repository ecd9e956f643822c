tri run examples/vector_add.tri --kernel vector_add --arg x=npy:@TMP@/missing.npy
