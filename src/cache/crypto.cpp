// libsodium behind cache/crypto.h.
#include "cache/crypto.h"

#include <cstring>
#include <mutex>

#include <sodium.h>

namespace tri::cache {

static_assert(sizeof(crypto_generichash_state) <= 384, "MacStream's state is too small");
static_assert(crypto_sign_PUBLICKEYBYTES == kPublicKeyBytes && crypto_sign_SECRETKEYBYTES == kSecretKeyBytes &&
                  crypto_sign_BYTES == kSignatureBytes,
              "Ed25519 sizes");

namespace {

int init_once() {
  static int rc = sodium_init();  // 0 done, 1 already done, -1 failed
  return rc;
}

}  // namespace

Status crypto_init() {
  if (init_once() < 0) return Status(Code::Internal, "libsodium could not be initialized (sodium_init failed)");
  return Status::ok();
}

Mac mac(const MacKey* key, const void* data, size_t size) {
  init_once();
  Mac out;
  crypto_generichash(out.data(), out.size(), static_cast<const unsigned char*>(data), size,
                     key ? key->data() : nullptr, key ? key->size() : 0);
  return out;
}

MacStream::MacStream(const MacKey* key) {
  init_once();
  crypto_generichash_init(reinterpret_cast<crypto_generichash_state*>(state_), key ? key->data() : nullptr,
                          key ? key->size() : 0, kMacBytes);
}

void MacStream::update(const void* data, size_t size) {
  crypto_generichash_update(reinterpret_cast<crypto_generichash_state*>(state_),
                            static_cast<const unsigned char*>(data), size);
}

Mac MacStream::finish() {
  Mac out;
  crypto_generichash_final(reinterpret_cast<crypto_generichash_state*>(state_), out.data(), out.size());
  return out;
}

bool mac_equal(const uint8_t* a, const uint8_t* b) { return sodium_memcmp(a, b, kMacBytes) == 0; }

MacKey random_mac_key() {
  init_once();
  MacKey k;
  randombytes_buf(k.data(), k.size());
  return k;
}

void sign_keypair(PublicKey* pk, SecretKey* sk) {
  init_once();
  crypto_sign_keypair(pk->data(), sk->data());
}

Signature sign(const SecretKey& sk, const void* message, size_t size) {
  init_once();
  Signature sig;
  crypto_sign_detached(sig.data(), nullptr, static_cast<const unsigned char*>(message), size, sk.data());
  return sig;
}

bool verify(const PublicKey& pk, const Signature& sig, const void* message, size_t size) {
  init_once();
  return crypto_sign_verify_detached(sig.data(), static_cast<const unsigned char*>(message), size, pk.data()) == 0;
}

PublicKey public_of(const SecretKey& sk) {
  PublicKey pk;
  crypto_sign_ed25519_sk_to_pk(pk.data(), sk.data());
  return pk;
}

void wipe(SecretKey* sk) { sodium_memzero(sk->data(), sk->size()); }


}  // namespace tri::cache
