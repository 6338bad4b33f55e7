// A throwaway timestamp authority for tests (OpenSSL's TS_RESP_CTX): certificates valid
// an hour either side of now, and DER TimeStampResps it signs. Test-only.
#pragma once

#include <openssl/evp.h>
#include <openssl/ts.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sigstore/keys.h"
#include "sigstore/trusted_root.h"

namespace imgtool::sigstore {

inline Pkey NewKey() { return Pkey(EVP_EC_gen("P-256"), sign::PkeyFree()); }

// A certificate valid from an hour ago to an hour from now, issued by `issuer` (itself when
// null), with extensions given as (NID, OpenSSL config value).
inline Cert MakeCert(const char* cn, const Pkey& key, const Cert& issuer, const Pkey& issuer_key,
                     const std::vector<std::pair<int, const char*>>& exts) {
  static long serial = 1;
  Cert c(X509_new(), X509Free());
  X509_set_version(c.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(c.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), 3600);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(c.get()), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
  X509* parent = issuer ? issuer.get() : c.get();
  X509_set_issuer_name(c.get(), X509_get_subject_name(parent));
  X509_set_pubkey(c.get(), key.get());
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, parent, c.get(), nullptr, nullptr, 0);
  for (auto [nid, value] : exts) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    X509_add_ext(c.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(c.get(), issuer ? issuer_key.get() : key.get(), EVP_sha256());
  return c;
}

struct Tsa {
  Pkey root_key = NewKey(), mid_key = NewKey(), leaf_key = NewKey();
  Cert root, mid, leaf;
  CertAuthority Authority() const { return CertAuthority{{leaf, mid, root}, Validity{}, "https://tsa.test"}; }
};

inline Tsa MakeTsa(const char* intermediate_eku) {
  Tsa t;
  t.root = MakeCert("root", t.root_key, nullptr, nullptr,
                    {{NID_basic_constraints, "critical,CA:TRUE"}, {NID_key_usage, "critical,keyCertSign"}});
  std::vector<std::pair<int, const char*>> mid = {{NID_basic_constraints, "critical,CA:TRUE"},
                                                  {NID_key_usage, "critical,keyCertSign"}};
  if (intermediate_eku != nullptr) mid.emplace_back(NID_ext_key_usage, intermediate_eku);
  t.mid = MakeCert("intermediate", t.mid_key, t.root, t.root_key, mid);
  t.leaf = MakeCert("tsa", t.leaf_key, t.mid, t.mid_key,
                    {{NID_key_usage, "critical,digitalSignature"}, {NID_ext_key_usage, "critical,timeStamping"}});
  return t;
}

// The DER TimeStampResp the TSA gives for `data` hashed with `md`.
inline std::string Stamp(const Tsa& tsa, const EVP_MD* md, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr);
  std::unique_ptr<TS_REQ, decltype(&TS_REQ_free)> req(TS_REQ_new(), &TS_REQ_free);
  std::unique_ptr<TS_MSG_IMPRINT, decltype(&TS_MSG_IMPRINT_free)> imprint(TS_MSG_IMPRINT_new(), &TS_MSG_IMPRINT_free);
  std::unique_ptr<X509_ALGOR, decltype(&X509_ALGOR_free)> alg(X509_ALGOR_new(), &X509_ALGOR_free);
  X509_ALGOR_set_md(alg.get(), md);
  TS_MSG_IMPRINT_set_algo(imprint.get(), alg.get());
  TS_MSG_IMPRINT_set_msg(imprint.get(), digest, static_cast<int>(len));
  TS_REQ_set_version(req.get(), 1);
  TS_REQ_set_msg_imprint(req.get(), imprint.get());
  std::unique_ptr<BIO, decltype(&BIO_free)> query(BIO_new(BIO_s_mem()), &BIO_free);
  i2d_TS_REQ_bio(query.get(), req.get());

  std::unique_ptr<TS_RESP_CTX, decltype(&TS_RESP_CTX_free)> ctx(TS_RESP_CTX_new(), &TS_RESP_CTX_free);
  TS_RESP_CTX_set_signer_cert(ctx.get(), tsa.leaf.get());
  TS_RESP_CTX_set_signer_key(ctx.get(), tsa.leaf_key.get());
  std::unique_ptr<ASN1_OBJECT, decltype(&ASN1_OBJECT_free)> policy(OBJ_txt2obj("1.3.6.1.4.1.57264.2", 1),
                                                                   &ASN1_OBJECT_free);
  TS_RESP_CTX_set_def_policy(ctx.get(), policy.get());
  TS_RESP_CTX_add_md(ctx.get(), md);
  std::unique_ptr<TS_RESP, decltype(&TS_RESP_free)> resp(TS_RESP_create_response(ctx.get(), query.get()),
                                                         &TS_RESP_free);
  unsigned char* out = nullptr;
  int n = resp ? i2d_TS_RESP(resp.get(), &out) : -1;
  std::string der = n > 0 ? std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n)) : "";
  OPENSSL_free(out);
  return der;
}

inline TrustedRoot RootOf(const Tsa& tsa) {
  TrustedRoot root;
  root.timestamp_authorities.push_back(tsa.Authority());
  return root;
}

}  // namespace imgtool::sigstore
