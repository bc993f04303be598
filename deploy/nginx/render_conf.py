"""Renders deploy/nginx/dmlserve.conf (a template) into an nginx.conf.

The template's placeholders, between at-signs:
  LISTEN           the address nginx listens on ("127.0.0.1:8080"; " ssl"
                   is added with server TLS)
  UPSTREAMS        one `server HOST:PORT ...;` line per replica (in both
                   upstreams, so the hash ring is made of the same names)
  PREFIX           the directory of the pid file and the temp files
  ERROR_LOG        a path, or "stderr"
  SERVER_TLS       the certificate and key nginx shows its clients
  UPSTREAM_SCHEME  grpc, or grpcs with upstream TLS
  UPSTREAM_TLS     the CA that the replicas' certificate must chain to and
                   the name it must carry

Used by tests/e2e/test_load_balancer.py (plain and TLS) and
deploy/k8s/render.py (the Kubernetes balancer's ConfigMap). As a program:
  render_conf.py --listen=127.0.0.1:8080 --prefix=/tmp/lb \\
      --upstream=127.0.0.1:50051 --upstream=127.0.0.1:50052 > nginx.conf"""

import argparse
import os
import re
import sys

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dmlserve.conf")

# What nginx does with a replica that fails: out of the ring for 5 s after
# one failed connection (its tenants go to the next replica meanwhile).
SERVER_PARAMETERS = "max_fails=1 fail_timeout=5s"


def server_tls_lines(cert, key):
    return ("        ssl_certificate %s;\n"
            "        ssl_certificate_key %s;\n"
            "        ssl_protocols TLSv1.2 TLSv1.3;" % (cert, key))


def upstream_tls_lines(ca, name):
    """The replicas' certificate must chain to `ca` and name `name` (one
    certificate for every replica: they are interchangeable)."""
    return ("            grpc_ssl_trusted_certificate %s;\n"
            "            grpc_ssl_verify on;\n"
            "            grpc_ssl_name %s;\n"
            "            grpc_ssl_server_name on;\n"
            "            grpc_ssl_session_reuse on;" % (ca, name))


def render(upstreams, listen, prefix, error_log=None, server_tls=None,
           upstream_tls=None, template=None):
    """The configuration for `upstreams` ("HOST:PORT" each). `server_tls`:
    (certificate, key) paths, or None for plain HTTP/2; `upstream_tls`:
    (CA path, certificate name), or None for plain gRPC to the replicas.
    `error_log` defaults to PREFIX/error.log."""
    if template is None:
        with open(TEMPLATE) as f:
            template = f.read()
    if not upstreams:
        raise ValueError("at least one upstream")
    values = {
        "LISTEN": listen + (" ssl" if server_tls else ""),
        "UPSTREAMS": "\n".join("        server %s %s;" % (u, SERVER_PARAMETERS)
                               for u in upstreams),
        "PREFIX": prefix,
        "ERROR_LOG": error_log or prefix + "/error.log",
        "SERVER_TLS": server_tls_lines(*server_tls) if server_tls else "",
        "UPSTREAM_SCHEME": "grpcs" if upstream_tls else "grpc",
        "UPSTREAM_TLS": upstream_tls_lines(*upstream_tls) if upstream_tls else "",
    }
    conf = template
    for key, value in values.items():
        placeholder = "@%s@" % key
        if placeholder not in conf:
            raise ValueError("the template has no %s" % placeholder)
        # A placeholder alone on its line that renders to nothing takes its
        # line with it.
        if not value:
            conf = conf.replace(placeholder + "\n", "")
        conf = conf.replace(placeholder, value)
    left = re.findall(r"@[A-Z_]+@", conf)
    if left:
        raise ValueError("placeholders left: %s" % left)
    return conf

def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--listen", required=True)
    p.add_argument("--prefix", required=True)
    p.add_argument("--upstream", action="append", required=True)
    p.add_argument("--error_log")
    p.add_argument("--tls_cert")
    p.add_argument("--tls_key")
    p.add_argument("--upstream_ca")
    p.add_argument("--upstream_name", default="dmlserve")
    a = p.parse_args(argv)
    server_tls = (a.tls_cert, a.tls_key) if a.tls_cert else None
    upstream_tls = (a.upstream_ca, a.upstream_name) if a.upstream_ca else None
    sys.stdout.write(render(a.upstream, a.listen, a.prefix, a.error_log,
                            server_tls, upstream_tls))


if __name__ == "__main__":
    main(sys.argv[1:])
