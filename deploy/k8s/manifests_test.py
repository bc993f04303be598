"""The manifests of deploy/k8s pass check_manifests.py (no cluster needed),
and the check fails for each way of breaking them listed in BREAKAGES
(each applied to a copy of the directory).

DMLSERVE_BIN: the server binary whose --helpfull lists the flags."""

import os
import re
import shutil
import tempfile
import unittest

import check_manifests

HERE = os.path.dirname(os.path.abspath(__file__))


def edit(name, old, new):
    """A breakage: `old` replaced by `new` in file `name` (once, found)."""
    def apply(directory):
        path = os.path.join(directory, name)
        with open(path) as f:
            text = f.read()
        if old not in text:
            raise AssertionError("%r is not in %s" % (old, name))
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
    return apply


# (what is broken, how, a piece of the problem it must cause)
BREAKAGES = [
    ("a Service's selector", edit("service.yaml", "name: dmlserve\n  ports",
                                  "name: dmlserv\n  ports"),
     "dmlserve-headless selects no workload"),
    ("the gRPC port of the env", edit("statefulset.yaml", 'value: "50051"', 'value: "50052"'),
     "DMLSERVE_PORT 50052 is not the grpc container port"),
    ("the grace", edit("statefulset.yaml", "terminationGracePeriodSeconds: 60",
                       "terminationGracePeriodSeconds: 40"),
     "does not cover preStop + drain + grace (45 s)"),
    ("the replica count without render.py", edit("statefulset.yaml", "replicas: 3", "replicas: 4"),
     "replicas.yaml is stale"),
    ("an upstream left out", edit(os.path.join("balancer", "nginx.conf"),
                                  "        server dmlserve-2:50051 max_fails=1 fail_timeout=5s;\n"
                                  "        keepalive", "        keepalive"),
     "an upstream lists ['dmlserve-0:50051', 'dmlserve-1:50051']"),
    ("an nginx directive nginx refuses", edit(os.path.join("balancer", "nginx.conf"),
                                              "grpc_ssl_verify on;", "grpc_ssl_verify yes;"),
     "nginx -t refuses"),
    ("a flag dmlserve does not have", edit("statefulset.yaml", "--log_format=json",
                                           "--log_fromat=json"),
     "--log_fromat=json is not a dmlserve flag"),
    ("a token file outside the Secret", edit("statefulset.yaml", "/etc/dmlserve/tokens/tokens",
                                             "/etc/dmlserve/tokens.txt"),
     "--auth_tokens_file=/etc/dmlserve/tokens.txt is not in a mounted Secret"),
    ("the readiness probe on the whole server",
     edit("statefulset.yaml", ', "health",\n                        "--service=dmlserve.v1.DmlService"]',
          ', "health"]'),
     "readinessProbe asks for service None"),
    ("the balancer's config mounted elsewhere",
     edit("balancer.yaml", "mountPath: /etc/dmlserve-balancer/conf",
          "mountPath: /etc/dmlserve-balancer/config"),
     "nginx -c /etc/dmlserve-balancer/conf/nginx.conf is not balancer/nginx.conf's ConfigMap"),
    ("a manifest kustomize does not apply", edit("kustomization.yaml", "  - pdb.yaml\n", ""),
     "kustomization.yaml lists"),
]


class ManifestsTest(unittest.TestCase):

    def test_the_manifests_have_no_problems(self):
        self.assertEqual(check_manifests.problems(HERE), [])

    def test_every_breakage_is_found(self):
        for what, breakage, expected in BREAKAGES:
            with self.subTest(broken=what), tempfile.TemporaryDirectory() as tmp:
                copy = os.path.join(tmp, "k8s")
                shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
                breakage(copy)
                found = check_manifests.problems(copy)
                self.assertTrue(any(expected in p for p in found), (expected, found))

    def test_rendered_files_follow_the_replica_count(self):
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "k8s")
            shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
            edit("statefulset.yaml", "replicas: 3", "replicas: 5")(copy)
            for path, content in check_manifests.render.rendered(copy).items():
                with open(os.path.join(copy, path), "w") as f:
                    f.write(content)
            self.assertEqual(check_manifests.problems(copy), [])
            with open(os.path.join(copy, "balancer", "nginx.conf")) as f:
                servers = re.findall(r"server (dmlserve-\d):", f.read())
            self.assertEqual(sorted(set(servers)), ["dmlserve-%d" % i for i in range(5)])


if __name__ == "__main__":
    unittest.main()
