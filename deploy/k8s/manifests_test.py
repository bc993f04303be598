"""Checks the Kubernetes manifests of deploy/k8s against each other and
against the dmlserve binary: they parse; the probes are native gRPC probes
on the gRPC port (readiness on the service that turns NOT_SERVING when a
drain starts); terminationGracePeriodSeconds covers preStop + drain +
grace; every flag in args is a real dmlserve flag; the GPU is requested;
the Services, PodDisruptionBudget and HPA select the Deployment's pods.

DMLSERVE_BIN: the server binary whose --helpfull lists the flags."""

import os
import re
import subprocess
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def flag_value(args, name, default):
    for a in args:
        if a.startswith("--%s=" % name):
            return int(a.split("=", 1)[1])
    return default


class ManifestsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.docs = {}
        for name in ("statefulset.yaml", "service.yaml", "pdb.yaml", "hpa.yaml"):
            for doc in load(name):
                cls.docs[(doc["kind"], doc["metadata"]["name"])] = doc
        cls.deployment = cls.docs[("Deployment", "dmlserve")]
        cls.pod = cls.deployment["spec"]["template"]["spec"]
        [cls.container] = cls.pod["containers"]
        cls.labels = cls.deployment["spec"]["template"]["metadata"]["labels"]

    def test_kustomization_lists_every_manifest(self):
        [k] = load("kustomization.yaml")
        self.assertEqual(sorted(k["resources"]),
                         ["hpa.yaml", "pdb.yaml",
                          "service.yaml", "statefulset.yaml"])

    def test_selectors_match_the_pods(self):
        self.assertEqual(self.deployment["spec"]["selector"]["matchLabels"],
                         self.labels)
        for key in (("Service", "dmlserve"), ("Service", "dmlserve-headless")):
            selector = self.docs[key]["spec"]["selector"]
            self.assertTrue(selector.items() <= self.labels.items(), key)
        pdb = self.docs[("PodDisruptionBudget", "dmlserve")]
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"], self.labels)
        hpa = self.docs[("HorizontalPodAutoscaler", "dmlserve")]
        self.assertEqual(hpa["spec"]["scaleTargetRef"],
                         {"apiVersion": "apps/v1", "kind": "Deployment",
                          "name": "dmlserve"})
        self.assertEqual(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu")
        self.assertGreaterEqual(hpa["spec"]["minReplicas"],
                                pdb["spec"]["maxUnavailable"] + 1)

    def test_headless_service_for_client_side_balancing(self):
        headless = self.docs[("Service", "dmlserve-headless")]["spec"]
        self.assertEqual(headless["clusterIP"], "None")
        self.assertNotIn("clusterIP", self.docs[("Service", "dmlserve")]["spec"])

    def test_ports_agree(self):
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        env = {e["name"]: e["value"] for e in self.container["env"]}
        self.assertEqual(ports["grpc"], int(env["DMLSERVE_PORT"]))
        self.assertEqual(ports["metrics"], int(env["DMLSERVE_METRICS_PORT"]))
        annotations = self.deployment["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(int(annotations["prometheus.io/port"]), ports["metrics"])
        for key in (("Service", "dmlserve"), ("Service", "dmlserve-headless")):
            for p in self.docs[key]["spec"]["ports"]:
                self.assertIn(p["targetPort"], ports, key)

    def test_native_grpc_probes(self):
        port = {p["name"]: p["containerPort"] for p in self.container["ports"]}["grpc"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            self.assertEqual(self.container[probe]["grpc"]["port"], port, probe)
        self.assertEqual(self.container["readinessProbe"]["grpc"]["service"],
                         "dmlserve.v1.DmlService")
        self.assertNotIn("service", self.container["livenessProbe"]["grpc"])

    def test_termination_grace_covers_prestop_drain_and_grace(self):
        args = self.container["args"]
        prestop = self.container["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(prestop[0], "/bin/sleep")
        total = (int(prestop[1]) + flag_value(args, "drain_seconds", 3) +
                 flag_value(args, "shutdown_grace_seconds", 6))
        self.assertGreater(self.pod["terminationGracePeriodSeconds"], total)

    def test_gpu_requested_and_limited(self):
        resources = self.container["resources"]
        self.assertEqual(resources["requests"]["nvidia.com/gpu"], 1)
        self.assertEqual(resources["limits"]["nvidia.com/gpu"], 1)
        self.assertIn("memory", resources["limits"])

    def test_runs_unprivileged_with_a_writable_cache(self):
        self.assertTrue(self.pod["securityContext"]["runAsNonRoot"])
        self.assertEqual(self.pod["securityContext"]["runAsUser"], 10001)
        mounts = {m["mountPath"] for m in self.container["volumeMounts"]}
        self.assertIn("/var/cache/dmlserve", mounts)

    def test_every_arg_is_a_dmlserve_flag(self):
        binary = os.environ.get("DMLSERVE_BIN")
        if not binary:
            self.fail("DMLSERVE_BIN is not set")
        help_text = subprocess.run([binary, "--helpfull"], capture_output=True,
                                   text=True, timeout=30).stdout
        known = set(re.findall(r"^\s+--([a-z0-9_]+) ", help_text, re.M))
        self.assertIn("drain_seconds", known)
        for arg in self.container["args"]:
            name = arg[2:].split("=", 1)[0]
            self.assertIn(name, known, arg)


if __name__ == "__main__":
    unittest.main()
