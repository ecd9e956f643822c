/* tri._launch: the launch hot path of the Python binding in C (docs: bindings/python/README.md,
 * "Launch cost").
 *
 * `kernel[grid](*args, stream=...)`, `kernel.launch(...)` and `plan.launch()` come here first.
 * Each argument is read by a reader for its exact type (NumPy arrays, tri.DevicePtr and
 * tri.Buffer, torch tensors, __cuda_array_interface__ objects such as CuPy's, Python ints and
 * floats for scalars), checked against the kernel's parameter, and written into a tri_arg; the
 * library's tri_launch is then called with the GIL released. Anything a reader is not sure of
 * (another type, a dtype or layout that does not fit, a stream that must be waited for, a closed
 * handle, a grid that is not plain ints) sends the whole call to the pure-Python implementation
 * in tri/__init__.py, which gives today's errors and does the rare work (DLPack, stream ordering)
 * itself. Readers have no side effects, so a call that falls back behaves exactly as one that
 * never came here.
 *
 * The library is not linked: tri/__init__.py hands over the addresses of tri_launch and
 * tri_launch_plan_launch from the libtri that ctypes loaded (tri/_capi.py finds it), so both paths
 * use the same library. Handles (Handle) and the plan's lock (Lock) live here so that the hot path
 * takes them without calling back into Python; the pure-Python path has its own.
 *
 * The GIL guards the handles' counters: this module refuses to load in a free-threaded build. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef Py_GIL_DISABLED
#error "tri._launch relies on the GIL; a free-threaded build uses the pure-Python launch path"
#endif

/* tri_arg of include/tri/tri.h: 24 bytes, frozen for the 0.x ABI (the package's build does not
 * see tri.h, so it is spelled out here; tri/__init__.py checks the size against ctypes'). */
typedef struct {
  union {
    int64_t i;
    double f;
    const void* p;
  } value;
  uint64_t extent;
  int32_t kind;
  int32_t dtype;
} tri_arg;
_Static_assert(sizeof(tri_arg) == 24, "tri_arg is 24 bytes");

enum { TRI_TYPE_SCALAR = 0, TRI_TYPE_POINTER = 1 };
enum { MAX_ARGS = 64, MAX_TABLE = 64 };

typedef int32_t (*launch_fn)(const void*, uint32_t, uint32_t, uint32_t, void*, const tri_arg*, uint32_t);
typedef int32_t (*plan_launch_fn)(void*);

/* ---- Module state: set once by init() */

static launch_fn g_launch;
static plan_launch_fn g_plan_launch;
static PyObject* g_check;         /* _check(rc): raises TriError with the library's message */
static PyObject* g_closed_error;  /* closed_error(what) -> the TriError a closed handle raises */
static PyTypeObject* g_ndarray;   /* numpy.ndarray, read through its C layout (checked at init) */
static PyTypeObject* g_device_ptr;
static PyTypeObject* g_buffer;
static PyObject* g_typestr;        /* __cuda_array_interface__ typestr -> (dtype, itemsize) */
static PyTypeObject* g_torch_tensor; /* torch.Tensor once register_torch() was called */
static PyObject* g_learn;             /* learn(value, dtype, itemsize): see read_pointer */
static PyTypeObject* g_not_torch;     /* the last "Tensor" type learn() said is not torch's */
static const PyTypeObject* g_plain_type; /* the last type seen whose name is not "Tensor" */
static unsigned long long g_fast, g_fallback; /* launches each path took (counters()) */

typedef struct {
  PyObject* key; /* a numpy dtype or a torch dtype, compared by identity */
  int32_t dtype;
  int32_t itemsize;
} TypeEntry;
static TypeEntry g_np_types[MAX_TABLE];
static int g_np_count;
static TypeEntry g_torch_types[MAX_TABLE];
static int g_torch_count;

/* Interned attribute names. */
static PyObject *s_address, *s_nbytes, *s_dtype, *s_cai, *s_mask, *s_typestr, *s_shape, *s_data, *s_strides,
    *s_version, *s_stream, *s_cuda_stream_proto, *s_cuda_stream, *s_ptr, *s_handle, *s_is_cuda, *s_requires_grad,
    *s_is_contiguous, *s_data_ptr, *s_launch_py, *s_getitem_py, *s_plan_launch_py;

/* NumPy's array object as its public ABI lays it out (numpy/ndarraytypes.h, PyArrayObject_fields,
 * unchanged since NumPy 1.7 and in 2.x); init() checks these reads against NumPy's own answers and
 * turns the NumPy reader off if they differ. */
typedef struct {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
} NumpyArray;
enum { NPY_C_CONTIGUOUS = 0x0001 };
static int g_numpy_ok;

/* Python 3.9/3.10 spell "look up an attribute, absent is not an error" differently. */
static int lookup_attr(PyObject* obj, PyObject* name, PyObject** out) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyObject_GetOptionalAttr(obj, name, out);
#else
  return _PyObject_LookupAttr(obj, name, out);
#endif
}

/* ---- Handle: a C handle that may be closed while other threads use it (tri/__init__.py's
 * _Handle): close() marks it closed at once; it is destroyed when the last use ends. */

typedef struct {
  PyObject_HEAD
  uintptr_t ptr;
  PyObject* destroy;
  PyObject* what;
  Py_ssize_t busy;
  int closed;
} Handle;

static PyTypeObject HandleType;

static int Handle_init(Handle* self, PyObject* args, PyObject* kw) {
  PyObject *ptr, *destroy, *what;
  static char* names[] = {"ptr", "destroy", "what", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOU", names, &ptr, &destroy, &what)) return -1;
  uintptr_t p = 0;
  if (ptr != Py_None) {
    p = (uintptr_t)PyLong_AsUnsignedLongLong(ptr);
    if (PyErr_Occurred()) return -1;
  }
  self->ptr = p;
  Py_INCREF(destroy);
  Py_XSETREF(self->destroy, destroy);
  Py_INCREF(what);
  Py_XSETREF(self->what, what);
  self->busy = 0;
  self->closed = 0;
  return 0;
}

static int Handle_traverse(Handle* self, visitproc visit, void* arg) {
  Py_VISIT(self->destroy);
  Py_VISIT(self->what);
  return 0;
}

static int Handle_clear(Handle* self) {
  Py_CLEAR(self->destroy);
  Py_CLEAR(self->what);
  return 0;
}

static void Handle_dealloc(Handle* self) {
  PyObject_GC_UnTrack(self);
  Handle_clear(self);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

/* The pointer to destroy now, or 0: closed, unused and not yet destroyed. */
static uintptr_t handle_take(Handle* h) {
  if (h->closed && h->busy == 0 && h->ptr) {
    uintptr_t p = h->ptr;
    h->ptr = 0;
    return p;
  }
  return 0;
}

static int handle_destroy(Handle* h, uintptr_t p) {
  if (!p) return 0;
  PyObject* r = PyObject_CallFunction(h->destroy, "K", (unsigned long long)p);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}

/* The hot path's acquire: 0 when closed (the caller falls back, and the Python path raises). */
static uintptr_t handle_enter(Handle* h) {
  if (h->closed || !h->ptr) return 0;
  h->busy++;
  return h->ptr;
}

static int handle_exit(Handle* h) {
  h->busy--;
  uintptr_t p = handle_take(h);
  if (!p) return 0;
  /* The last use of a handle closed meanwhile: destroy it, keeping an error already raised (the
   * launch's) in front of one the destroy might raise. */
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* raised = PyErr_GetRaisedException();
  int r = handle_destroy(h, p);
  if (raised) {
    if (r < 0) PyErr_Clear();
    PyErr_SetRaisedException(raised);
  }
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  int r = handle_destroy(h, p);
  if (type) {
    if (r < 0) PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
#endif
  return r;
}

static PyObject* Handle_acquire(Handle* self, PyObject* unused) {
  if (self->closed) {
    PyObject* e = PyObject_CallOneArg(g_closed_error, self->what);
    if (e) {
      PyErr_SetObject((PyObject*)Py_TYPE(e), e);
      Py_DECREF(e);
    }
    return NULL;
  }
  self->busy++;
  return PyLong_FromUnsignedLongLong(self->ptr);
}

static PyObject* Handle_release(Handle* self, PyObject* unused) {
  if (handle_exit(self) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* Handle_close(Handle* self, PyObject* unused) {
  self->closed = 1;
  if (handle_destroy(self, handle_take(self)) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* Handle_get_closed(Handle* self, void* unused) { return PyBool_FromLong(self->closed); }

static PyMethodDef Handle_methods[] = {
    {"acquire", (PyCFunction)Handle_acquire, METH_NOARGS, "Marks a use; returns the pointer (TriError when closed)."},
    {"release", (PyCFunction)Handle_release, METH_NOARGS, "Ends a use; destroys a closed handle's last use."},
    {"close", (PyCFunction)Handle_close, METH_NOARGS, "Marks the handle closed; destroys it when unused."},
    {NULL},
};
static PyGetSetDef Handle_getset[] = {{"closed", (getter)Handle_get_closed, NULL, NULL, NULL}, {NULL}};

static PyTypeObject HandleType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tri._launch.Handle",
    .tp_basicsize = sizeof(Handle),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Handle(ptr, destroy, what): a C handle closed once its last use ends.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Handle_init,
    .tp_traverse = (traverseproc)Handle_traverse,
    .tp_clear = (inquiry)Handle_clear,
    .tp_dealloc = (destructor)Handle_dealloc,
    .tp_methods = Handle_methods,
    .tp_getset = Handle_getset,
};

/* ---- Lock: a plain mutex usable as `with lock:` from Python and taken directly by the hot path */

typedef struct {
  PyObject_HEAD
  PyThread_type_lock lock;
} Lock;

static PyObject* Lock_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
  Lock* self = (Lock*)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->lock = PyThread_allocate_lock();
  if (!self->lock) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject*)self;
}

static void Lock_dealloc(Lock* self) {
  if (self->lock) PyThread_free_lock(self->lock);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static void lock_take(PyThread_type_lock lock) {
  if (!PyThread_acquire_lock(lock, NOWAIT_LOCK)) {
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
  }
}

static PyObject* Lock_acquire(Lock* self, PyObject* unused) {
  lock_take(self->lock);
  Py_RETURN_TRUE;
}

static PyObject* Lock_release(Lock* self, PyObject* unused) {
  PyThread_release_lock(self->lock);
  Py_RETURN_NONE;
}

static PyObject* Lock_exit(Lock* self, PyObject* args) {
  PyThread_release_lock(self->lock);
  Py_RETURN_FALSE;
}

static PyMethodDef Lock_methods[] = {
    {"acquire", (PyCFunction)Lock_acquire, METH_NOARGS, NULL},
    {"release", (PyCFunction)Lock_release, METH_NOARGS, NULL},
    {"__enter__", (PyCFunction)Lock_acquire, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Lock_exit, METH_VARARGS, NULL},
    {NULL},
};

static PyTypeObject LockType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tri._launch.Lock",
    .tp_basicsize = sizeof(Lock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A mutex: `with lock:`; blocking waits release the GIL.",
    .tp_new = Lock_new,
    .tp_dealloc = (destructor)Lock_dealloc,
    .tp_methods = Lock_methods,
};

/* ---- Readers: each returns 1 (the argument is encoded), 0 (fall back) and never leaves an
 * exception set. */

enum { P_POINTER = 0, P_INT = 1, P_FLOAT = 2, P_OTHER = 3 };
enum { NO_WAIT = -1 };

typedef struct {
  int32_t kind;
  int32_t dtype;
  int64_t lo, hi;
} Param;

static int fail(void) {
  PyErr_Clear();
  return 0;
}

/* An exact int in [0, 2^64). (Where long is 64 bits PyLong_AsUnsignedLong is the quicker: the
 * long long form goes through a byte array.) */
static int read_u64(PyObject* v, uint64_t* out) {
  if (!PyLong_CheckExact(v)) return 0;
#if ULONG_MAX == UINT64_MAX
  unsigned long x = PyLong_AsUnsignedLong(v);
  if (x == (unsigned long)-1 && PyErr_Occurred()) return fail();
#else
  unsigned long long x = PyLong_AsUnsignedLongLong(v);
  if (x == (unsigned long long)-1 && PyErr_Occurred()) return fail();
#endif
  *out = (uint64_t)x;
  return 1;
}

static const TypeEntry* find_type(const TypeEntry* table, int n, PyObject* key) {
  for (int i = 0; i < n; ++i)
    if (table[i].key == key) return &table[i];
  return NULL;
}

/* tri.DevicePtr / tri.Buffer: address, nbytes and a dtype equal to the parameter's. */
static int read_described(PyObject* v, const Param* p, tri_arg* a) {
  PyObject *addr = NULL, *nbytes = NULL, *dtype = NULL;
  int ok = 0;
  uint64_t address, extent;
  if (!(addr = PyObject_GetAttr(v, s_address)) || !(nbytes = PyObject_GetAttr(v, s_nbytes)) ||
      !(dtype = PyObject_GetAttr(v, s_dtype)))
    goto done;
  if (!PyLong_Check(dtype)) goto done;
  int overflow;
  long d = PyLong_AsLongAndOverflow(dtype, &overflow);
  if (overflow || d != p->dtype || !read_u64(addr, &address) || !read_u64(nbytes, &extent)) goto done;
  a->value.p = (const void*)(uintptr_t)address;
  a->extent = extent;
  ok = 1;
done:
  Py_XDECREF(addr);
  Py_XDECREF(nbytes);
  Py_XDECREF(dtype);
  return ok ? 1 : fail();
}

static int read_numpy(PyObject* v, const Param* p, tri_arg* a) {
  NumpyArray* arr = (NumpyArray*)v;
  const TypeEntry* t = find_type(g_np_types, g_np_count, arr->descr);
  if (!t || t->dtype != p->dtype || !(arr->flags & NPY_C_CONTIGUOUS)) return 0;
  uint64_t count = 1;
  for (int i = 0; i < arr->nd; ++i) count *= (uint64_t)arr->dimensions[i];
  a->value.p = arr->data;
  a->extent = count * (uint64_t)t->itemsize;
  return 1;
}

/* A torch.Tensor as its __cuda_array_interface__ (version 2, no stream) would describe it, read
 * without building the dict (torch makes it in Python): on the GPU, not requiring grad, a dtype
 * the interface names (learned: see read_pointer), contiguous, not empty. 2: a dtype not learned
 * yet. */
static int read_torch(PyObject* v, const Param* p, tri_arg* a) {
  PyObject *o = NULL, *ptr = NULL;
  int ok = 0;
  if (!(o = PyObject_GetAttr(v, s_is_cuda)) || o != Py_True) goto done;
  Py_SETREF(o, PyObject_GetAttr(v, s_requires_grad));
  if (o != Py_False) goto done;
  Py_SETREF(o, PyObject_GetAttr(v, s_dtype));
  if (!o) goto done;
  const TypeEntry* t = find_type(g_torch_types, g_torch_count, o);
  if (!t) {
    Py_DECREF(o);
    return 2;
  }
  if (t->dtype != p->dtype) goto done;
  Py_SETREF(o, PyObject_CallMethodNoArgs(v, s_is_contiguous));
  if (o != Py_True) goto done;
  /* nbytes (a property: cheaper than numel()) is numel() * element_size(), as the interface
   * counts; an empty tensor, whose interface gives address 0, takes the Python path. */
  Py_SETREF(o, PyObject_GetAttr(v, s_nbytes));
  uint64_t nbytes, address;
  if (!o || !read_u64(o, &nbytes) || nbytes == 0 || nbytes % (uint64_t)t->itemsize) goto done;
  if (!(ptr = PyObject_CallMethodNoArgs(v, s_data_ptr)) || !read_u64(ptr, &address)) goto done;
  a->value.p = (const void*)(uintptr_t)address;
  a->extent = nbytes;
  ok = 1;
done:
  Py_XDECREF(o);
  Py_XDECREF(ptr);
  return ok ? 1 : fail();
}

/* An exact int item of a tuple or list. */
static int item_i64(PyObject* seq, Py_ssize_t i, int64_t* out) {
  PyObject* x = PyTuple_CheckExact(seq) ? PyTuple_GET_ITEM(seq, i) : PyList_GET_ITEM(seq, i);
  if (!PyLong_CheckExact(x)) return 0;
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) return fail();
  *out = v;
  return 1;
}

static int is_seq(PyObject* x) { return PyTuple_CheckExact(x) || PyList_CheckExact(x); }
static Py_ssize_t seq_len(PyObject* x) { return PyTuple_CheckExact(x) ? PyTuple_GET_SIZE(x) : PyList_GET_SIZE(x); }

/* __cuda_array_interface__ as tri/_device.py's from_cai reads it, for the plain cases: a dict
 * with no mask, a known typestr, int shape and strides (contiguous), an int or None address, and
 * from version 3 a stream (None or a positive int) the launch may have to wait for. */
static int read_cai(PyObject* v, const Param* p, tri_arg* a, int64_t* wait, int* item, int64_t* version_out) {
  PyObject* cai = NULL;
  int ok = 0;
  if (lookup_attr(v, s_cai, &cai) <= 0 || !PyDict_CheckExact(cai)) goto done;
  /* One pass over the dict (a handful of entries) in place of a lookup per field. */
  PyObject *mask = NULL, *typestr = NULL, *shape = NULL, *data = NULL, *strides = NULL, *version = NULL,
           *stream = NULL;
  PyObject* const names[] = {s_mask, s_typestr, s_shape, s_data, s_strides, s_version, s_stream};
  PyObject** const slots[] = {&mask, &typestr, &shape, &data, &strides, &version, &stream};
  enum { NAMES = sizeof names / sizeof names[0] };
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(cai, &pos, &key, &value)) {
    int i = 0;
    while (i < NAMES && key != names[i]) ++i;
    if (i == NAMES) {
      if (!PyUnicode_CheckExact(key)) goto done; /* a key only dict.get's equality could match */
      i = 0;
      while (i < NAMES && PyUnicode_Compare(key, names[i]) != 0) ++i;
    }
    if (i < NAMES) *slots[i] = value;
  }
  if (mask && mask != Py_None) goto done;
  if (!typestr || !PyUnicode_CheckExact(typestr)) goto done;
  PyObject* known = PyDict_GetItemWithError(g_typestr, typestr);
  if (!known) goto done;
  long dtype = PyLong_AsLong(PyTuple_GET_ITEM(known, 0)), itemsize = PyLong_AsLong(PyTuple_GET_ITEM(known, 1));
  if (dtype != p->dtype) goto done;
  if (!shape || !is_seq(shape)) goto done;
  Py_ssize_t nd = seq_len(shape);
  if (nd > 64) goto done;
  int64_t dims[64];
  uint64_t count = 1;
  for (Py_ssize_t i = 0; i < nd; ++i) {
    if (!item_i64(shape, i, &dims[i]) || dims[i] < 0 || dims[i] > ((int64_t)1 << 40)) goto done;
    count *= (uint64_t)dims[i];
    if (count > ((uint64_t)1 << 56)) goto done;
  }
  if (!data || !is_seq(data) || seq_len(data) < 1) goto done;
  PyObject* d0 = PyTuple_CheckExact(data) ? PyTuple_GET_ITEM(data, 0) : PyList_GET_ITEM(data, 0);
  uint64_t address = 0;
  if (d0 != Py_None && !read_u64(d0, &address)) goto done;
  if (strides && strides != Py_None) {
    /* zip(reversed(shape), reversed(strides)): the shorter one decides. */
    if (!is_seq(strides)) goto done;
    Py_ssize_t ns = seq_len(strides), n = nd < ns ? nd : ns;
    int64_t expect = itemsize;
    for (Py_ssize_t k = 0; k < n; ++k) {
      int64_t dim = dims[nd - 1 - k], stride;
      if (!item_i64(strides, ns - 1 - k, &stride)) goto done;
      if (dim != 1 && stride != expect) goto done;
      expect *= dim;
    }
  }
  int64_t ver = 0;
  if (version) {
    if (!PyLong_CheckExact(version)) goto done;
    int overflow;
    ver = PyLong_AsLongLongAndOverflow(version, &overflow);
    if (overflow) goto done;
  }
  *wait = NO_WAIT;
  *version_out = ver;
  if (ver >= 3 && stream && stream != Py_None) {
    uint64_t st;
    if (!read_u64(stream, &st) || st == 0 || st > INT64_MAX) goto done;
    *wait = (int64_t)st;
  }
  a->value.p = (const void*)(uintptr_t)address;
  a->extent = count * (uint64_t)itemsize;
  *item = (int)itemsize;
  ok = 1;
done:
  Py_XDECREF(cai);
  return ok ? 1 : fail();
}

static int read_pointer(PyObject* v, const Param* p, int device, tri_arg* a, int64_t* wait) {
  PyTypeObject* type = Py_TYPE(v);
  a->kind = TRI_TYPE_POINTER;
  a->dtype = p->dtype;
  *wait = NO_WAIT;
  if (!device) {
    if (type == g_ndarray && g_numpy_ok) return read_numpy(v, p, a);
    if (type == g_buffer) return read_described(v, p, a);
    return 0;
  }
  if (type == g_device_ptr) return read_described(v, p, a);
  if (type == g_torch_tensor) {
    int r = read_torch(v, p, a);
    if (r != 2) return r;
  }
  if (type == g_ndarray || type == g_buffer) return 0;
  int itemsize;
  int64_t version;
  if (!read_cai(v, p, a, wait, &itemsize, &version)) return 0;
  /* A torch tensor read through its interface (version 2: no stream) teaches read_torch its
   * dtype; the Python side checks that it is torch's own Tensor. */
  if (version < 3 && g_learn && type != g_not_torch && type != g_plain_type) {
    if (strcmp(type->tp_name, "Tensor") != 0) {
      g_plain_type = type; /* compared by address only: never dereferenced */
      return 1;
    }
    PyObject* r = PyObject_CallFunction(g_learn, "Oii", v, (int)a->dtype, itemsize);
    if (!r) {
      PyErr_Clear();
    } else {
      if (r == Py_False) {
        Py_INCREF(type);
        Py_XSETREF(g_not_torch, type);
      }
      Py_DECREF(r);
    }
  }
  return 1;
}

static int read_scalar(PyObject* v, const Param* p, tri_arg* a) {
  a->kind = TRI_TYPE_SCALAR;
  a->dtype = p->dtype;
  a->extent = 0;
  if (p->kind == P_INT) {
    if (!PyLong_CheckExact(v)) return 0;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred()) || x < p->lo || x > p->hi) return fail();
    a->value.i = x;
    return 1;
  }
  if (PyFloat_CheckExact(v)) {
    a->value.f = PyFloat_AS_DOUBLE(v);
    return 1;
  }
  if (PyLong_CheckExact(v)) {
    double d = PyLong_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return fail();
    a->value.f = d;
    return 1;
  }
  return 0;
}

/* A stream as tri/_device.py's stream_handle reads it: None, an int, or an object with
 * __cuda_stream__, cuda_stream, ptr or handle giving an int. */
static int read_stream(PyObject* s, uint64_t* out) {
  if (s == NULL || s == Py_None) {
    *out = 0;
    return 1;
  }
  if (PyLong_CheckExact(s)) return read_u64(s, out);
  if (PyLong_Check(s)) return 0; /* bool and int subclasses: the Python path */
  PyObject* h = NULL;
  int r = lookup_attr(s, s_cuda_stream_proto, &h);
  if (r < 0) return fail();
  if (r > 0 && h != Py_None) {
    PyObject* got = PyObject_CallNoArgs(h);
    Py_DECREF(h);
    int ok = got && PyTuple_CheckExact(got) && PyTuple_GET_SIZE(got) >= 2 && read_u64(PyTuple_GET_ITEM(got, 1), out);
    Py_XDECREF(got);
    return ok ? 1 : fail();
  }
  Py_XDECREF(h);
  PyObject* names[3] = {s_cuda_stream, s_ptr, s_handle};
  for (int i = 0; i < 3; ++i) {
    r = lookup_attr(s, names[i], &h);
    if (r < 0) return fail();
    if (r > 0 && h != Py_None) {
      int ok = read_u64(h, out);
      Py_DECREF(h);
      return ok;
    }
    Py_XDECREF(h);
  }
  return 0;
}

static int same_stream(int64_t a, int64_t b) { return a == b || ((a == 0 || a == 1) && (b == 0 || b == 1)); }

/* A grid of plain ints: an int, or a tuple or list of 1 to 3 of them, each in 0..2^32-1. */
static int read_grid(PyObject* g, uint32_t out[3]) {
  out[0] = out[1] = out[2] = 1;
  int64_t v;
  if (PyLong_CheckExact(g)) {
    int overflow;
    v = PyLong_AsLongLongAndOverflow(g, &overflow);
    if (overflow || v < 0 || v > 0xffffffffLL) return fail();
    out[0] = (uint32_t)v;
    return 1;
  }
  if (!is_seq(g)) return 0;
  Py_ssize_t n = seq_len(g);
  if (n < 1 || n > 3) return 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!item_i64(g, i, &v) || v < 0 || v > 0xffffffffLL) return 0;
    out[i] = (uint32_t)v;
  }
  return 1;
}

/* ---- KernelBase: the base class of tri.Kernel; holds what the hot path needs */

typedef struct {
  PyObject_HEAD
  PyObject* handle; /* a Handle, or NULL until _launch_setup */
  int device;
  int nparams;
  Param params[MAX_ARGS];
} KernelBase;

static PyTypeObject KernelBaseType;

static int KernelBase_traverse(KernelBase* self, visitproc visit, void* arg) {
  Py_VISIT(self->handle);
  return 0;
}

static int KernelBase_clear(KernelBase* self) {
  Py_CLEAR(self->handle);
  return 0;
}

static void KernelBase_dealloc(KernelBase* self) {
  PyObject_GC_UnTrack(self);
  KernelBase_clear(self);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* KernelBase_setup(KernelBase* self, PyObject* args) {
  PyObject *handle, *spec;
  int device;
  if (!PyArg_ParseTuple(args, "OO!p", &handle, &PyTuple_Type, &spec, &device)) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(spec);
  Py_CLEAR(self->handle);
  self->nparams = -1; /* nothing fast until the spec is read in full */
  if (handle == Py_None || n > MAX_ARGS) Py_RETURN_NONE; /* every launch takes the Python path */
  if (!PyObject_TypeCheck(handle, &HandleType)) {
    PyErr_SetString(PyExc_TypeError, "_launch_setup: handle must be a tri._launch.Handle or None");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    Param* p = &self->params[i];
    if (!PyArg_ParseTuple(PyTuple_GET_ITEM(spec, i), "iiLL", &p->kind, &p->dtype, &p->lo, &p->hi)) return NULL;
  }
  Py_INCREF(handle);
  self->handle = handle;
  self->device = device;
  self->nparams = (int)n;
  Py_RETURN_NONE;
}

/* Launches with what the readers made of the arguments: 1 done (result or exception set), 0 fall
 * back (nothing set). */
static int fast_launch(KernelBase* k, const uint32_t g[3], PyObject* const* args, Py_ssize_t n, PyObject* stream) {
  if (!k->handle || n != k->nparams) return 0;
  tri_arg raw[MAX_ARGS];
  int64_t waits[MAX_ARGS];
  uint64_t s = 0;
  int explicit_stream = stream != NULL && stream != Py_None;
  if (explicit_stream && !read_stream(stream, &s)) return 0;
  int64_t first_wait = NO_WAIT;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Param* p = &k->params[i];
    waits[i] = NO_WAIT;
    if (p->kind == P_POINTER) {
      if (!read_pointer(args[i], p, k->device, &raw[i], &waits[i])) return 0;
      /* lo is the alignment the kernel was compiled for ({align=N}, or an arg_align promise): a
       * pointer that breaks it goes to the Python path, which refuses it with the message. */
      if (p->lo > 1 && (uint64_t)(uintptr_t)raw[i].value.p % (uint64_t)p->lo != 0) return 0;
      if (first_wait == NO_WAIT) first_wait = waits[i];
    } else if (p->kind == P_INT || p->kind == P_FLOAT) {
      if (!read_scalar(args[i], p, &raw[i])) return 0;
    } else {
      return 0;
    }
  }
  if (k->device) {
    /* No stream given: the one the first v3 array names (1, the legacy stream, is 0 here). */
    if (!explicit_stream && first_wait != NO_WAIT) s = first_wait == 1 ? 0 : (uint64_t)first_wait;
    for (Py_ssize_t i = 0; i < n; ++i)
      if (waits[i] != NO_WAIT && !same_stream(waits[i], (int64_t)s)) return 0; /* ordering: Python */
  }
  Handle* h = (Handle*)k->handle;
  uintptr_t ptr = handle_enter(h);
  if (!ptr) return 0;
  g_fast++;
  int32_t rc;
  Py_BEGIN_ALLOW_THREADS
  rc = g_launch((const void*)ptr, g[0], g[1], g[2], (void*)(uintptr_t)s, raw, (uint32_t)n);
  Py_END_ALLOW_THREADS
  PyObject* r = NULL;
  if (rc != 0) r = PyObject_CallFunction(g_check, "i", (int)rc); /* raises TriError */
  Py_XDECREF(r);
  handle_exit(h);
  return 1;
}

static PyObject* launch_result(void) {
  if (PyErr_Occurred()) return NULL;
  Py_RETURN_NONE;
}

/* Kernel.launch(grid, *args, stream=None). */
static PyObject* KernelBase_launch(KernelBase* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* stream = NULL;
  int plain = nargs >= 1;
  if (kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    if (nk == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "stream") == 0)
      stream = args[nargs];
    else if (nk)
      plain = 0;
  }
  uint32_t g[3];
  if (plain && read_grid(args[0], g) && fast_launch(self, g, args + 1, nargs - 1, stream)) return launch_result();
  /* Everything else: Kernel._launch_py, the pure-Python launch, with the call as it came. */
  g_fallback++;
  PyObject* method = PyObject_GetAttr((PyObject*)self, s_launch_py);
  if (!method) return NULL;
  PyObject* r = PyObject_Vectorcall(method, args, nargsf, kwnames);
  Py_DECREF(method);
  return r;
}

/* ---- Bound: what kernel[grid] returns */

typedef struct {
  PyObject_HEAD
  KernelBase* kernel;
  PyObject* grid;
  uint32_t g[3];
  int grid_ok;
  vectorcallfunc vectorcall;
} Bound;

static PyTypeObject BoundType;

static void Bound_dealloc(Bound* self) {
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->kernel);
  Py_CLEAR(self->grid);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static int Bound_traverse(Bound* self, visitproc visit, void* arg) {
  Py_VISIT(self->kernel);
  Py_VISIT(self->grid);
  return 0;
}

static PyObject* Bound_vectorcall(Bound* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* stream = NULL;
  int plain = self->grid_ok;
  if (kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    if (nk == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "stream") == 0)
      stream = args[nargs];
    else if (nk)
      plain = 0;
  }
  if (plain && fast_launch(self->kernel, self->g, args, nargs, stream)) return launch_result();
  /* The pure-Python form: Kernel._getitem_py(grid)(*args, **kwargs). */
  g_fallback++;
  PyObject* fn = PyObject_CallMethodOneArg((PyObject*)self->kernel, s_getitem_py, self->grid);
  if (!fn) return NULL;
  PyObject* r = PyObject_Vectorcall(fn, args, nargsf, kwnames);
  Py_DECREF(fn);
  return r;
}

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tri._launch.Bound",
    .tp_basicsize = sizeof(Bound),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "kernel[grid]: call it with the kernel's arguments (and stream=) to launch.",
    .tp_dealloc = (destructor)Bound_dealloc,
    .tp_traverse = (traverseproc)Bound_traverse,
    .tp_vectorcall_offset = offsetof(Bound, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static PyObject* KernelBase_getitem(KernelBase* self, PyObject* grid) {
  Bound* b = PyObject_GC_New(Bound, &BoundType);
  if (!b) return NULL;
  Py_INCREF(self);
  b->kernel = self;
  Py_INCREF(grid);
  b->grid = grid;
  b->grid_ok = read_grid(grid, b->g);
  b->vectorcall = (vectorcallfunc)Bound_vectorcall;
  PyObject_GC_Track(b);
  return (PyObject*)b;
}

static PyMappingMethods KernelBase_mapping = {.mp_subscript = (binaryfunc)KernelBase_getitem};

static PyMethodDef KernelBase_methods[] = {
    {"_launch_setup", (PyCFunction)KernelBase_setup, METH_VARARGS,
     "_launch_setup(handle, spec, device): what the hot path launches with (spec: one (kind, dtype, lo, hi) per "
     "runtime parameter); a None handle sends every launch to the Python path."},
    {"launch", (PyCFunction)(void (*)(void))KernelBase_launch, METH_FASTCALL | METH_KEYWORDS,
     "launch($self, grid, /, *args, stream=None)\n--\n\n"
     "Runs the kernel over `grid` (an int or 1 to 3 ints). On the host targets it returns when every program has "
     "finished, and `stream` must be None. On \"cuda\" it enqueues the kernel on `stream` (an int CUstream handle, "
     "or an object with `cuda_stream`, such as torch.cuda.Stream, or `ptr`, such as cupy.cuda.Stream; None: the "
     "stream a v3 __cuda_array_interface__ argument names, else the default stream) and returns."},
    {NULL},
};

static PyTypeObject KernelBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tri._launch.KernelBase",
    .tp_basicsize = sizeof(KernelBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled launch path of tri.Kernel.",
    .tp_new = PyType_GenericNew,
    .tp_traverse = (traverseproc)KernelBase_traverse,
    .tp_clear = (inquiry)KernelBase_clear,
    .tp_dealloc = (destructor)KernelBase_dealloc,
    .tp_methods = KernelBase_methods,
    .tp_as_mapping = &KernelBase_mapping,
};

/* ---- PlanBase: the base class of tri.LaunchPlan */

typedef struct {
  PyObject_HEAD
  PyObject* handle; /* a Handle */
  PyObject* lock;   /* a Lock */
  int sync;         /* launches must order their stream after the arrays' streams: Python */
} PlanBase;

static int PlanBase_traverse(PlanBase* self, visitproc visit, void* arg) {
  Py_VISIT(self->handle);
  Py_VISIT(self->lock);
  return 0;
}

static int PlanBase_clear(PlanBase* self) {
  Py_CLEAR(self->handle);
  Py_CLEAR(self->lock);
  return 0;
}

static void PlanBase_dealloc(PlanBase* self) {
  PyObject_GC_UnTrack(self);
  PlanBase_clear(self);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* PlanBase_setup(PlanBase* self, PyObject* args) {
  PyObject *handle, *lock;
  if (!PyArg_ParseTuple(args, "O!O!", &HandleType, &handle, &LockType, &lock)) return NULL;
  Py_INCREF(handle);
  Py_XSETREF(self->handle, handle);
  Py_INCREF(lock);
  Py_XSETREF(self->lock, lock);
  Py_RETURN_NONE;
}

/* Called with the plan's lock held whenever its arguments or stream change. */
static PyObject* PlanBase_set_sync(PlanBase* self, PyObject* flag) {
  int v = PyObject_IsTrue(flag);
  if (v < 0) return NULL;
  self->sync = v;
  Py_RETURN_NONE;
}

static PyObject* PlanBase_launch(PlanBase* self, PyObject* unused) {
  if (self->handle && self->lock) {
    PyThread_type_lock lock = ((Lock*)self->lock)->lock;
    lock_take(lock);
    Handle* h = (Handle*)self->handle;
    uintptr_t ptr = self->sync ? 0 : handle_enter(h);
    if (ptr) {
      g_fast++;
      int32_t rc;
      Py_BEGIN_ALLOW_THREADS
      rc = g_plan_launch((void*)ptr);
      Py_END_ALLOW_THREADS
      PyObject* r = NULL;
      if (rc != 0) r = PyObject_CallFunction(g_check, "i", (int)rc);
      Py_XDECREF(r);
      handle_exit(h);
      PyThread_release_lock(lock);
      return launch_result();
    }
    PyThread_release_lock(lock);
  }
  g_fallback++;
  return PyObject_CallMethodNoArgs((PyObject*)self, s_plan_launch_py);
}

static PyObject* PlanBase_call(PlanBase* self, PyObject* args, PyObject* kw) {
  if (PyTuple_GET_SIZE(args) || (kw && PyDict_GET_SIZE(kw))) {
    PyObject* method = PyObject_GetAttr((PyObject*)self, s_plan_launch_py);
    if (!method) return NULL;
    PyObject* r = PyObject_Call(method, args, kw);
    Py_DECREF(method);
    return r;
  }
  return PlanBase_launch(self, NULL);
}

static PyMethodDef PlanBase_methods[] = {
    {"_plan_setup", (PyCFunction)PlanBase_setup, METH_VARARGS, "_plan_setup(handle, lock)"},
    {"_plan_set_sync", (PyCFunction)PlanBase_set_sync, METH_O,
     "_plan_set_sync(flag): whether launches must order their stream after the arrays' (the Python path does)"},
    {"launch", (PyCFunction)PlanBase_launch, METH_NOARGS,
     "launch($self, /)\n--\n\nLaunches as Kernel.launch would with the plan's kernel, grid, stream and arguments."},
    {NULL},
};

static PyTypeObject PlanBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tri._launch.PlanBase",
    .tp_basicsize = sizeof(PlanBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled launch path of tri.LaunchPlan.",
    .tp_new = PyType_GenericNew,
    .tp_traverse = (traverseproc)PlanBase_traverse,
    .tp_clear = (inquiry)PlanBase_clear,
    .tp_dealloc = (destructor)PlanBase_dealloc,
    .tp_methods = PlanBase_methods,
    .tp_call = (ternaryfunc)PlanBase_call,
};

/* ---- Module functions */

static int fill_table(PyObject* list, TypeEntry* table, int* count) {
  if (!PyList_Check(list) || PyList_GET_SIZE(list) > MAX_TABLE) {
    PyErr_SetString(PyExc_ValueError, "a type table is a list of at most 64 (key, dtype, itemsize)");
    return -1;
  }
  for (int i = 0; i < *count; ++i) Py_CLEAR(table[i].key);
  *count = 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); ++i) {
    PyObject* key;
    int dtype, itemsize;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "Oii", &key, &dtype, &itemsize)) return -1;
    Py_INCREF(key);
    table[*count].key = key;
    table[*count].dtype = dtype;
    table[*count].itemsize = itemsize;
    ++*count;
  }
  return 0;
}

/* init(launch, plan_launch, check, closed_error, ndarray, numpy_types, probes, device_ptr, buffer,
 *      typestrs, learn): numpy_types is a list of (numpy dtype, tri dtype, itemsize); probes a list
 * of (array, address, nbytes, c_contiguous) as NumPy reports them, against which the layout reads
 * are checked; typestrs a dict of typestr -> (tri dtype, itemsize); learn(value, tri dtype,
 * itemsize) registers a torch tensor's dtype and says whether value is a torch.Tensor. */
static PyObject* mod_init(PyObject* m, PyObject* args) {
  unsigned long long launch, plan_launch;
  PyObject *check, *closed_error, *ndarray, *np_types, *probes, *device_ptr, *buffer, *typestrs, *learn;
  if (!PyArg_ParseTuple(args, "KKOOO!O!O!O!O!O!O", &launch, &plan_launch, &check, &closed_error, &PyType_Type,
                        &ndarray, &PyList_Type, &np_types, &PyList_Type, &probes, &PyType_Type, &device_ptr,
                        &PyType_Type, &buffer, &PyDict_Type, &typestrs, &learn))
    return NULL;
  Py_INCREF(learn);
  Py_XSETREF(g_learn, learn);
  g_launch = (launch_fn)(uintptr_t)launch;
  g_plan_launch = (plan_launch_fn)(uintptr_t)plan_launch;
  Py_INCREF(check);
  Py_XSETREF(g_check, check);
  Py_INCREF(closed_error);
  Py_XSETREF(g_closed_error, closed_error);
  Py_INCREF(ndarray);
  Py_XSETREF(g_ndarray, (PyTypeObject*)ndarray);
  Py_INCREF(device_ptr);
  Py_XSETREF(g_device_ptr, (PyTypeObject*)device_ptr);
  Py_INCREF(buffer);
  Py_XSETREF(g_buffer, (PyTypeObject*)buffer);
  Py_INCREF(typestrs);
  Py_XSETREF(g_typestr, typestrs);
  if (fill_table(np_types, g_np_types, &g_np_count) < 0) return NULL;
  /* The layout reads agree with NumPy on every probe, or the NumPy reader stays off. */
  g_numpy_ok = PyList_GET_SIZE(probes) > 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(probes); ++i) {
    PyObject* arr;
    unsigned long long address, nbytes;
    int contiguous;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(probes, i), "OKKp", &arr, &address, &nbytes, &contiguous)) return NULL;
    NumpyArray* a = (NumpyArray*)arr;
    const TypeEntry* t = Py_TYPE(arr) == g_ndarray ? find_type(g_np_types, g_np_count, a->descr) : NULL;
    uint64_t count = 1;
    if (t && a->nd >= 0 && a->nd <= 64)
      for (int d = 0; d < a->nd; ++d) count *= (uint64_t)a->dimensions[d];
    if (!t || (uintptr_t)a->data != address || count * (uint64_t)t->itemsize != nbytes ||
        !!(a->flags & NPY_C_CONTIGUOUS) != contiguous)
      g_numpy_ok = 0;
  }
  return PyBool_FromLong(g_numpy_ok);
}

/* register_torch(Tensor, [(torch dtype, tri dtype, itemsize), ...]) */
static PyObject* mod_register_torch(PyObject* m, PyObject* args) {
  PyObject *type, *table;
  if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &type, &PyList_Type, &table)) return NULL;
  if (fill_table(table, g_torch_types, &g_torch_count) < 0) return NULL;
  Py_INCREF(type);
  Py_XSETREF(g_torch_tensor, (PyTypeObject*)type);
  Py_RETURN_NONE;
}

static PyObject* mod_torch_registered(PyObject* m, PyObject* unused) { return PyBool_FromLong(g_torch_tensor != NULL); }

static PyObject* mod_counters(PyObject* m, PyObject* unused) {
  return Py_BuildValue("{sKsK}", "fast", g_fast, "fallback", g_fallback);
}

static PyMethodDef module_methods[] = {
    {"init", mod_init, METH_VARARGS, "init(...): the library's entry points and the readers' tables; True when "
                                     "the NumPy reader is on."},
    {"register_torch", mod_register_torch, METH_VARARGS, "register_torch(Tensor, table): read torch tensors directly."},
    {"torch_registered", mod_torch_registered, METH_NOARGS, NULL},
    {"counters", mod_counters, METH_NOARGS,
     "counters(): {'fast': launches the compiled path made, 'fallback': calls it handed to the Python path}"},
    {NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "tri._launch",
                                        "The launch hot path of the Python binding (see the file's comment).", -1,
                                        module_methods};

static int intern(PyObject** out, const char* s) { return (*out = PyUnicode_InternFromString(s)) ? 0 : -1; }

PyMODINIT_FUNC PyInit__launch(void) {
  if (intern(&s_address, "address") || intern(&s_nbytes, "nbytes") || intern(&s_dtype, "dtype") ||
      intern(&s_cai, "__cuda_array_interface__") || intern(&s_mask, "mask") || intern(&s_typestr, "typestr") ||
      intern(&s_shape, "shape") || intern(&s_data, "data") || intern(&s_strides, "strides") ||
      intern(&s_version, "version") || intern(&s_stream, "stream") ||
      intern(&s_cuda_stream_proto, "__cuda_stream__") || intern(&s_cuda_stream, "cuda_stream") ||
      intern(&s_ptr, "ptr") || intern(&s_handle, "handle") || intern(&s_is_cuda, "is_cuda") ||
      intern(&s_requires_grad, "requires_grad") || intern(&s_is_contiguous, "is_contiguous") ||
      intern(&s_data_ptr, "data_ptr") || intern(&s_launch_py, "_launch_py") ||
      intern(&s_getitem_py, "_getitem_py") || intern(&s_plan_launch_py, "_plan_launch_py"))
    return NULL;
  PyTypeObject* types[] = {&HandleType, &LockType, &KernelBaseType, &BoundType, &PlanBaseType};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (PyType_Ready(types[i]) < 0) return NULL;
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return NULL;
  const char* names[] = {"Handle", "Lock", "KernelBase", "Bound", "PlanBase"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject*)types[i]) < 0) {
      Py_DECREF(types[i]);
      Py_DECREF(m);
      return NULL;
    }
  }
  return m;
}
