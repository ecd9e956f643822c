// Modules, blobs and reflection: tri_module_create reads IR (text, binary or Triton's TTIR), verifies it and
// precomputes every answer the reflection calls give, so that a module is immutable afterwards
// and may be read from many threads without locks.
#include <algorithm>
#include <cstring>
#include <vector>

#include "capi/handles.h"
#include "import/triton/ttir.h"
#include "ir/binary.h"
#include "ir/limits.h"
#include "ir/text.h"
#include "ir/verifier.h"

using namespace tri;
using tri::capi::make_blob;
using tri::capi::module_release;
using tri::capi::FunctionRec;
using tri::capi::guard;
using tri::capi::ParamRec;
using tri::capi::set_error;

static_assert(TRI_DTYPE_I1 == static_cast<int>(ir::Scalar::I1) && TRI_DTYPE_F64 == static_cast<int>(ir::Scalar::F64) &&
                  TRI_DTYPE_F8E5M2 == static_cast<int>(ir::Scalar::F8E5M2) && ir::kNumScalars == 11,
              "TRI_DTYPE_* must follow ir::Scalar");

namespace {

// A constexpr default as IR text, spelled as the canonical printer spells literals.
std::string literal_text(const ir::Attr& a) {
  switch (a.kind) {
    case ir::Attr::Kind::Int: return std::to_string(a.i);
    case ir::Attr::Kind::Bool: return a.i ? "true" : "false";
    case ir::Attr::Kind::Float: return ir::format_float(a.f);
    case ir::Attr::Kind::Sym: return a.s;
    default: return std::string();
  }
}

struct ParamText {
  std::string name, type, default_text;
  bool has_default = false;
  ParamRec rec{};
};

struct FunctionText {
  std::string name;
  int32_t kind = TRI_FUNCTION_KERNEL;
  std::vector<ParamText> params;
};

void describe_type(const ir::Module& m, ir::TypeId t, ParamRec* rec) {
  const ir::TypeData& d = m.types.get(t);
  auto scalar_of = [&](ir::TypeId s) {
    const ir::TypeData& e = m.types.get(s);
    return static_cast<int32_t>(e.kind == ir::TypeKind::Ptr ? m.types.get(e.pointee).scalar : e.scalar);
  };
  switch (d.kind) {
    case ir::TypeKind::Scalar:
      rec->type_kind = TRI_TYPE_SCALAR;
      rec->dtype = static_cast<int32_t>(d.scalar);
      break;
    case ir::TypeKind::Ptr:
      rec->type_kind = TRI_TYPE_POINTER;
      rec->dtype = scalar_of(t);
      break;
    case ir::TypeKind::Block:
      rec->type_kind = TRI_TYPE_BLOCK;
      rec->dtype = scalar_of(d.elem);  // a block of pointers reports the pointee
      break;
  }
}

std::vector<FunctionText> describe(const ir::Module& m) {
  std::vector<FunctionText> out;
  out.reserve(m.functions.size());
  for (const auto& f : m.functions) {
    FunctionText ft;
    ft.name = f->name;
    ft.kind = f->is_kernel ? TRI_FUNCTION_KERNEL : TRI_FUNCTION_DEVICE;
    for (const ir::Param& p : f->params) {
      ParamText pt;
      pt.name = p.name;
      pt.type = m.type_str(p.type);
      pt.rec.kind = TRI_PARAM_VALUE;
      describe_type(m, p.type, &pt.rec);
      pt.rec.align = p.align;
      pt.rec.divisible = p.divisible;
      pt.rec.noalias = p.noalias ? 1 : 0;
      ft.params.push_back(std::move(pt));
    }
    for (const ir::Constexpr& c : f->constexprs) {
      ParamText pt;
      pt.name = c.name;
      pt.type = ir::scalar_name(c.type);
      pt.rec.kind = TRI_PARAM_CONSTEXPR;
      pt.rec.type_kind = TRI_TYPE_SCALAR;
      pt.rec.dtype = static_cast<int32_t>(c.type);
      pt.has_default = c.default_value.present();
      if (pt.has_default) pt.default_text = literal_text(c.default_value);
      ft.params.push_back(std::move(pt));
    }
    out.push_back(std::move(ft));
  }
  return out;
}

// Lays the reflection records and their strings out in one block from the allocator hook:
//   FunctionRec[nf] | ParamRec[np] | uint32_t by_name[nf] | strings (NUL-terminated).
Status build_tables(tri_module* mod) {
  std::vector<FunctionText> fns = describe(*mod->ir);
  size_t nf = fns.size(), np = 0, chars = 0;
  for (const FunctionText& f : fns) {
    chars += f.name.size() + 1;
    for (const ParamText& p : f.params) {
      ++np;
      chars += p.name.size() + 1 + p.type.size() + 1 + (p.has_default ? p.default_text.size() + 1 : 0);
    }
  }
  if (nf > UINT32_MAX || np > UINT32_MAX) return Status(Code::LimitExceeded, "module: too many functions or parameters");
  const size_t off_params = nf * sizeof(FunctionRec);
  const size_t off_index = off_params + np * sizeof(ParamRec);
  const size_t off_chars = off_index + nf * sizeof(uint32_t);
  const size_t size = off_chars + chars;
  static_assert(sizeof(FunctionRec) % alignof(ParamRec) == 0 && sizeof(ParamRec) % alignof(uint32_t) == 0,
                "each table must start aligned for its records");
  void* block = capi::mem_alloc(mod->context, size, alignof(std::max_align_t));
  if (!block) return Status(Code::OutOfMemory, "tri_module_create: the allocator returned NULL");
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
    FunctionText& f = fns[i];
    frec[i].name = put(f.name);
    frec[i].kind = f.kind;
    frec[i].first_param = pi;
    frec[i].param_count = static_cast<uint32_t>(f.params.size());
    for (ParamText& p : f.params) {
      ParamRec r = p.rec;
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

Status load(const void* data, size_t size, const std::string& source_name, std::unique_ptr<ir::Module>* out,
            ir::TextComments* comments) {
  if (size > ir::kMaxInputBytes)
    return error_at(Code::LimitExceeded, source_name, Loc{},
                    "the input is " + std::to_string(size) + " bytes, more than the limit of " +
                        std::to_string(ir::kMaxInputBytes) + " (kMaxInputBytes)");
  std::unique_ptr<ir::Module> m;
  if (ir::is_binary(data, size)) {
    TRI_RETURN_IF_ERROR(ir::read_binary(data, size, source_name, &m));
  } else if (import::looks_like_ttir(data, size)) {
    // Triton's TTIR (docs/import.md), told apart from Tri's text by how it starts.
    TRI_RETURN_IF_ERROR(import::import_ttir(std::string_view(static_cast<const char*>(data), size), source_name, &m));
  } else {
    TRI_RETURN_IF_ERROR(
        ir::parse_text(std::string_view(static_cast<const char*>(data), size), source_name, &m, comments));
  }
  TRI_RETURN_IF_ERROR(ir::verify(*m));
  *out = std::move(m);
  return Status::ok();
}

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
  void* mem = capi::mem_alloc(c, sizeof(tri_blob) + bytes.size(), alignof(tri_blob));
  if (!mem) return set_error(Code::OutOfMemory, std::string(what) + ": the allocator returned NULL");
  auto* b = new (mem) tri_blob{c, bytes.size()};
  if (!bytes.empty()) std::memcpy(b->bytes(), bytes.data(), bytes.size());
  capi::context_retain(c);
  *out = b;
  return TRI_OK;
}

}  // namespace tri::capi

extern "C" {

TRI_API tri_result tri_module_create(tri_context* context, const void* data, size_t size, const char* source_name,
                                     tri_module** out_module) {
  tri_result r = guard([&]() -> tri_result {
    TRI_CHECK_ARG(context);
    TRI_CHECK_ARG(data);
    TRI_CHECK_ARG(out_module);
    std::string name = source_name ? source_name : "<input>";
    if (size == 0) return set_error(Code::InvalidArgument, "tri_module_create: " + name + " is empty (size 0)");
    std::unique_ptr<ir::Module> ir_module;
    auto comments = std::make_unique<ir::TextComments>();
    if (Status st = load(data, size, name, &ir_module, comments.get()); !st) return set_error(st);

    void* mem = capi::mem_alloc(context, sizeof(tri_module), alignof(tri_module));
    if (!mem) return set_error(Code::OutOfMemory, "tri_module_create: the allocator returned NULL");
    auto* m = new (mem) tri_module();
    m->context = context;
    capi::context_retain(context);
    m->ir = std::move(ir_module);
    m->comments = std::move(comments);
    m->kernels.set_capacity(context->options.kernel_cache_capacity);
    Status st;
    try {
      st = build_tables(m);
    } catch (...) {
      module_release(m);
      throw;
    }
    if (!st) {
      module_release(m);
      return set_error(st);
    }
    *out_module = m;
    return TRI_OK;
  });
  // The host learns of a failed create through its log sink too, if it set one.
  if (r != TRI_OK && context) context->log(TRI_LOG_ERROR, capi::last_error());
  return r;
}

TRI_API void tri_module_destroy(tri_module* module) { module_release(module); }

TRI_API const void* tri_blob_data(const tri_blob* blob) { return blob ? blob->bytes() : nullptr; }

TRI_API size_t tri_blob_size(const tri_blob* blob) { return blob ? blob->size : 0; }

TRI_API void tri_blob_destroy(tri_blob* blob) {
  if (!blob) return;
  tri_context* c = blob->context;
  size_t size = sizeof(tri_blob) + blob->size;
  blob->~tri_blob();
  capi::mem_free(c, blob, size);
  capi::context_release(c);
}

TRI_API tri_result tri_module_to_text(const tri_module* module, tri_blob** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_text);
    return make_blob(module->context, ir::print_text(*module->ir), "tri_module_to_text", out_text);
  });
}

TRI_API tri_result tri_module_to_text_with_comments(const tri_module* module, tri_blob** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_text);
    return make_blob(module->context, ir::print_text(*module->ir, module->comments.get()),
                     "tri_module_to_text_with_comments", out_text);
  });
}

TRI_API tri_result tri_module_to_binary(const tri_module* module, tri_blob** out_binary) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_binary);
    return make_blob(module->context, ir::write_binary(*module->ir), "tri_module_to_binary", out_binary);
  });
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
