// imgtool login HOST / imgtool logout HOST: check credentials against the registry,
// then store them in the containers' auths file (mode 0600). Secrets are read from
// flags or stdin and never printed.
#include <iostream>

#include "cli/output.h"
#include "cli/remote_flags.h"
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

std::string StripScheme(std::string host) {
  auto p = host.find("://");
  if (p != std::string::npos) host = host.substr(p + 3);
  while (!host.empty() && host.back() == '/') host.pop_back();
  return host;
}

int RunLogin(LoginFlags f) {
  f.host = StripScheme(f.host);
  if (f.password_stdin) {
    std::getline(std::cin, f.password);
    if (!f.password.empty() && f.password.back() == '\r') f.password.pop_back();
  }
  if (f.username.empty() || f.password.empty()) {
    return Fail(MakeError(ErrorKind::kInvalidInput, "login: want --username and --password (or --password-stdin)"));
  }
  remote::RegistryOptions opts = ToRegistryOptions(f.remote);
  opts.auth.creds = f.username + ":" + f.password;
  auto reg = remote::Registry::Connect(f.host, opts);
  if (!reg.ok()) return Fail(reg.error());
  remote::HttpRequest req;
  req.url = (*reg)->base_url() + "/v2/";
  auto resp = (*reg)->Do(req, {}, "logging in to " + f.host);
  if (!resp.ok()) return Fail(resp.error());
  if (resp->status != 200) return Fail(remote::ErrorFromResponse(*resp, "logging in to " + f.host));
  std::string path = remote::LoginAuthFile(opts.auth);
  auto st = remote::StoreCredentials(path, f.host, remote::Credentials{f.username, f.password});
  if (!st.ok()) return Fail(st.error());
  std::cout << "Login Succeeded (credentials for " << f.host << " in " << path << ")\n";
  return 0;
}

int RunLogout(LoginFlags f) {
  f.host = StripScheme(f.host);
  remote::AuthOptions auth;
  auth.authfile = f.remote.authfile;
  std::string path = remote::LoginAuthFile(auth);
  auto removed = remote::RemoveCredentials(path, f.host);
  if (!removed.ok()) return Fail(removed.error());
  if (!*removed) return Fail(MakeError(ErrorKind::kNotFound, "not logged in to " + f.host + " (" + path + ")"));
  std::cout << "Removed login credentials for " << f.host << "\n";
  return 0;
}

}  // namespace

void AddLoginCommands(CLI::App& app, Action& run) {
  auto f = std::make_shared<LoginFlags>();
  CLI::App* login =
      app.add_subcommand("login",
                         "Check credentials against a registry and store them (auths form, mode 0600) in\n"
                         "--authfile, $REGISTRY_AUTH_FILE or ~/.docker/config.json.\n\n"
                         "Example:\n  echo \"$PASS\" | imgtool login registry.example:5000 -u ci --password-stdin");
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
  CLI::App* logout = app.add_subcommand("logout", "Remove stored credentials for a registry.");
  logout->add_option("host", g->host, "HOST[:PORT]")->required();
  logout->add_option("--authfile", g->remote.authfile, "Credentials file to edit");
  logout->callback([g, &run] { run = [g] { return RunLogout(*g); }; });
}

}  // namespace imgtool::cli
