// The cryptography of the disk cache, all of it libsodium's (Debian's libsodium-dev):
//   - the MAC that seals every entry and request shortcut a cache writes: BLAKE2b-256 keyed with
//     the cache's 32-byte secret (crypto_generichash), so bytes that Tri did not write with that
//     secret never load; with no secret (kNoMacKey) the same function is a plain BLAKE2b-256
//     digest, which is what an entry inside a bundle carries;
//   - bundle signatures: Ed25519 (crypto_sign_detached) over a domain string and the bundle's
//     BLAKE2b-256 digest, so a host can require that code it imports was signed with a key it
//     trusts;
//   - random secrets (randombytes_buf).
// docs/cache.md ("Trust") says what each of them protects against.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace tri::cache {

constexpr size_t kMacBytes = 32;
constexpr size_t kMacKeyBytes = 32;
constexpr size_t kPublicKeyBytes = 32;  // Ed25519
constexpr size_t kSecretKeyBytes = 64;  // Ed25519 (libsodium's form: seed and public key)
constexpr size_t kSignatureBytes = 64;

using MacKey = std::array<uint8_t, kMacKeyBytes>;
using Mac = std::array<uint8_t, kMacBytes>;
using PublicKey = std::array<uint8_t, kPublicKeyBytes>;
using SecretKey = std::array<uint8_t, kSecretKeyBytes>;
using Signature = std::array<uint8_t, kSignatureBytes>;

// Initializes libsodium once per process; Code::Internal when it cannot.
Status crypto_init();

// BLAKE2b-256 of `data`, keyed with `key` (null: unkeyed).
Mac mac(const MacKey* key, const void* data, size_t size);
// Incremental form of mac(), for files read in pieces.
class MacStream {
 public:
  explicit MacStream(const MacKey* key);
  void update(const void* data, size_t size);
  Mac finish();

 private:
  alignas(64) unsigned char state_[384];  // crypto_generichash_state, kept out of this header
};
// Compares in constant time.
bool mac_equal(const uint8_t* a, const uint8_t* b);

// A fresh random secret.
MacKey random_mac_key();

// Ed25519.
void sign_keypair(PublicKey* pk, SecretKey* sk);
Signature sign(const SecretKey& sk, const void* message, size_t size);
bool verify(const PublicKey& pk, const Signature& sig, const void* message, size_t size);
// The public half of a secret key (libsodium keeps it in the secret key's last 32 bytes).
PublicKey public_of(const SecretKey& sk);

// Overwrites a secret key with zeros (sodium_memzero: not optimized away).
void wipe(SecretKey* sk);


}  // namespace tri::cache
