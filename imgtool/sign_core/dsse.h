// Attestations as `cosign attest` stores them: an in-toto Statement (v0.1, or v1 for SLSA provenance) about the
// image, in a DSSE envelope signed over PAE(payloadType, payload), as one layer of the
// image at tag sha256-<hex>.att (media type application/vnd.dsse.envelope.v1+json,
// annotations dev.cosignproject.cosign/signature = "" and predicateType).
// Verification is pure, like verify.h: envelope bytes + image digest + keys -> decision.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oci/digest.h"
#include "oci/result.h"
#include "sign_core/verify.h"

namespace imgtool::sign {

inline constexpr std::string_view kDsseMediaType = "application/vnd.dsse.envelope.v1+json";
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";
inline constexpr std::string_view kInTotoStatementType = "https://in-toto.io/Statement/v0.1";
// Statement v1 (SLSA Provenance v1, `imgtool attest --provenance`): verified as v0.1 is.
inline constexpr std::string_view kInTotoStatementV1Type = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kPredicateTypeAnnotation = "predicateType";

// cosign's short names (--type spdxjson) -> predicate type URIs; a URI passes through.
Result<std::string> PredicateTypeFor(const std::string& short_or_uri);

// The statement: subject [{name, digest: {sha256}}], the predicate's JSON as given.
Result<std::string> InTotoStatement(const std::string& subject_name, const oci::Digest& image,
                                    const std::string& predicate_type, std::string_view predicate_json);

// DSSE's pre-authentication encoding: "DSSEv1 <len> <type> <len> <body>".
std::string Pae(std::string_view payload_type, std::string_view payload);

// {"payloadType":..,"payload":b64,"signatures":[{"keyid":"","sig":b64}]}
std::string DsseEnvelope(std::string_view payload_type, std::string_view payload, std::string_view der_signature);

// What VerifyAttestations checks of a statement once its signature verified: _type
// in-toto v0.1 or v1, a subject whose digest is `image`'s sha256 and, when
// `predicate_type` is not empty, that predicateType. kDenied naming what is wrong.
// `attest --provenance` checks a statement with it before signing one.
Status CheckStatementClaims(std::string_view statement, const oci::Digest& image, const std::string& predicate_type);

// The statement inside an envelope (unverified: for finding duplicates).
Result<std::string> EnvelopePayload(std::string_view envelope);

// Layers at sha256-<hex>.att: valid when a trusted key verifies the envelope, the
// statement is in-toto v0.1 or v1 with a subject naming `image`, and (when
// `predicate_type` is not empty) its predicateType matches.
Decision VerifyAttestations(const std::vector<SignatureLayer>& layers, const oci::Digest& image,
                            const std::vector<TrustedKey>& keys, const std::string& predicate_type = "");

}  // namespace imgtool::sign
