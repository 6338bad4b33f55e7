// Does the transparency log entry's body say what the bundle says? A log vouches for the
// body it stores; a bundle could pair a genuine entry with other content, so every field
// of the body that the bundle can reproduce must match it.
//
// Kinds (entry.kind / kind_version, which the body's kind / apiVersion must repeat):
//   hashedrekord 0.0.1 (Rekor v1, message signatures): spec.data.hash {algorithm (sha256,
//     sha384 or sha512: the one the signature was made over), hex digest of the artifact},
//     spec.signature.content = the signature, spec.signature.publicKey.content = base64 of
//     the PEM certificate or public key.
//   hashedrekord 0.0.2 (Rekor v2): spec.hashedRekordV002 {data {algorithm, digest},
//     signature {content, verifier {x509Certificate|publicKey {rawBytes}, keyDetails}}}.
//     For a message signature the data is the artifact's digest (SHA2_256/384/512, the
//     one the signature was made over); for a DSSE envelope (rekor-v2-spec 6.1.4) it is the
//     hash of PAE(payloadType, payload) under the hash the key details name, and the
//     signature is the envelope's only one.
//   dsse 0.0.1 (Rekor v1): spec.payloadHash {sha256, hex sha256(payload)} and
//     spec.signatures [{signature, verifier = base64 PEM}], the envelope's as a set, every
//     verifier ours. (envelopeHash is the hash of Rekor's own serialization: not checked.)
//   dsse 0.0.2: spec.dsseV002 {payloadHash {SHA2_256, digest}, signatures [{content,
//     verifier}]}, the same rules with Rekor v2's verifier.
//   intoto 0.0.2 (Rekor v1): spec.content.payloadHash {sha256, hex}, spec.content.envelope
//     {payloadType, payload (base64 of base64; optional), signatures [{sig (base64 of
//     base64), publicKey (base64 PEM)}]}. (content.hash is Rekor's serialization: not checked.)
// keyDetails, when Rekor v2 writes them, must be those of the verifier's key.
#pragma once

#include <optional>
#include <string_view>

#include "oci/result.h"
#include "sigstore/bundle.h"
#include "sigstore/hash.h"

namespace imgtool::sigstore {

// `verifier_der` is the signing certificate's DER when the bundle has certificates, else
// the public key's DER SubjectPublicKeyInfo; `artifact` the digest the message signature
// was verified over, which the body must name with the same algorithm (message
// signatures only; DSSE bundles pass an empty digest).
Status VerifyEntryBody(const TlogEntry& entry, const Bundle& bundle, std::string_view verifier_der,
                       const ArtifactDigest& artifact);

// The algorithm a hashedrekord entry's body says the artifact was hashed with (nullopt
// for other kinds, and for a body that cannot be read: VerifyEntryBody refuses that).
// kDenied for a name outside the allow-list (hash.h).
Result<std::optional<HashAlgorithm>> LoggedMessageHash(const TlogEntry& entry);

}  // namespace imgtool::sigstore
