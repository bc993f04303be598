"""PEP 517 build backend of the dmlserve package, on the standard library
alone: a wheel is a zip of the package's files plus METADATA, WHEEL and
RECORD. Builds wheels (pip install ./client/python) and editable wheels
(pip install -e, a .pth file naming this directory); no sdists.

pyproject.toml's [project] gives the metadata, its dynamic version comes
from dmlserve/_version.py, and [tool.dmlserve-build] names the packages
(directories, every .py, .pyi and py.typed under them) and top-level
modules to ship.
"""

import base64
import hashlib
import os
import re
import tomllib
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SHIPPED = (".py", ".pyi", "py.typed")


def _pyproject():
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _version():
    with open(os.path.join(_ROOT, "dmlserve", "_version.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def _metadata(project):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"],
             "Version: " + _version(), "Summary: " + project["description"],
             "License: " + project["license"]["text"],
             "Requires-Python: " + project["requires-python"]]
    lines += ["Requires-Dist: " + d for d in project["dependencies"]]
    readme = os.path.join(_ROOT, project["readme"])
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme) as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _sources(tool):
    """(path in the wheel, path on disk) of every shipped file."""
    out = []
    for package in tool["packages"]:
        for folder, dirs, files in os.walk(os.path.join(_ROOT, package)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(_SHIPPED):
                    disk = os.path.join(folder, name)
                    out.append((os.path.relpath(disk, _ROOT).replace(
                        os.sep, "/"), disk))
    for module in tool.get("modules", ()):
        out.append((module + ".py", os.path.join(_ROOT, module + ".py")))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (name, digest.rstrip(b"=").decode(),
                                len(data))


def _write_wheel(wheel_directory, contents):
    """Writes {path: bytes} plus the dist-info files; returns the name."""
    project = _pyproject()["project"]
    name = project["name"].replace("-", "_")
    dist = "%s-%s" % (name, _version())
    info = dist + ".dist-info/"
    contents = dict(contents)
    contents[info + "METADATA"] = _metadata(project).encode()
    contents[info + "WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: dmlserve_build\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n").encode()
    record = [_record_line(n, d) for n, d in contents.items()]
    record.append(info + "RECORD,,")
    contents[info + "RECORD"] = ("\n".join(record) + "\n").encode()
    filename = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for path, data in contents.items():
            wheel.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    contents = {}
    for path, disk in _sources(_pyproject()["tool"]["dmlserve-build"]):
        with open(disk, "rb") as f:
            contents[path] = f.read()
    return _write_wheel(wheel_directory, contents)


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    return _write_wheel(wheel_directory,
                        {"dmlserve_editable.pth": (_ROOT + "\n").encode()})
