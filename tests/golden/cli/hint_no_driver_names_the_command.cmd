TRI_LIBCUDA=/nonexistent/libcuda.so.1 tri run examples/vector_add.tri --kernel vector_add --target cuda --arg x=zeros:f32[4] --arg y=zeros:f32[4] --arg out=zeros:f32[4] --arg n=4
