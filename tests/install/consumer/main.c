/* A host program built against an installed Tri: makes a context and a module from a small
 * kernel and prints how many kernels it has. Used by tests/install.cmake, once through the CMake
 * package and once through pkg-config. */
#include <stdio.h>
#include <string.h>

#include <tri/tri.h>

static const char kText[] =
    "kernel @zero(%out: ptr<f32>) constexpr(BLOCK: i32 = 128) {\n"
    "  %offs = arange[start=0, end=BLOCK] : <BLOCK x i32>\n"
    "  %base = splat %out : <BLOCK x ptr<f32>>\n"
    "  %ptrs = addptr %base, %offs : <BLOCK x ptr<f32>>\n"
    "  %z = const[value=0.0] : <BLOCK x f32>\n"
    "  store %ptrs, %z\n"
    "  return\n"
    "}\n";

static int fail(const char* what, tri_result r) {
  char msg[1024];
  tri_last_error_message(msg, sizeof msg);
  fprintf(stderr, "%s: %s: %s\n", what, tri_result_name(r), msg);
  return 1;
}

int main(void) {
  tri_context* context = NULL;
  tri_module* module = NULL;
  uint32_t count = 0, kernels = 0, i;
  tri_result r = tri_context_create(NULL, TRI_VERSION_NUMBER, &context);
  if (r != TRI_OK) return fail("tri_context_create", r);
  r = tri_module_create(context, kText, strlen(kText), "zero.tri", &module);
  if (r != TRI_OK) return fail("tri_module_create", r);
  if ((r = tri_module_function_count(module, &count)) != TRI_OK) return fail("tri_module_function_count", r);
  for (i = 0; i < count; ++i) {
    int32_t kind;
    if ((r = tri_module_function_kind(module, i, &kind)) != TRI_OK) return fail("tri_module_function_kind", r);
    kernels += kind == TRI_FUNCTION_KERNEL;
  }
  printf("tri %u: %u kernel(s)\n", tri_version(), kernels);
  tri_module_destroy(module);
  tri_context_destroy(context);
  return kernels == 1 ? 0 : 1;
}
