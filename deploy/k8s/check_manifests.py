"""Checks the Kubernetes manifests of a directory (deploy/k8s) against each
other, the dmlserve binary and nginx, without a cluster. problems() lists
what is wrong, as sentences; an empty list means none found.

- kustomization.yaml lists every manifest, and its ConfigMap files exist;
  every manifest parses; no two objects share a kind and name;
- replicas.yaml and balancer/nginx.conf are what render.py writes now
  (from statefulset.yaml's replica count and deploy/nginx/dmlserve.conf);
- the StatefulSet: its selector is its pods' labels; its governing Service
  is headless and selects them; terminationGracePeriodSeconds covers
  preStop + --drain_seconds + --shutdown_grace_seconds; every arg is a
  dmlserve flag; the ports agree (container ports, DMLSERVE_PORT,
  --port, the Prometheus annotation); the probes ask grpc.health.v1 on
  that port with the CA and name of the TLS Secret (readiness on
  dmlserve.v1.DmlService); the files the flags name lie in mounted
  Secrets; CPU and memory are requested and the GPU limited;
- every Service and PodDisruptionBudget selects pods of a workload, and a
  Service's target ports are ports of those pods;
- the balancer: its nginx.conf is the ConfigMap the pod mounts at the path
  of nginx -c; nginx's prefix is a writable volume; it listens on its
  container port; its upstreams are the replicas' Services (names and
  ports) in both upstreams; its certificate, key and upstream CA lie in
  the mounted Secrets, the CA being the replicas' TLS Secret's; the name it
  checks is the probes' --tls-server-name;
- `nginx -t` accepts balancer/nginx.conf, with the mount paths pointing
  at a temporary certificate and the replicas' names at 127.0.0.1 (the only
  changes; nginx must be installed: deploy/setup-debian.sh).

Usage: check_manifests.py [DIR] (DMLSERVE_BIN: the server binary)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import render  # noqa: E402

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
FILE_FLAGS = ("tls_cert_file", "tls_key_file", "tls_client_ca_file", "auth_tokens_file")


def flag_value(args, name, default=None):
    for a in args:
        if a.startswith("--%s=" % name):
            return a.split("=", 1)[1]
    return default


def container_ports(pod_spec):
    return {p["name"]: p["containerPort"]
            for c in pod_spec["containers"] for p in c.get("ports", [])}


def secret_mounts(pod_spec, container):
    """{mount path: (secret name, keys or None for all)} of `container`."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    out = {}
    for m in container.get("volumeMounts", []):
        secret = volumes.get(m["name"], {}).get("secret")
        if secret is not None:
            keys = [i["path"] for i in secret["items"]] if "items" in secret else None
            out[m["mountPath"]] = (secret["secretName"], keys)
    return out


def in_secret(path, mounts):
    """The (secret, key) that `path` names in `mounts`, or None."""
    directory, key = os.path.split(path)
    if directory not in mounts:
        return None
    secret, keys = mounts[directory]
    if keys is not None and key not in keys:
        return None
    return secret, key


def prestop_sleep(container):
    command = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get(
        "command", [])
    found = re.search(r"sleep (\d+)", " ".join(command))
    return int(found.group(1)) if found else 0


class Checker:

    def __init__(self, directory, dmlserve_bin):
        self.dir = directory
        self.bin = dmlserve_bin
        self.problems = []
        self.docs = {}

    def problem(self, text):
        self.problems.append(text)

    def run(self):
        self.check_files()
        if self.problems:
            return self.problems
        for path, content in render.rendered(self.dir).items():
            with open(os.path.join(self.dir, path)) as f:
                if f.read() != content:
                    self.problem("%s is stale: run deploy/k8s/render.py" % path)
        self.sts = self.docs.get(("StatefulSet", "dmlserve"))
        self.lb = self.docs.get(("Deployment", "dmlserve-balancer"))
        if self.sts is None or self.lb is None:
            self.problem("no StatefulSet dmlserve or Deployment dmlserve-balancer")
            return self.problems
        self.check_statefulset()
        self.check_selections()
        self.check_balancer()
        self.check_nginx_t()
        return self.problems

    def check_files(self):
        with open(os.path.join(self.dir, "kustomization.yaml")) as f:
            self.kustomization = yaml.safe_load(f)
        listed = set(self.kustomization["resources"])
        present = {n for n in os.listdir(self.dir)
                   if n.endswith(".yaml") and n != "kustomization.yaml"}
        if listed != present:
            self.problem("kustomization.yaml lists %s, the directory has %s" %
                         (sorted(listed), sorted(present)))
        self.configmaps = {}
        for generator in self.kustomization.get("configMapGenerator", []):
            keys = {}
            for entry in generator["files"]:
                key, path = entry.split("=", 1)
                keys[key] = path
                if not os.path.exists(os.path.join(self.dir, path)):
                    self.problem("ConfigMap %s: no file %s" % (generator["name"], path))
            self.configmaps[generator["name"]] = keys
        for name in sorted(present & listed):
            try:
                with open(os.path.join(self.dir, name)) as f:
                    docs = [d for d in yaml.safe_load_all(f) if d is not None]
            except yaml.YAMLError as e:
                self.problem("%s does not parse: %s" % (name, e))
                continue
            for d in docs:
                key = (d["kind"], d["metadata"]["name"])
                if key in self.docs:
                    self.problem("%s %s is defined twice" % key)
                self.docs[key] = d

    def pods(self, workload):
        return workload["spec"]["template"]

    def check_statefulset(self):
        spec = self.sts["spec"]
        template = self.pods(self.sts)
        pod = template["spec"]
        labels = template["metadata"]["labels"]
        if spec["selector"]["matchLabels"] != labels:
            self.problem("the StatefulSet's selector is not its pods' labels")
        governing = self.docs.get(("Service", spec.get("serviceName")))
        if governing is None or governing["spec"].get("clusterIP") != "None":
            self.problem("the StatefulSet's serviceName %r is no headless Service" %
                         spec.get("serviceName"))
        [c] = pod["containers"]
        args = c.get("args", [])
        total = (prestop_sleep(c) + int(flag_value(args, "drain_seconds", 3)) +
                 int(flag_value(args, "shutdown_grace_seconds", 6)))
        if pod.get("terminationGracePeriodSeconds", 30) <= total:
            self.problem("terminationGracePeriodSeconds %s does not cover preStop + drain "
                         "+ grace (%d s)" % (pod.get("terminationGracePeriodSeconds"), total))
        self.check_flags(args)
        ports = container_ports(pod)
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        grpc_port = ports.get("grpc")
        for what, value in (("DMLSERVE_PORT", env.get("DMLSERVE_PORT")),
                            ("--port", flag_value(args, "port"))):
            if value is not None and int(value) != grpc_port:
                self.problem("%s %s is not the grpc container port %s" %
                             (what, value, grpc_port))
        annotations = template["metadata"].get("annotations", {})
        for value in (env.get("DMLSERVE_METRICS_PORT"),
                      annotations.get("prometheus.io/port")):
            if value is not None and int(value) != ports.get("metrics"):
                self.problem("metrics port %s is not the metrics container port %s" %
                             (value, ports.get("metrics")))
        mounts = secret_mounts(pod, c)
        for name in FILE_FLAGS:
            path = flag_value(args, name)
            if path is not None and in_secret(path, mounts) is None:
                self.problem("--%s=%s is not in a mounted Secret" % (name, path))
        self.replica_secret = in_secret(flag_value(args, "tls_cert_file", ""), mounts)
        self.check_probes(c, grpc_port, mounts)
        resources = c.get("resources", {})
        for kind in ("cpu", "memory"):
            if kind not in resources.get("requests", {}):
                self.problem("the replicas request no %s" % kind)
        gpu = "nvidia.com/gpu"
        if resources.get("requests", {}).get(gpu) != resources.get("limits", {}).get(gpu):
            self.problem("the GPU request and limit differ")
        if not pod.get("securityContext", {}).get("runAsNonRoot"):
            self.problem("the replicas may run as root")

    def check_flags(self, args):
        if not self.bin:
            self.problem("DMLSERVE_BIN is not set: the flags cannot be checked")
            return
        help_text = subprocess.run([self.bin, "--helpfull"], capture_output=True,
                                   text=True, timeout=30).stdout
        known = set(re.findall(r"^\s+--([a-z0-9_]+) ", help_text, re.M))
        if "drain_seconds" not in known:
            self.problem("%s --helpfull lists no flags" % self.bin)
        for arg in args:
            if arg[2:].split("=", 1)[0] not in known:
                self.problem("%s is not a dmlserve flag" % arg)

    def check_probes(self, c, grpc_port, mounts):
        self.cert_name = None
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            command = c.get(probe, {}).get("exec", {}).get("command", [])
            if "health" not in command:
                self.problem("%s is not a dmlctl health check" % probe)
                continue
            if flag_value(command, "server") != "127.0.0.1:%s" % grpc_port:
                self.problem("%s asks %s, not the grpc port %s" %
                             (probe, flag_value(command, "server"), grpc_port))
            ca = in_secret(flag_value(command, "tls-ca", ""), mounts)
            if ca is None or ca[0] != (self.replica_secret or ("",))[0]:
                self.problem("%s's --tls-ca is not the replicas' TLS Secret's" % probe)
            self.cert_name = flag_value(command, "tls-server-name")
            service = flag_value(command, "service")
            wanted = "dmlserve.v1.DmlService" if probe == "readinessProbe" else None
            if service != wanted:
                self.problem("%s asks for service %r, not %r" % (probe, service, wanted))

    def check_selections(self):
        workloads = [self.sts, self.lb]
        pod_names = {"%s-%d" % (self.sts["metadata"]["name"], i)
                     for i in range(self.sts["spec"]["replicas"])}
        for (kind, name), doc in sorted(self.docs.items()):
            if kind not in ("Service", "PodDisruptionBudget"):
                continue
            selector = dict(doc["spec"]["selector"])
            if kind == "PodDisruptionBudget":
                selector = dict(selector["matchLabels"])
            pod_name = selector.pop(render.POD_NAME_LABEL, None)
            chosen = [w for w in workloads
                      if selector.items() <= self.pods(w)["metadata"]["labels"].items()]
            if pod_name is not None:
                chosen = [w for w in chosen if w is self.sts]
                if pod_name not in pod_names:
                    self.problem("Service %s selects pod %s, which the StatefulSet "
                                 "does not have" % (name, pod_name))
            if not chosen:
                self.problem("%s %s selects no workload's pods" % (kind, name))
                continue
            if kind == "Service":
                ports = container_ports(self.pods(chosen[0])["spec"])
                for p in doc["spec"]["ports"]:
                    target = p["targetPort"]
                    if target not in ports and target not in ports.values():
                        self.problem("Service %s: target port %s is no port of its pods" %
                                     (name, target))

    def balancer_conf(self):
        with open(os.path.join(self.dir, "balancer", "nginx.conf")) as f:
            return f.read()

    def check_balancer(self):
        template = self.pods(self.lb)
        pod = template["spec"]
        if self.lb["spec"]["selector"]["matchLabels"] != template["metadata"]["labels"]:
            self.problem("the balancer's selector is not its pods' labels")
        front = self.docs.get(("Service", "dmlserve"))
        if front is None or not (front["spec"]["selector"].items() <=
                                 template["metadata"]["labels"].items()):
            self.problem("Service dmlserve does not select the balancer's pods")
        [c] = pod["containers"]
        command = c.get("command", []) + c.get("args", [])
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        mounts = {m["mountPath"]: volumes.get(m["name"], {}) for m in c["volumeMounts"]}
        conf_path = command[command.index("-c") + 1] if "-c" in command else ""
        conf_volume = mounts.get(os.path.dirname(conf_path), {}).get("configMap")
        key = os.path.basename(conf_path)
        if conf_volume is None or \
                self.configmaps.get(conf_volume["name"], {}).get(key) != "balancer/nginx.conf":
            self.problem("nginx -c %s is not balancer/nginx.conf's ConfigMap" % conf_path)
        prefix = command[command.index("-p") + 1] if "-p" in command else ""
        if "emptyDir" not in mounts.get(prefix, {}):
            self.problem("nginx's prefix %r is not a writable volume" % prefix)
        conf = self.balancer_conf()
        if ("pid %s/nginx.pid;" % prefix) not in conf:
            self.problem("balancer/nginx.conf's pid file is not under the prefix %s" % prefix)
        listen = re.findall(r"^\s*listen \S+:(\d+) ssl http2;", conf, re.M)
        if listen != [str(container_ports(pod).get("grpc"))]:
            self.problem("the balancer listens on %s, its container port is %s" %
                         (listen, container_ports(pod).get("grpc")))
        services = sorted("%s:%d" % (d["metadata"]["name"], d["spec"]["ports"][0]["port"])
                          for (kind, _), d in self.docs.items()
                          if kind == "Service" and render.POD_NAME_LABEL in d["spec"]["selector"])
        blocks = re.findall(r"upstream \S+ \{(.*?)\}", conf, re.S)
        for block in blocks:
            servers = sorted(re.findall(r"^\s*server (\S+)", block, re.M))
            if servers != services:
                self.problem("an upstream lists %s, the replicas' Services are %s" %
                             (servers, services))
        if len(blocks) != 2:
            self.problem("balancer/nginx.conf has %d upstreams, not 2" % len(blocks))
        if len(services) != self.sts["spec"]["replicas"]:
            self.problem("%d replica Services for %d replicas" %
                         (len(services), self.sts["spec"]["replicas"]))
        secrets = secret_mounts(pod, c)
        for directive in ("ssl_certificate", "ssl_certificate_key",
                          "grpc_ssl_trusted_certificate"):
            paths = re.findall(r"^\s*%s (\S+);" % directive, conf, re.M)
            found = in_secret(paths[0], secrets) if len(paths) == 1 else None
            if found is None:
                self.problem("balancer %s %s is not in a mounted Secret" % (directive, paths))
            elif directive == "grpc_ssl_trusted_certificate" and \
                    found != (self.replica_secret[0] if self.replica_secret else None, "ca.crt"):
                self.problem("the balancer trusts %s, not the replicas' TLS Secret's ca.crt" %
                             (found,))
        names = re.findall(r"^\s*grpc_ssl_name (\S+);", conf, re.M)
        if names != [self.cert_name]:
            self.problem("the balancer checks the replicas' name %s, the probes %s" %
                         (names, self.cert_name))
        if pod.get("terminationGracePeriodSeconds", 30) <= prestop_sleep(c):
            self.problem("the balancer's grace does not cover its preStop")

    def check_nginx_t(self):
        if not os.path.exists(NGINX):
            self.problem("nginx is not installed (deploy/setup-debian.sh installs it)")
            return
        conf = self.balancer_conf()
        with tempfile.TemporaryDirectory(prefix="dmls-k8s-") as tmp:
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                 "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                 "/CN=dmlserve", "-keyout", "key.pem", "-out", "cert.pem"],
                cwd=tmp, check=True, capture_output=True)
            for path in sorted(set(re.findall(r"^\s*\S*(?:certificate|_key) (/\S+);",
                                              conf, re.M))):
                name = "key.pem" if path.endswith(".key") else "cert.pem"
                conf = conf.replace(path, os.path.join(tmp, name))
            for host in set(re.findall(r"^\s*server ([^\s:]+):", conf, re.M)):
                conf = re.sub(r"(server )%s:" % re.escape(host), r"\g<1>127.0.0.1:", conf)
            prefix = re.search(r"^pid (\S+)/nginx.pid;", conf, re.M)
            if prefix:
                conf = conf.replace(prefix.group(1) + "/", tmp + "/")
            conf = conf.replace("error_log stderr", "error_log %s/error.log" % tmp)
            path = os.path.join(tmp, "nginx.conf")
            with open(path, "w") as f:
                f.write(conf)
            result = subprocess.run([NGINX, "-t", "-p", tmp, "-c", path, "-e",
                                     os.path.join(tmp, "error.log")],
                                    capture_output=True, text=True, timeout=30)
            if result.returncode != 0:
                self.problem("nginx -t refuses balancer/nginx.conf: %s" %
                             result.stderr.strip()[-600:])


def problems(directory=HERE, dmlserve_bin=None):
    return Checker(directory, dmlserve_bin or os.environ.get("DMLSERVE_BIN")).run()


if __name__ == "__main__":
    found = problems(sys.argv[1] if len(sys.argv) > 1 else HERE)
    for p in found:
        print(p)
    sys.exit(1 if found else 0)
