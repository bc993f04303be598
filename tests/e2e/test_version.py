"""One version (issue 23): the repository's VERSION file, `dmlserve
--version`, `dmlctl --version`, the server's GetCapabilities (what `dmlctl
caps` prints), the Python package (client/python) and, where it exists, the
Node package (client/node/package.json) all agree. Also: `dmlserve --help`
and the README say the same about what --device=auto falls back to."""

import json
import os
import re
import subprocess

from e2e_server import DMLCTL_CMD, DMLSERVE_CMD, SOURCE_DIR, ServerTestCase


def run(*args):
    result = subprocess.run(list(args), capture_output=True, text=True,
                            timeout=60)
    return result.returncode, result.stdout + result.stderr


class VersionTest(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(SOURCE_DIR, "VERSION")) as f:
            cls.version = f.read().strip()

    def test_version_file_is_semver(self):
        self.assertRegex(self.version, r"^\d+\.\d+\.\d+$")

    def test_binaries_print_it(self):
        self.assertEqual(run(*DMLSERVE_CMD, "--version"),
                         (0, "dmlserve %s\n" % self.version))
        self.assertEqual(run(*DMLCTL_CMD, "--version"),
                         (0, "dmlctl %s\n" % self.version))

    def test_server_reports_it(self):
        code, out = run(*DMLCTL_CMD, "--server=" + self.target, "caps")
        self.assertEqual(code, 0, out)
        self.assertEqual(json.loads(out)["serverVersion"], self.version)
        code, out = run(*DMLCTL_CMD, "--server=" + self.target, "caps",
                        "--summary")
        self.assertTrue(out.startswith("dmlserve %s on " % self.version), out)

    def test_packages_carry_it(self):
        with open(os.path.join(SOURCE_DIR, "client", "python", "dmlserve",
                               "_version.py")) as f:
            python = re.search(r'__version__ = "([^"]+)"', f.read()).group(1)
        self.assertEqual(python, self.version)
        node = os.path.join(SOURCE_DIR, "client", "node", "package.json")
        if os.path.exists(node):
            with open(node) as f:
                self.assertEqual(json.load(f)["version"], self.version)

    def test_changelog_has_a_section_for_it(self):
        with open(os.path.join(SOURCE_DIR, "CHANGELOG.md")) as f:
            self.assertRegex(f.read(), r"\n## \[%s\] - \d{4}-\d\d-\d\d\n"
                             % re.escape(self.version))

    def test_help_lists_every_option_group(self):
        # The flags live beside their groups (server/options/flags.cc);
        # --help lists that file and the flags of every group.
        code, help_text = run(*DMLSERVE_CMD, "--help")
        self.assertIn("server/options/flags.cc", help_text)
        for flag in ("--port", "--device", "--max_batch_requests",
                     "--max_in_flight", "--chunk_bytes", "--tls_cert_file",
                     "--log_level", "--drain_seconds"):
            self.assertIn(flag + " (", help_text)

    def test_help_and_readme_agree_on_device_auto(self):
        code, help_text = run(*DMLSERVE_CMD, "--help")
        flat = " ".join(help_text.split())
        self.assertIn("auto (Direct3D 12 on every discrete GPU, else one GPU, "
                      "else the software adapter", flat)
        self.assertNotIn("else cpu", flat)
        with open(os.path.join(SOURCE_DIR, "README.md")) as f:
            readme = f.read()
        row = re.search(r"^\| `--device` \|.*$", readme, re.M).group(0)
        self.assertIn("auto` (Direct3D 12 on every discrete GPU, else one "
                      "GPU, else the software adapter)", row)
