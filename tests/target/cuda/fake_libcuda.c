/* A fake CUDA driver for CI machines without a GPU: a shared library exporting the versioned entry
 * points src/target/cuda/driver.cpp resolves, loaded through TRI_LIBCUDA by the cuda/test_driver_fake test. It
 * keeps the driver's bookkeeping strictly (a per-thread current context; calls that need a context
 * fail with CUDA_ERROR_INVALID_CONTEXT without one; a launch fails unless its function's context
 * is current and its stream belongs to that context; dead contexts are rejected; stream capture
 * records launches instead of running them) and "runs" the two kernels of tests/target/cuda/test_driver
 * (add_u32, smem_add_u32) on the host, over host memory standing in for device memory. What the
 * layer does right or wrong with contexts, modules, logs and errors shows up here; whether the PTX
 * itself is right only a GPU can tell.
 *
 * Counters (fake_cuda_counter) let a test check the warm path: module loads and context switches;
 * and what the last launch was given: "launches", "last_stream", "last_arg0" (the first
 * parameter's 8 bytes, a pointer for the kernels Tri's tests launch), "last_grid_x", and
 * "stream_waits" (cuStreamWaitEvent calls). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  OK = 0, INVALID_VALUE = 1, NO_DEVICE_ = 100, INVALID_DEVICE = 101, INVALID_IMAGE = 200, INVALID_CONTEXT = 201,
  INVALID_PTX = 218, INVALID_HANDLE = 400, NOT_FOUND = 500, STREAM_CAPTURE_UNSUPPORTED = 900
};

typedef struct Ctx { int device, alive, primary_refs; } Ctx;
typedef struct Mod { Ctx* ctx; char* text; } Mod;
typedef struct Fn { Mod* mod; char name[64]; int max_dyn; } Fn;
typedef struct Launch { Fn* fn; unsigned grid, block, shared; unsigned long long args[3]; } Launch;
typedef struct Stream { Ctx* ctx; int capturing; Launch* rec; int nrec; } Stream;
typedef struct Graph { Launch* rec; int nrec; } Graph;

static _Thread_local Ctx* t_current;
static Ctx g_primary[2] = {{0, 1, 0}, {1, 1, 0}};
static long g_loads, g_switches, g_launches, g_last_stream, g_last_arg0, g_last_grid_x, g_stream_waits;

long fake_cuda_counter(const char* name) {
  if (strcmp(name, "module_loads") == 0) return g_loads;
  if (strcmp(name, "context_switches") == 0) return g_switches;
  if (strcmp(name, "launches") == 0) return g_launches;
  if (strcmp(name, "last_stream") == 0) return g_last_stream;
  if (strcmp(name, "last_arg0") == 0) return g_last_arg0;
  if (strcmp(name, "last_grid_x") == 0) return g_last_grid_x;
  if (strcmp(name, "stream_waits") == 0) return g_stream_waits;
  return -1;
}

static const char* const kNames[][2] = {
    {"CUDA_SUCCESS", "no error"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};
static int name_index(CUresult e) {
  switch (e) {
    case OK: return 0;
    case INVALID_VALUE: return 1;
    case INVALID_CONTEXT: return 2;
    case INVALID_PTX: return 3;
    case INVALID_IMAGE: return 4;
    case INVALID_HANDLE: return 5;
    case NOT_FOUND: return 6;
    default: return -1;
  }
}
CUresult cuGetErrorName(CUresult e, const char** s) {
  int i = name_index(e);
  if (i < 0) return INVALID_VALUE;
  *s = kNames[i][0];
  return OK;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
  int i = name_index(e);
  if (i < 0) return INVALID_VALUE;
  *s = kNames[i][1];
  return OK;
}

#define NEED_CTX() \
  do { if (!t_current || !t_current->alive) return INVALID_CONTEXT; } while (0)

CUresult cuInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
CUresult cuDriverGetVersion(int* v) {
  const char* e = getenv("FAKE_CUDA_DRIVER_VERSION"); /* 12040 (CUDA 12.4) unless a test says otherwise */
  *v = e ? atoi(e) : 12040;
  return OK;
}
CUresult cuDeviceGetCount(int* n) { *n = 2; return OK; }
CUresult cuDeviceGet(int* d, int i) { if (i < 0 || i > 1) return INVALID_DEVICE; *d = i; return OK; }
CUresult cuDeviceGetName(char* s, int len, int d) { snprintf(s, (size_t)len, "Fake GPU %d", d); return OK; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) {
  if (d < 0 || d > 1) return INVALID_DEVICE;
  switch (a) {
    case 1: *v = 1024; break;       /* max threads per block */
    case 8: *v = 49152; break;      /* shared per block */
    case 10: *v = 32; break;        /* warp size */
    case 16: *v = 132; break;       /* SMs */
    case 38: *v = 52428800; break;  /* L2 */
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 81: *v = 233472; break;    /* shared per SM */
    case 97: *v = 232448; break;    /* opt-in per block */
    default: return INVALID_VALUE;
  }
  return OK;
}
CUresult cuDevicePrimaryCtxRetain(Ctx** c, int d) {
  if (d < 0 || d > 1) return INVALID_DEVICE;
  g_primary[d].primary_refs++;
  *c = &g_primary[d];
  return OK;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) {
  if (d < 0 || d > 1 || g_primary[d].primary_refs == 0) return INVALID_VALUE;
  g_primary[d].primary_refs--;
  return OK;
}
CUresult cuCtxCreate_v2(Ctx** c, unsigned flags, int d) {
  (void)flags;
  if (d < 0 || d > 1) return INVALID_DEVICE;
  *c = calloc(1, sizeof(Ctx));
  (*c)->device = d;
  (*c)->alive = 1;
  t_current = *c; /* like the driver: the new context becomes current */
  return OK;
}
CUresult cuCtxDestroy_v2(Ctx* c) {
  if (!c || !c->alive) return INVALID_CONTEXT;
  c->alive = 0; /* kept allocated so a stale handle is detected, not reused */
  if (t_current == c) t_current = NULL;
  return OK;
}
CUresult cuCtxGetCurrent(Ctx** c) { *c = t_current; return OK; }
CUresult cuCtxSetCurrent(Ctx* c) {
  if (c && !c->alive) return INVALID_CONTEXT;
  if (c != t_current) g_switches++;
  t_current = c;
  return OK;
}
CUresult cuCtxGetDevice(int* d) { NEED_CTX(); *d = t_current->device; return OK; }
/* A one-deep stack is all the Python binding's stream ordering (tri/_device.py) needs. */
static _Thread_local Ctx* t_pushed;
CUresult cuCtxPushCurrent_v2(Ctx* c) {
  if (!c || !c->alive) return INVALID_CONTEXT;
  t_pushed = t_current;
  t_current = c;
  return OK;
}
CUresult cuCtxPopCurrent_v2(Ctx** c) {
  if (c) *c = t_current;
  t_current = t_pushed;
  t_pushed = NULL;
  return OK;
}
CUresult cuCtxSynchronize(void) { NEED_CTX(); return OK; }

/* JIT: PTX that mentions "frobnicate" is rejected with a ptxas-like log. */
static CUresult jit(const char* text, unsigned n, int* keys, void** values) {
  if (!strstr(text, "frobnicate")) return OK;
  for (unsigned i = 0; i < n; ++i)
    if (keys[i] == 5) {
      size_t cap = 0;
      for (unsigned j = 0; j < n; ++j)
        if (keys[j] == 6) cap = (size_t)(uintptr_t)values[j];
      snprintf((char*)values[i], cap, "ptxas application ptx input, line 28; error   : Not a name of any known "
               "instruction: 'frobnicate'\nptxas fatal   : Ptx assembly aborted due to errors\n");
    }
  return INVALID_PTX;
}

CUresult cuModuleLoadDataEx(Mod** m, const void* image, unsigned n, int* keys, void** values) {
  NEED_CTX();
  const char* text = (const char*)image;
  if (memcmp(text, "\x7f" "ELF", 4) == 0) {
    text += 4; /* the fake "cubin" is the PTX behind an ELF magic */
  } else if (strncmp(text, "//", 2) != 0 && strncmp(text, "\n", 1) != 0 && strncmp(text, ".version", 8) != 0) {
    return INVALID_IMAGE;
  }
  CUresult r = jit(text, n, keys, values);
  if (r != OK) return r;
  *m = calloc(1, sizeof(Mod));
  (*m)->ctx = t_current;
  (*m)->text = strdup(text);
  g_loads++;
  return OK;
}
CUresult cuModuleUnload(Mod* m) {
  NEED_CTX();
  if (m->ctx != t_current) return INVALID_CONTEXT;
  free(m->text);
  free(m);
  return OK;
}
CUresult cuModuleGetFunction(Fn** f, Mod* m, const char* name) {
  char pattern[96];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  if (!strstr(m->text, pattern)) return NOT_FOUND;
  *f = calloc(1, sizeof(Fn));
  (*f)->mod = m;
  snprintf((*f)->name, sizeof (*f)->name, "%s", name);
  (*f)->max_dyn = 49152;
  return OK;
}

/* The log options given to cuLinkCreate stay valid for the link's life (the driver's contract), so
 * the JIT of cuLinkAddData writes its log through them. */
typedef struct Link { char* text; unsigned n; int* keys; void** values; } Link;
CUresult cuLinkCreate_v2(unsigned n, int* keys, void** values, Link** s) {
  NEED_CTX();
  *s = calloc(1, sizeof(Link));
  (*s)->n = n;
  (*s)->keys = keys;
  (*s)->values = values;
  return OK;
}
CUresult cuLinkAddData_v2(Link* s, int type, void* data, size_t size, const char* name, unsigned n, int* k, void** v) {
  (void)name; (void)n; (void)k; (void)v;
  if (type != 1 || size == 0 || ((char*)data)[size - 1] != '\0') return INVALID_VALUE;
  CUresult r = jit((char*)data, s->n, s->keys, s->values);
  if (r != OK) return r;
  s->text = strdup((char*)data);
  return OK;
}
CUresult cuLinkComplete(Link* s, void** cubin, size_t* size) {
  if (!s->text) return INVALID_VALUE;
  size_t n = strlen(s->text);
  char* out = malloc(n + 5); /* owned by the link state, freed at cuLinkDestroy */
  memcpy(out, "\x7f" "ELF", 4);
  memcpy(out + 4, s->text, n + 1);
  free(s->text);
  s->text = out;
  *cubin = out;
  *size = n + 5;
  return OK;
}
CUresult cuLinkDestroy(Link* s) { free(s->text); free(s); return OK; }

CUresult cuFuncGetAttribute(int* v, int a, Fn* f) { (void)a; (void)f; *v = 0; return OK; }
CUresult cuFuncSetAttribute(Fn* f, int a, int v) {
  if (a != 8 || v > 232448) return INVALID_VALUE;
  f->max_dyn = v;
  return OK;
}

static void run(const Launch* l) {
  if (strcmp(l->fn->name, "add_u32") == 0) {
    uint32_t* data = (uint32_t*)(uintptr_t)l->args[0];
    uint32_t n = (uint32_t)l->args[1], k = (uint32_t)l->args[2];
    for (uint64_t i = 0; i < (uint64_t)l->grid * l->block && i < n; ++i) data[i] += k;
  } else if (strcmp(l->fn->name, "smem_add_u32") == 0) {
    uint32_t* data = (uint32_t*)(uintptr_t)l->args[0];
    uint32_t k = (uint32_t)l->args[1], words = (uint32_t)l->args[2];
    uint32_t* smem = malloc((size_t)l->shared);
    for (uint32_t i = 0; i < words; ++i) smem[i] = data[i] + k;
    for (uint32_t i = 0; i < words; ++i) data[i] = smem[words - 1 - i];
    free(smem);
  }
}

CUresult cuLaunchKernel(Fn* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, Stream* s, void** params, void** extra) {
  NEED_CTX();
  if (f->mod->ctx != t_current) return INVALID_HANDLE;
  if (s && s->ctx != t_current) return INVALID_HANDLE;
  if (extra || !params || bx * by * bz > 1024 || gy != 1 || gz != 1 || by != 1 || bz != 1) return INVALID_VALUE;
  if ((int)shared > f->max_dyn) return INVALID_VALUE;
  Launch l = {f, gx, bx, shared, {0, 0, 0}};
  l.args[0] = *(unsigned long long*)params[0];
  l.args[1] = *(uint32_t*)params[1];
  l.args[2] = *(uint32_t*)params[2];
  g_launches++;
  g_last_stream = (long)(uintptr_t)s;
  g_last_arg0 = (long)l.args[0];
  g_last_grid_x = (long)gx;
  if (s && s->capturing) {
    s->rec = realloc(s->rec, sizeof(Launch) * (size_t)(s->nrec + 1));
    s->rec[s->nrec++] = l;
    return OK;
  }
  run(&l);
  return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) { NEED_CTX(); *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return OK; }
CUresult cuMemFree_v2(CUdeviceptr p) { NEED_CTX(); free((void*)(uintptr_t)p); return OK; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { NEED_CTX(); memcpy((void*)(uintptr_t)d, s, n); return OK; }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { NEED_CTX(); memcpy(d, (void*)(uintptr_t)s, n); return OK; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { NEED_CTX(); memset((void*)(uintptr_t)d, v, n); return OK; }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
  NEED_CTX();
  for (size_t i = 0; i < n; ++i) ((uint32_t*)(uintptr_t)d)[i] = v;
  return OK;
}

// The fake runs everything at once, so the stream-ordered forms are the synchronous ones.
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* stream) {
  (void)stream;
  NEED_CTX();
  memmove((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n);
  return OK;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void* stream) {
  (void)stream;
  return cuMemsetD32_v2(d, v, n);
}

CUresult cuStreamCreate(Stream** s, unsigned flags) {
  (void)flags;
  NEED_CTX();
  *s = calloc(1, sizeof(Stream));
  (*s)->ctx = t_current;
  return OK;
}
CUresult cuStreamDestroy_v2(Stream* s) { NEED_CTX(); free(s->rec); free(s); return OK; }
CUresult cuStreamSynchronize(Stream* s) { NEED_CTX(); return s && s->capturing ? STREAM_CAPTURE_UNSUPPORTED : OK; }
CUresult cuStreamGetCtx(Stream* s, Ctx** c) { *c = s->ctx; return OK; }
CUresult cuStreamBeginCapture_v2(Stream* s, int mode) {
  NEED_CTX();
  if (!s || mode < 0 || mode > 2) return INVALID_VALUE;
  s->capturing = 1;
  return OK;
}
CUresult cuStreamEndCapture(Stream* s, Graph** g) {
  NEED_CTX();
  if (!s->capturing) return INVALID_VALUE;
  *g = calloc(1, sizeof(Graph));
  (*g)->rec = s->rec;
  (*g)->nrec = s->nrec;
  s->rec = NULL;
  s->nrec = 0;
  s->capturing = 0;
  return OK;
}
CUresult cuGraphInstantiateWithFlags(Graph** e, Graph* g, unsigned long long flags) {
  (void)flags;
  NEED_CTX();
  *e = calloc(1, sizeof(Graph));
  (*e)->rec = malloc(sizeof(Launch) * (size_t)(g->nrec ? g->nrec : 1));
  memcpy((*e)->rec, g->rec, sizeof(Launch) * (size_t)g->nrec);
  (*e)->nrec = g->nrec;
  return OK;
}
CUresult cuGraphLaunch(Graph* e, Stream* s) {
  NEED_CTX();
  if (s && s->ctx != t_current) return INVALID_HANDLE;
  for (int i = 0; i < e->nrec; ++i) run(&e->rec[i]);
  return OK;
}
CUresult cuGraphExecDestroy(Graph* e) { free(e->rec); free(e); return OK; }
CUresult cuGraphDestroy(Graph* g) { free(g->rec); free(g); return OK; }

typedef struct Event { int recorded; } Event;
CUresult cuEventCreate(Event** e, unsigned flags) { (void)flags; NEED_CTX(); *e = calloc(1, sizeof(Event)); return OK; }
CUresult cuEventDestroy_v2(Event* e) { free(e); return OK; }
CUresult cuEventRecord(Event* e, Stream* s) {
  NEED_CTX();
  if (s && s->ctx != t_current) return INVALID_HANDLE;
  e->recorded = 1;
  return OK;
}
CUresult cuEventSynchronize(Event* e) { return e->recorded ? OK : INVALID_VALUE; }
CUresult cuStreamWaitEvent(Stream* s, Event* e, unsigned flags) {
  NEED_CTX();
  if (flags || !e->recorded || (s && s->ctx != t_current)) return INVALID_VALUE;
  g_stream_waits++;
  return OK;
}
CUresult cuEventElapsedTime(float* ms, Event* a, Event* b) {
  if (!a->recorded || !b->recorded) return INVALID_VALUE;
  *ms = 0.25f;
  return OK;
}
