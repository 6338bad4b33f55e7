// imgtool login HOST / imgtool logout HOST: check credentials against the registry,
// then store them through the credential helper the auths file configures for HOST
// (credHelpers, else credsStore), or else in the file's auths form (mode 0600). Secrets
// are read from flags or stdin and never printed.
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
#include "remote/cred_helper.h"
#include "remote/credentials.h"
#include "remote/registry_error.h"

namespace imgtool::cli {

namespace {

struct LoginFlags {
  std::string host;
  std::string username;
  std::string password;
  bool password_stdin = false;
  RemoteFlags remote;
};

// "https://index.docker.io/v1/" -> "index.docker.io": docker accepts URLs here.
std::string ServerName(std::string host) {
  auto p = host.find("://");
  if (p != std::string::npos) host = host.substr(p + 3);
  return host.substr(0, host.find('/'));
}

Status Verify(const LoginFlags& f) {
  remote::RegistryOptions opts = ToRegistryOptions(f.remote);
  opts.auth.creds = f.username + ":" + f.password;
  // Docker Hub's names are not its API endpoint.
  auto reg = remote::Registry::Connect(remote::IsDockerHub(f.host) ? "registry-1.docker.io" : f.host, opts);
  if (!reg.ok()) return reg.error();
  remote::HttpRequest req;
  req.url = (*reg)->base_url() + "/v2/";
  auto resp = (*reg)->Do(req, {}, "logging in to " + f.host);
  if (!resp.ok()) return resp.error();
  if (resp->status != 200) return remote::ErrorFromResponse(*resp, "logging in to " + f.host);
  return Status::Ok();
}

int RunLogin(LoginFlags f) {
  f.host = ServerName(f.host);
  if (f.password_stdin) {
    std::getline(std::cin, f.password);
    if (!f.password.empty() && f.password.back() == '\r') f.password.pop_back();
  }
  if (f.username.empty() || f.password.empty()) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "login: want --username and --password (or --password-stdin)"));
  }
  std::string path = remote::LoginAuthFile(remote::AuthOptions{"", f.remote.authfile});
  auto helper = remote::ConfiguredHelper(path, f.host);
  if (!helper.ok()) return Fail(helper.error());
  Status st = Verify(f);
  if (!st.ok()) return Fail(st.error());
  remote::Credentials creds{f.username, f.password};
  std::string where = helper->empty() ? path : remote::HelperProgram(*helper);
  st = helper->empty() ? remote::StoreCredentials(path, f.host, creds)
                       : remote::HelperStore(*helper, remote::ServerKey(f.host), creds);
  if (!st.ok()) return Fail(st.error().Context("storing credentials for " + f.host));
  std::cout << "Login Succeeded (credentials for " << f.host << " in " << where << ")\n";
  return 0;
}

// As docker does: erase from the helper, then drop the file's auths entries too (the
// placeholders docker writes beside a helper, or credentials from before it).
int RunLogout(LoginFlags f) {
  f.host = ServerName(f.host);
  std::string path = remote::LoginAuthFile(remote::AuthOptions{"", f.remote.authfile});
  auto helper = remote::ConfiguredHelper(path, f.host);
  if (!helper.ok()) return Fail(helper.error());
  bool erased = false;
  if (!helper->empty()) {
    auto e = remote::HelperErase(*helper, remote::ServerKey(f.host));
    if (!e.ok()) return Fail(e.error().Context("logging out of " + f.host));
    erased = *e;
  }
  auto removed = remote::RemoveCredentials(path, f.host);
  if (!removed.ok()) return Fail(removed.error());
  if (!erased && !*removed) {
    std::string where = helper->empty() ? path : remote::HelperProgram(*helper) + ", " + path;
    return Fail(MakeError(ErrorKind::kNotFound, "not logged in to " + f.host + " (" + where + ")"));
  }
  std::cout << "Removed login credentials for " << f.host << "\n";
  return 0;
}

}  // namespace

void AddLoginCommands(CLI::App& app, Action& run) {
  auto f = std::make_shared<LoginFlags>();
  CLI::App* login =
      app.add_subcommand("login",
                         "Check credentials against a registry, then store them: through the credential\n"
                         "helper the file configures for HOST (credHelpers, else credsStore: runs\n"
                         "`docker-credential-NAME store`, secret on stdin), else in the auths form (mode 0600).\n"
                         "The file: --authfile, $REGISTRY_AUTH_FILE or ~/.docker/config.json.\n\n"
                         "Examples:\n  echo \"$PASS\" | imgtool login registry.example:5000 -u ci --password-stdin\n"
                         "  # with {\"credHelpers\": {\"registry.example:5000\": \"pass\"}} in ~/.docker/config.json\n"
                         "  # the same command stores through docker-credential-pass");
  login->add_option("host", f->host, "HOST[:PORT]")->required();
  login->add_option("--username,-u", f->username, "User name");
  login->add_option("--password,-p", f->password, "Password (prefer --password-stdin)");
  login->add_flag("--password-stdin", f->password_stdin, "Read the password from stdin");
  login->add_option("--authfile", f->remote.authfile, "Credentials file to write");
  login->add_option("--cert-dir", f->remote.cert_dir, "Folder with the registry's ca.crt");
  login->add_option("--tls-verify", f->remote.tls_verify, "Check the registry's certificate")->default_str("true");
  login->add_flag("--debug", f->remote.debug, "Print every request to stderr (secrets removed)");
  login->callback([f, &run] { run = [f] { return RunLogin(*f); }; });

  auto g = std::make_shared<LoginFlags>();
  CLI::App* logout =
      app.add_subcommand("logout",
                         "Remove stored credentials for a registry: `docker-credential-NAME erase` when the file\n"
                         "configures a helper for HOST, and the file's auths entries for HOST.\n\n"
                         "Example:\n  imgtool logout registry.example:5000");
  logout->add_option("host", g->host, "HOST[:PORT]")->required();
  logout->add_option("--authfile", g->remote.authfile, "Credentials file to edit");
  logout->callback([g, &run] { run = [g] { return RunLogout(*g); }; });
}

}  // namespace imgtool::cli
