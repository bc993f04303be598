"""Writes the two files of deploy/k8s that follow the replica count:

  replicas.yaml       one ClusterIP Service per StatefulSet pod (dmlserve-0,
                      dmlserve-1, ...), selected by the pod-name label the
                      StatefulSet controller sets: the balancer's upstreams,
                      with addresses that survive a pod's replacement
  balancer/nginx.conf deploy/nginx/dmlserve.conf rendered for the balancer
                      (deploy/nginx/render_conf.py): those Services as
                      upstreams, TLS on both sides, the paths where
                      balancer.yaml mounts its files

from statefulset.yaml (replicas, the gRPC port) and balancer.yaml (its
port and mounts). After changing `replicas`: python3 deploy/k8s/render.py
(check_manifests.py fails while the files are stale). --check only
compares."""

import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "nginx"))
import render_conf  # noqa: E402  (deploy/nginx/render_conf.py)

# The name the replicas' certificate carries (the probes' --tls-server-name
# too): one certificate for every replica.
REPLICA_CERT_NAME = "dmlserve"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"


def load(directory, name):
    with open(os.path.join(directory, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def port_named(container, name):
    return {p["name"]: p["containerPort"] for p in container["ports"]}[name]


def mount_of(container, volume_name):
    for m in container["volumeMounts"]:
        if m["name"] == volume_name:
            return m["mountPath"]
    raise KeyError("no mount of volume %s" % volume_name)


def replica_services(statefulset):
    """The Service documents, one per replica."""
    name = statefulset["metadata"]["name"]
    labels = statefulset["spec"]["template"]["metadata"]["labels"]
    [container] = statefulset["spec"]["template"]["spec"]["containers"]
    port = port_named(container, "grpc")
    docs = []
    for i in range(statefulset["spec"]["replicas"]):
        pod = "%s-%d" % (name, i)
        selector = dict(labels)
        selector[POD_NAME_LABEL] = pod
        docs.append({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": pod, "labels": dict(labels)},
            "spec": {
                "type": "ClusterIP",
                "selector": selector,
                "ports": [{"name": "grpc", "port": port, "targetPort": "grpc",
                           "appProtocol": "grpc"}],
            },
        })
    return docs


def replicas_yaml(statefulset):
    n = statefulset["spec"]["replicas"]
    header = ("# Written by deploy/k8s/render.py from statefulset.yaml (replicas: %d):\n"
              "# one ClusterIP Service per replica, the balancer's upstreams. Do not\n"
              "# edit; change the replica count and run render.py.\n" % n)
    return header + yaml.safe_dump_all(replica_services(statefulset), sort_keys=False,
                                       explicit_start=True)


def balancer_conf(statefulset, balancer):
    pod = balancer["spec"]["template"]["spec"]
    [nginx] = pod["containers"]
    upstreams = ["%s:%d" % (s["metadata"]["name"], s["spec"]["ports"][0]["port"])
                 for s in replica_services(statefulset)]
    tls = mount_of(nginx, "tls")
    return render_conf.render(
        upstreams,
        listen="0.0.0.0:%d" % port_named(nginx, "grpc"),
        prefix=mount_of(nginx, "run"),
        error_log="stderr",
        server_tls=(tls + "/tls.crt", tls + "/tls.key"),
        upstream_tls=(mount_of(nginx, "upstream-ca") + "/ca.crt", REPLICA_CERT_NAME))


def rendered(directory):
    """{relative path: content} of the files render.py writes."""
    [statefulset] = load(directory, "statefulset.yaml")
    [balancer] = load(directory, "balancer.yaml")
    return {
        "replicas.yaml": replicas_yaml(statefulset),
        os.path.join("balancer", "nginx.conf"): balancer_conf(statefulset, balancer),
    }


def main(argv):
    check = "--check" in argv
    stale = []
    for path, content in rendered(HERE).items():
        full = os.path.join(HERE, path)
        try:
            with open(full) as f:
                same = f.read() == content
        except OSError:
            same = False
        if same:
            continue
        stale.append(path)
        if not check:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(content)
    for path in stale:
        print("%s %s" % ("stale:" if check else "wrote", path))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
