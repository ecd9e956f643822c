// Modules from IR: tri_module_create reads IR (text, binary or Triton's TTIR) and verifies it, and
// describe_module turns it into the reflection records every module's tables are built from
// (capi/reflection.cpp); tri_module_to_text and _to_binary give the IR back.
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
using tri::capi::guard;
using tri::capi::make_blob;
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

void describe_type(const ir::Module& m, ir::TypeId t, package::Param* rec) {
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

}  // namespace

namespace tri::capi {

std::vector<package::Function> describe_module(const ir::Module& m) {
  std::vector<package::Function> out;
  out.reserve(m.functions.size());
  for (const auto& f : m.functions) {
    package::Function ft;
    ft.name = f->name;
    ft.kind = f->is_kernel ? TRI_FUNCTION_KERNEL : TRI_FUNCTION_DEVICE;
    for (const ir::Param& p : f->params) {
      package::Param pt;
      pt.name = p.name;
      pt.type = m.type_str(p.type);
      pt.kind = TRI_PARAM_VALUE;
      describe_type(m, p.type, &pt);
      pt.align = p.align;
      pt.divisible = p.divisible;
      pt.noalias = p.noalias ? 1 : 0;
      ft.params.push_back(std::move(pt));
    }
    for (const ir::Constexpr& c : f->constexprs) {
      package::Param pt;
      pt.name = c.name;
      pt.type = ir::scalar_name(c.type);
      pt.kind = TRI_PARAM_CONSTEXPR;
      pt.type_kind = TRI_TYPE_SCALAR;
      pt.dtype = static_cast<int32_t>(c.type);
      pt.has_default = c.default_value.present();
      if (pt.has_default) pt.default_text = literal_text(c.default_value);
      ft.params.push_back(std::move(pt));
    }
    out.push_back(std::move(ft));
  }
  return out;
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

    tri_module* m = nullptr;
    Status st = capi::new_module(context, capi::describe_module(*ir_module), "tri_module_create", &m);
    if (!st) return set_error(st);
    m->name = name;
    m->ir = std::move(ir_module);
    m->comments = std::move(comments);
    *out_module = m;
    return TRI_OK;
  });
  // The host learns of a failed create through its log sink too, if it set one.
  if (r != TRI_OK && context) context->log(TRI_LOG_ERROR, capi::last_error());
  return r;
}

TRI_API tri_result tri_module_to_text(const tri_module* module, tri_blob** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_text);
    if (tri_result r = capi::module_ir(module, "tri_module_to_text")) return r;
    return make_blob(module->context, ir::print_text(*module->ir), "tri_module_to_text", out_text);
  });
}

TRI_API tri_result tri_module_to_text_with_comments(const tri_module* module, tri_blob** out_text) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_text);
    if (tri_result r = capi::module_ir(module, "tri_module_to_text_with_comments")) return r;
    return make_blob(module->context, ir::print_text(*module->ir, module->comments.get()),
                     "tri_module_to_text_with_comments", out_text);
  });
}

TRI_API tri_result tri_module_to_binary(const tri_module* module, tri_blob** out_binary) {
  return guard([&] {
    TRI_CHECK_ARG(module);
    TRI_CHECK_ARG(out_binary);
    if (tri_result r = capi::module_ir(module, "tri_module_to_binary")) return r;
    return make_blob(module->context, ir::write_binary(*module->ir), "tri_module_to_binary", out_binary);
  });
}

}  // extern "C"
