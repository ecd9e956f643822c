/* A host program of a package, as an application that ships kernels would be: it loads the
 * package named on the command line (tri aot), gets @vector_add for the CPU and launches it
 * through the typed function `tri aot --header` wrote (aot.h), then checks the sums. It uses
 * tri.h's package functions only, so it links with libtri or libtri_rt alike. Prints "ok N".
 * With "cuda" after the package it gets the kernel for "cuda" instead and launches it on
 * pointers the tests' fake driver never reads (tests/target/cuda/fake_libcuda.c, which records
 * the launch): "ok cuda". */
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "aot.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char bytes[1 << 22];
  size_t size = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  tri_context* ctx = NULL;
  tri_module* m = NULL;
  tri_kernel* k = NULL;
  tri_compile_options* o = NULL;
  char msg[1024];
  const int cuda = argc > 2 && strcmp(argv[2], "cuda") == 0;
  if (tri_context_create(NULL, TRI_VERSION_NUMBER, &ctx) != TRI_OK || tri_compile_options_create(&o) != TRI_OK ||
      tri_compile_options_set_target(o, cuda ? "cuda" : "cpu") != TRI_OK ||
      tri_module_load_package(ctx, bytes, size, argv[1], &m) != TRI_OK || tri_module_kernel(m, "vector_add", o, &k) != TRI_OK) {
    tri_last_error_message(msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
  }
  enum { N = 5000 };
  static float x[N], y[N], out[N];
  if (cuda) {
    if (tri_aot_vector_add(k, 1, 1, 1, NULL, x, y, out, N) != TRI_OK) {
      tri_last_error_message(msg, sizeof msg);
      fprintf(stderr, "%s\n", msg);
      return 1;
    }
    printf("ok cuda\n");
    return 0;
  }
  for (int i = 0; i < N; ++i) x[i] = (float)i, y[i] = 0.5f * (float)i;
  if (tri_aot_vector_add(k, (N + 1023) / 1024, 1, 1, NULL, x, y, out, N) != TRI_OK) {
    tri_last_error_message(msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
  }
  for (int i = 0; i < N; ++i)
    if (out[i] != 1.5f * (float)i) {
      fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], 1.5 * i);
      return 1;
    }
  printf("ok %d\n", N);
  tri_kernel_destroy(k);
  tri_compile_options_destroy(o);
  tri_module_destroy(m);
  tri_context_destroy(ctx);
  return 0;
}
