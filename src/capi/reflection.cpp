// Modules' reflection, whatever they were made from (IR: capi/module.cpp; a package:
// capi/package.cpp): the records of every function and parameter are laid out once, at creation,
// in one block from the allocator hook, so a module is immutable afterwards and its reflection
// calls read it from many threads without locks. Also the modules' and blobs' lifetimes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "capi/handles.h"

using namespace tri;
using tri::capi::FunctionRec;
using tri::capi::guard;
using tri::capi::module_release;
using tri::capi::ParamRec;
using tri::capi::set_error;

namespace {

// The function record for `index`, or a NOT_FOUND error naming the index.
tri_result function_at(const tri_module* m, uint32_t index, const char* what, const FunctionRec** out) {
  if (index >= m->function_count)
    return set_error(Code::NotFound, std::string(what) + ": function index " + std::to_string(index) +
                                         " is out of range (the module has " + std::to_string(m->function_count) +
                                         " functions)");
  *out = &m->functions[index];
  return TRI_OK;
}

tri_result param_at(const tri_module* m, uint32_t index, uint32_t param, const char* what, const ParamRec** out) {
  const FunctionRec* f;
  if (tri_result r = function_at(m, index, what, &f)) return r;
  if (param >= f->param_count)
    return set_error(Code::NotFound, std::string(what) + ": parameter index " + std::to_string(param) +
                                         " is out of range (@" + f->name + " has " +
                                         std::to_string(f->param_count) + " parameters)");
  *out = &m->params[f->first_param + param];
  return TRI_OK;
}

}  // namespace

namespace tri::capi {
namespace {

// Lays the reflection records and their strings out in one block from the allocator hook:
//   FunctionRec[nf] | ParamRec[np] | uint32_t by_name[nf] | strings (NUL-terminated).
Status build_tables(tri_module* mod, const std::vector<package::Function>& fns, const char* what) {
  size_t nf = fns.size(), np = 0, chars = 0;
  for (const package::Function& f : fns) {
    chars += f.name.size() + 1;
    for (const package::Param& p : f.params) {
      ++np;
      chars += p.name.size() + 1 + p.type.size() + 1 + (p.has_default ? p.default_text.size() + 1 : 0);
    }
  }
  if (nf > UINT32_MAX || np > UINT32_MAX) return Status(Code::LimitExceeded, std::string(what) + ": too many functions or parameters");
  const size_t off_params = nf * sizeof(FunctionRec);
  const size_t off_index = off_params + np * sizeof(ParamRec);
  const size_t off_chars = off_index + nf * sizeof(uint32_t);
  const size_t size = off_chars + chars;
  static_assert(sizeof(FunctionRec) % alignof(ParamRec) == 0 && sizeof(ParamRec) % alignof(uint32_t) == 0,
                "each table must start aligned for its records");
  void* block = capi::mem_alloc(mod->context, size, alignof(std::max_align_t));
  if (!block) return Status(Code::OutOfMemory, std::string(what) + ": the allocator returned NULL");
  mod->table = block;
  mod->table_size = size;

  auto* base = static_cast<unsigned char*>(block);
  auto* frec = reinterpret_cast<FunctionRec*>(base);
  auto* prec = reinterpret_cast<ParamRec*>(base + off_params);
  auto* index = reinterpret_cast<uint32_t*>(base + off_index);
  char* str = reinterpret_cast<char*>(base + off_chars);
  auto put = [&](const std::string& s) {
    char* at = str;
    std::memcpy(at, s.c_str(), s.size() + 1);
    str += s.size() + 1;
    return at;
  };
  uint32_t pi = 0;
  for (size_t i = 0; i < nf; ++i) {
    const package::Function& f = fns[i];
    frec[i].name = put(f.name);
    frec[i].kind = f.kind;
    frec[i].first_param = pi;
    frec[i].param_count = static_cast<uint32_t>(f.params.size());
    for (const package::Param& p : f.params) {
      ParamRec r{};
      r.kind = p.kind;
      r.type_kind = p.type_kind;
      r.dtype = p.dtype;
      r.align = p.align;
      r.divisible = p.divisible;
      r.noalias = p.noalias;
      r.name = put(p.name);
      r.type_text = put(p.type);
      r.default_text = p.has_default ? put(p.default_text) : nullptr;
      prec[pi++] = r;
    }
    index[i] = static_cast<uint32_t>(i);
  }
  std::stable_sort(index, index + nf, [&](uint32_t a, uint32_t b) { return std::strcmp(frec[a].name, frec[b].name) < 0; });
  mod->functions = frec;
  mod->function_count = static_cast<uint32_t>(nf);
  mod->params = prec;
  mod->by_name = index;
  return Status::ok();
}

}  // namespace

Status new_module(tri_context* context, const std::vector<package::Function>& fns, const char* what, tri_module** out) {
  void* mem = capi::mem_alloc(context, sizeof(tri_module), alignof(tri_module));
  if (!mem) return Status(Code::OutOfMemory, std::string(what) + ": the allocator returned NULL");
  auto* m = new (mem) tri_module();
  m->context = context;
  capi::context_retain(context);
  m->kernels.set_capacity(context->options.kernel_cache_capacity);
  Status st;
  try {
    st = build_tables(m, fns, what);
  } catch (...) {
    module_release(m);
    throw;
  }
  if (!st) {
    module_release(m);
    return st;
  }
  *out = m;
  return Status::ok();
}

tri_result module_ir(const tri_module* m, const char* what) {
  if (m->ir) return TRI_OK;
  return set_error(Code::NotFound, std::string(what) + ": the module was loaded from a package without its IR (" +
                                       m->name + "); build the package with the IR in it (tri aot keeps it unless "
                                       "--no-ir)");
}

void module_retain(tri_module* m) { m->refs.fetch_add(1, std::memory_order_relaxed); }

void module_release(tri_module* m) {
  if (!m || m->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  tri_context* c = m->context;
  capi::mem_free(c, m->table, m->table_size);
  m->~tri_module();
  capi::mem_free(c, m, sizeof(tri_module));
  capi::context_release(c);
}

// Makes a blob holding `bytes`; it keeps the context alive because its allocator frees it.
tri_result make_blob(tri_context* c, const std::string& bytes, const char* what, tri_blob** out) {
  // No context (tri_tune_plot): malloc's memory, which tri_blob_destroy gives back to free.
  void* mem = c ? capi::mem_alloc(c, sizeof(tri_blob) + bytes.size(), alignof(tri_blob))
                : std::malloc(sizeof(tri_blob) + bytes.size());
  if (!mem) return set_error(Code::OutOfMemory, std::string(what) + ": the allocator returned NULL");
  auto* b = new (mem) tri_blob{c, bytes.size()};
  if (!bytes.empty()) std::memcpy(b->bytes(), bytes.data(), bytes.size());
  if (c) capi::context_retain(c);
  *out = b;
  return TRI_OK;
}


}  // namespace tri::capi

extern "C" {

TRI_API void tri_module_destroy(tri_module* module) { module_release(module); }

TRI_API const void* tri_blob_data(const tri_blob* blob) { return blob ? blob->bytes() : nullptr; }

TRI_API size_t tri_blob_size(const tri_blob* blob) { return blob ? blob->size : 0; }

TRI_API void tri_blob_destroy(tri_blob* blob) {
  if (!blob) return;
  tri_context* c = blob->context;
  size_t size = sizeof(tri_blob) + blob->size;
  blob->~tri_blob();
  if (!c) return std::free(blob);
  capi::mem_free(c, blob, size);
  capi::context_release(c);
}

TRI_API tri_result tri_module_function_count(const tri_module* module, uint32_t* out_count) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_count);
    *out_count = module->function_count;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_find_function(const tri_module* module, const char* name, uint32_t* out_index) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(name);
    TRI_CHECK_ARG(out_index);
    const uint32_t* end = module->by_name + module->function_count;
    const uint32_t* it = std::lower_bound(module->by_name, end, name, [&](uint32_t i, const char* n) {
      return std::strcmp(module->functions[i].name, n) < 0;
    });
    if (it == end || std::strcmp(module->functions[*it].name, name) != 0)
      return set_error(Code::NotFound, std::string("tri_module_find_function: the module has no function named '") +
                                           name + "'");
    *out_index = *it;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_function_name(const tri_module* module, uint32_t index, const char** out_name) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_name);
    const FunctionRec* f;
    if (tri_result r = function_at(module, index, "tri_module_function_name", &f)) return r;
    *out_name = f->name;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_function_kind(const tri_module* module, uint32_t index, int32_t* out_kind) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_kind);
    const FunctionRec* f;
    if (tri_result r = function_at(module, index, "tri_module_function_kind", &f)) return r;
    *out_kind = f->kind;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_count(const tri_module* module, uint32_t index, uint32_t* out_count) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_count);
    const FunctionRec* f;
    if (tri_result r = function_at(module, index, "tri_module_param_count", &f)) return r;
    *out_count = f->param_count;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_name(const tri_module* module, uint32_t index, uint32_t param,
                                         const char** out_name) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_name);
    const ParamRec* p;
    if (tri_result r = param_at(module, index, param, "tri_module_param_name", &p)) return r;
    *out_name = p->name;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_kind(const tri_module* module, uint32_t index, uint32_t param,
                                         int32_t* out_kind) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_kind);
    const ParamRec* p;
    if (tri_result r = param_at(module, index, param, "tri_module_param_kind", &p)) return r;
    *out_kind = p->kind;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_type(const tri_module* module, uint32_t index, uint32_t param,
                                         int32_t* out_type_kind, int32_t* out_dtype, const char** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_type_kind);
    TRI_CHECK_ARG(out_dtype);
    TRI_CHECK_ARG(out_text);
    const ParamRec* p;
    if (tri_result r = param_at(module, index, param, "tri_module_param_type", &p)) return r;
    *out_type_kind = p->type_kind;
    *out_dtype = p->dtype;
    *out_text = p->type_text;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_facts(const tri_module* module, uint32_t index, uint32_t param,
                                          uint32_t* out_align, uint32_t* out_divisible, int32_t* out_noalias) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_align);
    TRI_CHECK_ARG(out_divisible);
    TRI_CHECK_ARG(out_noalias);
    const ParamRec* p;
    if (tri_result r = param_at(module, index, param, "tri_module_param_facts", &p)) return r;
    *out_align = p->align;
    *out_divisible = p->divisible;
    *out_noalias = p->noalias;
    return TRI_OK;
  });
}

TRI_API tri_result tri_module_param_default(const tri_module* module, uint32_t index, uint32_t param,
                                            const char** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_text);
    const ParamRec* p;
    if (tri_result r = param_at(module, index, param, "tri_module_param_default", &p)) return r;
    if (p->kind != TRI_PARAM_CONSTEXPR)
      return set_error(Code::InvalidArgument, std::string("tri_module_param_default: parameter ") +
                                                  std::to_string(param) + " ('" + p->name +
                                                  "') is a runtime parameter, which has no default");
    *out_text = p->default_text;
    return TRI_OK;
  });
}

}  // extern "C"
