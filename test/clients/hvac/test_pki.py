"""hvac's PKI methods (client.secrets.pki.*), every one. Certificates are checked with openssl."""

import calendar
import os
import subprocess
import tempfile
import time

import hvac

from common import ClientTest, unique


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, text=True, check=True).stdout


def new_csr(common_name):
    """A fresh P-256 key and a CSR for it, made by openssl."""
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "key.pem")
        openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
        return openssl("req", "-new", "-key", key, "-subj", "/CN=" + common_name)


def cert_text(pem):
    return openssl("x509", "-noout", "-text", stdin=pem)


def verify(pem, *chain):
    """openssl verify of `pem` against the given CA certificates (the first one is the root)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root.pem")
        with open(root, "w") as f:
            f.write(chain[0])
        args = ["verify", "-CAfile", root]
        if len(chain) > 1:
            untrusted = os.path.join(tmp, "untrusted.pem")
            with open(untrusted, "w") as f:
                f.write("\n".join(chain[1:]))
            args += ["-untrusted", untrusted]
        return openssl(*args, stdin=pem)


class Pki(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pki = cls.vault.secrets.pki
        cls.mount = unique("pki")
        cls.vault.sys.enable_secrets_engine("pki", path=cls.mount, config={"max_lease_ttl": "87600h"})
        root = cls.pki.generate_root("internal", "Coffer Test Root", extra_params={"ttl": "87600h", "key_type": "ec", "key_bits": 256}, mount_point=cls.mount)
        cls.root_pem = root["data"]["certificate"]
        cls.pki.create_or_update_role(
            "web", extra_params={"allowed_domains": ["example.com"], "allow_subdomains": True, "max_ttl": "72h", "key_type": "ec", "key_bits": 256}, mount_point=cls.mount
        )

    def test_root_ca_reads(self):
        self.assertIn("CN = Coffer Test Root", cert_text(self.root_pem))
        self.assertEqual(self.pki.read_ca_certificate(mount_point=self.mount).strip(), self.root_pem.strip())
        self.assertIn("BEGIN CERTIFICATE", self.pki.read_ca_certificate_chain(mount_point=self.mount))

    def test_roles(self):
        self.pki.create_or_update_role("tmp", extra_params={"allowed_domains": "tmp.example", "allow_bare_domains": True, "ttl": "1h"}, mount_point=self.mount)
        role = self.pki.read_role("tmp", mount_point=self.mount)["data"]
        self.assertEqual(role["allowed_domains"], ["tmp.example"])
        self.assertTrue(role["allow_bare_domains"])
        self.assertEqual(role["ttl"], 3600)
        self.assertIn("tmp", self.pki.list_roles(mount_point=self.mount)["data"]["keys"])
        self.pki.create_or_update_role("tmp", mount_point=self.mount)  # no extra params: an update with nothing
        self.pki.delete_role("tmp", mount_point=self.mount)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.pki.read_role("tmp", mount_point=self.mount)

    def test_issue_read_list_revoke(self):
        issued = self.pki.generate_certificate("web", "www.example.com", extra_params={"alt_names": "api.example.com", "ttl": "24h"}, mount_point=self.mount)["data"]
        text = cert_text(issued["certificate"])
        self.assertIn("CN = www.example.com", text)
        self.assertIn("DNS:api.example.com", text)
        self.assertIn("OK", verify(issued["certificate"], self.root_pem))
        self.assertIn("PRIVATE KEY", issued["private_key"])
        serial = issued["serial_number"]
        self.assertEqual(self.pki.read_certificate(serial, mount_point=self.mount)["data"]["certificate"].strip(), issued["certificate"].strip())
        self.assertIn(serial, self.pki.list_certificates(mount_point=self.mount)["data"]["keys"])
        revoked = self.pki.revoke_certificate(serial, mount_point=self.mount)["data"]
        self.assertGreater(revoked["revocation_time"], 0)
        crl = self.pki.read_crl(mount_point=self.mount)
        listed = openssl("crl", "-noout", "-text", stdin=crl)
        self.assertIn(serial.replace(":", "").upper(), listed.replace(":", "").upper())

    def test_stored_serials_begin_with_their_time(self):
        before = int(time.time() * 1000)
        serials = [self.pki.generate_certificate("web", "order.example.com", mount_point=self.mount)["data"]["serial_number"] for _ in range(3)]
        after = int(time.time() * 1000)
        for serial in serials:
            octets = serial.split(":")
            self.assertEqual(len(octets), 20)
            self.assertTrue(before <= int("".join(octets[:6]), 16) <= after)
        listed = [k for k in self.pki.list_certificates(mount_point=self.mount)["data"]["keys"] if k in serials]
        self.assertEqual(listed, sorted(serials))
        self.assertEqual(len(set(serials)), 3)

    def test_certificates_in_a_row_read_back_as_asked(self):
        # Certificates share their encoding's shape when their parts' lengths match, and subjects,
        # SANs and validities are kept once encoded: names, lengths and TTLs vary and repeat here,
        # and each certificate must still say what its own request asked.
        labels = ["a", "b" * 40, "c" * 63, "a", "d" * 40, "b" * 40]
        for i, label in enumerate(labels):
            name = f"{label}.row.example.com"
            alt = f"{'e' * (i * 9 + 1)}.example.com"
            ttl = 3600 * (1 + i % 3)
            issued = self.pki.generate_certificate("web", name, extra_params={"alt_names": alt, "ttl": f"{ttl}s"}, mount_point=self.mount)["data"]
            pem = issued["certificate"]
            self.assertIn("OK", verify(pem, self.root_pem))
            self.assertEqual(openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", stdin=pem).strip(), f"subject=CN={name}")
            sans = openssl("x509", "-noout", "-ext", "subjectAltName", stdin=pem).split("\n")[1].strip().split(", ")
            self.assertEqual(sorted(sans), sorted([f"DNS:{alt}", f"DNS:{name}"]))
            self.assertEqual(openssl("x509", "-noout", "-serial", stdin=pem).strip(), "serial=" + issued["serial_number"].replace(":", "").upper())
            dates = dict(line.split("=", 1) for line in openssl("x509", "-noout", "-dates", stdin=pem).splitlines())
            seconds = {k: calendar.timegm(time.strptime(v, "%b %d %H:%M:%S %Y GMT")) for k, v in dates.items()}
            lifetime = seconds["notAfter"] - seconds["notBefore"]
            self.assertEqual(lifetime, ttl + 30)  # the 30 s backdate
        for name in ["csr-a.example.com", "csr-" + "f" * 40 + ".example.com", "csr-a.example.com"]:
            signed = self.pki.sign_certificate("web", new_csr(name), name, mount_point=self.mount)["data"]["certificate"]
            self.assertIn("OK", verify(signed, self.root_pem))
            self.assertEqual(openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", stdin=signed).strip(), f"subject=CN={name}")

    def test_issue_refuses_names_outside_the_role(self):
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.pki.generate_certificate("web", "www.evil.test", mount_point=self.mount)

    def test_issue_wrapped(self):
        wrapped = self.pki.generate_certificate("web", "wrapped.example.com", mount_point=self.mount, wrap_ttl="60s")
        unwrapped = self.vault.sys.unwrap(wrapped["wrap_info"]["token"])
        self.assertIn("CN = wrapped.example.com", cert_text(unwrapped["data"]["certificate"]))

    def test_sign_csr(self):
        signed = self.pki.sign_certificate("web", new_csr("csr.example.com"), "csr.example.com", mount_point=self.mount)["data"]
        self.assertIn("CN = csr.example.com", cert_text(signed["certificate"]))
        self.assertIn("OK", verify(signed["certificate"], self.root_pem))

    def test_sign_verbatim(self):
        signed = self.pki.sign_verbatim(new_csr("verbatim.other.test"), mount_point=self.mount)["data"]
        self.assertIn("CN = verbatim.other.test", cert_text(signed["certificate"]))
        with_role = self.pki.sign_verbatim(new_csr("v2.other.test"), name="web", extra_params={"ttl": "1h"}, mount_point=self.mount)["data"]
        self.assertIn("CN = v2.other.test", cert_text(with_role["certificate"]))

    def test_crl_and_url_configuration(self):
        self.pki.set_crl_configuration(expiry="48h", disable=False, mount_point=self.mount)
        self.assertEqual(self.pki.read_crl_configuration(mount_point=self.mount)["data"]["expiry"], "48h")
        self.pki.set_crl_configuration(extra_params={"ocsp_disable": True}, mount_point=self.mount)
        self.assertTrue(self.pki.read_crl_configuration(mount_point=self.mount)["data"]["ocsp_disable"])
        self.pki.set_urls({"issuing_certificates": ["http://ca.example/ca"], "crl_distribution_points": "http://ca.example/crl"}, mount_point=self.mount)
        urls = self.pki.read_urls(mount_point=self.mount)["data"]
        self.assertEqual(urls["issuing_certificates"], ["http://ca.example/ca"])
        self.assertEqual(urls["crl_distribution_points"], ["http://ca.example/crl"])
        rotated = self.pki.rotate_crl(mount_point=self.mount)
        self.assertTrue(rotated["data"]["success"])

    def test_tidy(self):
        reply = self.pki.tidy(extra_params={"tidy_cert_store": True, "tidy_revoked_certs": True, "safety_buffer": "1s"}, mount_point=self.mount)
        self.assertEqual(reply.status_code, 202)

    def test_intermediate_chain(self):
        inter = unique("pki-int")
        self.vault.sys.enable_secrets_engine("pki", path=inter, config={"max_lease_ttl": "43800h"})
        csr = self.pki.generate_intermediate("internal", "Coffer Intermediate", extra_params={"key_type": "ec", "key_bits": 384}, mount_point=inter)["data"]["csr"]
        signed = self.pki.sign_intermediate(csr, "Coffer Intermediate", extra_params={"ttl": "43800h", "format": "pem_bundle"}, mount_point=self.mount)["data"]
        self.assertIn("CA:TRUE", cert_text(signed["certificate"]))
        self.pki.set_signed_intermediate(signed["certificate"], mount_point=inter)
        self.pki.create_or_update_role("svc", extra_params={"allowed_domains": "svc.internal", "allow_subdomains": True}, mount_point=inter)
        leaf = self.pki.generate_certificate("svc", "a.svc.internal", mount_point=inter)["data"]
        ca_pem = self.pki.read_ca_certificate(mount_point=inter)
        self.assertIn("OK", verify(leaf["certificate"], self.root_pem, ca_pem))
        self.assertEqual(leaf["issuing_ca"].strip(), ca_pem.strip())

    def test_exported_root_and_config_ca(self):
        mount = unique("pki-exp")
        self.vault.sys.enable_secrets_engine("pki", path=mount)
        exported = self.pki.generate_root("exported", "Exported Root", extra_params={"key_type": "rsa", "key_bits": 2048}, mount_point=mount)["data"]
        self.assertIn("PRIVATE KEY", exported["private_key"])
        self.pki.delete_root(mount_point=mount)
        self.pki.submit_ca_information(exported["certificate"] + "\n" + exported["private_key"], mount_point=mount)
        self.assertEqual(self.pki.read_ca_certificate(mount_point=mount).strip(), exported["certificate"].strip())

    def test_sign_self_issued(self):
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "k.pem")
            openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key)
            self_issued = openssl("req", "-new", "-x509", "-key", key, "-subj", "/CN=Coffer Test Root", "-days", "1", "-addext", "basicConstraints=critical,CA:TRUE")
        signed = self.pki.sign_self_issued(self_issued, mount_point=self.mount)["data"]
        self.assertIn("CA:TRUE", cert_text(signed["certificate"]))
        self.assertIn("OK", verify(signed["certificate"], self.root_pem))

    def test_managed_keys(self):
        """Issuers on the launcher's SoftHSM2 token: root/generate/kms (EC), intermediate/generate/kms (RSA)."""

        # hvac 0.11.2 has no managed-keys API: the keys are made through the client's generic write.
        def hsm_key(name, **fields):
            self.vault.write(
                "sys/managed-keys/pkcs11/" + name,
                library=os.environ["HSM_LIBRARY"],
                token_label=os.environ["HSM_TOKEN_LABEL"],
                pin=os.environ["HSM_PIN"],
                key_label=name,
                allow_generate_key=True,
                **fields
            )

        ec, rsa = unique("pki-hsm-ec"), unique("pki-hsm-rsa")
        hsm_key(ec, mechanism="0x1041", curve="P256")
        hsm_key(rsa, mechanism="0x0001", key_bits=2048)
        root_mount, int_mount = unique("pki-kms"), unique("pki-kms-int")
        for mount, key in ((root_mount, ec), (int_mount, rsa)):
            self.vault.sys.enable_secrets_engine("pki", path=mount, config={"max_lease_ttl": "87600h"})
            self.vault.sys.tune_mount_configuration(mount, allowed_managed_keys=[key])

        root = self.pki.generate_root("kms", "Coffer HSM Root", extra_params={"managed_key_name": ec, "ttl": "87600h"}, mount_point=root_mount)["data"]
        self.assertNotIn("private_key", root)
        self.assertIn("ecdsa-with-SHA256", cert_text(root["certificate"]))
        self.assertIn("OK", verify(root["certificate"], root["certificate"]))
        key = self.vault.read("%s/key/%s" % (root_mount, root["key_id"]))["data"]
        self.assertEqual((key["key_type"], key["managed_key_name"]), ("ec", ec))

        csr = self.pki.generate_intermediate("kms", "Coffer HSM Intermediate", extra_params={"managed_key_name": rsa}, mount_point=int_mount)["data"]
        self.assertNotIn("private_key", csr)
        checked = subprocess.run(["openssl", "req", "-noout", "-verify"], input=csr["csr"], capture_output=True, text=True)
        self.assertIn("verify OK", checked.stdout + checked.stderr)
        signed = self.pki.sign_intermediate(csr["csr"], "Coffer HSM Intermediate", extra_params={"ttl": "43800h"}, mount_point=root_mount)["data"]
        self.pki.set_signed_intermediate(signed["certificate"], mount_point=int_mount)

        self.pki.create_or_update_role("svc", extra_params={"allowed_domains": "svc.internal", "allow_subdomains": True, "key_type": "ec"}, mount_point=int_mount)
        leaf = self.pki.generate_certificate("svc", "a.svc.internal", mount_point=int_mount)["data"]
        self.assertIn("sha256WithRSAEncryption", cert_text(leaf["certificate"]))
        self.assertIn("OK", verify(leaf["certificate"], root["certificate"], signed["certificate"]))

        self.pki.revoke_certificate(leaf["serial_number"], mount_point=int_mount)
        crl = self.pki.read_crl(mount_point=int_mount)
        self.assertIn(leaf["serial_number"].replace(":", "").upper(), openssl("crl", "-noout", "-text", stdin=crl).replace(":", "").upper())
        with tempfile.TemporaryDirectory() as tmp:
            ca = os.path.join(tmp, "int.pem")
            with open(ca, "w") as f:
                f.write(signed["certificate"])
            checked = subprocess.run(["openssl", "crl", "-noout", "-CAfile", ca], input=crl, capture_output=True, text=True)
        self.assertIn("verify OK", checked.stdout + checked.stderr)

        # No key type may be asked of a managed key.
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.pki.generate_root("kms", "Typed", extra_params={"managed_key_name": ec, "key_type": "rsa"}, mount_point=root_mount)
