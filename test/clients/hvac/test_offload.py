"""Transit and PKI requests the mount's object hands to the Worker, through hvac's own methods.

The client must not be able to tell: results, refusals and error messages are Vault's, and a
change (rotation, min_decryption_version, deletion, a role update) is seen by the very next
request. sys/metrics' coffer.offload.* counters of each test's own mount show which path every
request took: granted (handed off), settled (answered from the Worker), resumed (finished in the
object), answered (a caller's repeated request computed in the Worker first and taken by the
object in one call), recomputed (computed first, but the state had changed: run in the object).
Every test mounts its engine afresh, so those counts are exact.
"""

import base64
import datetime
import os
import subprocess
import tempfile

import hvac
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from common import ClientTest, client, unique

COUNTERS = ("granted", "settled", "resumed", "stale", "answered", "recomputed")
TOO_OLD = "ciphertext or signature version is disallowed by policy (too old)"


def b64(data):
    return base64.b64encode(data).decode()


def openssl(*args, stdin=None):
    return subprocess.run(["openssl", *args], input=stdin, capture_output=True, text=True, check=True).stdout


def verify_with_openssl(pem, root_pem):
    """openssl verify of a leaf against its root, both written into a directory removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root.pem")
        leaf = os.path.join(tmp, "leaf.pem")
        with open(root, "w") as f:
            f.write(root_pem)
        with open(leaf, "w") as f:
            f.write(pem)
        return openssl("verify", "-CAfile", root, leaf)


def not_after(pem):
    """NotAfter, as an aware UTC datetime (Debian's python3-cryptography 38 gives it naive)."""
    return x509.load_pem_x509_certificate(pem.encode()).not_valid_after.replace(tzinfo=datetime.timezone.utc)


class Offload(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.transit = cls.vault.secrets.transit
        cls.pki = cls.vault.secrets.pki

    def counts(self, mount):
        """This mount's offload counters (0 when never incremented)."""
        metrics = self.vault.adapter.get("/v1/sys/metrics")
        counts = dict.fromkeys(COUNTERS, 0)
        for counter in metrics["Counters"]:
            name = counter["Name"]
            if name.startswith("coffer.offload.") and counter["Labels"].get("mount") == mount + "/":
                counts[name[len("coffer.offload."):]] = counter["Count"]
        return counts

    def keyring_term(self):
        return self.vault.sys.get_encryption_key_status()["data"]["term"]

    def setUp(self):
        super().setUp()
        self.term_at_start = self.keyring_term()

    def expect_counts(self, mount, granted=0, settled=0, resumed=0, stale=0, answered=0, recomputed=0):
        """The counters as expected, unless another module on the shared server rotated the keyring
        meanwhile: every object then forgets its grants and state, so requests move from one kind to
        another (stale then resumed, computed first then run in the object, a grant instead of an
        answer first); each is still offered once (granted, answered or recomputed)."""
        got = self.counts(mount)
        want = {"granted": granted, "settled": settled, "resumed": resumed, "stale": stale, "answered": answered, "recomputed": recomputed}
        if self.keyring_term() != self.term_at_start:
            offered = lambda c: c["granted"] + c["answered"] + c["recomputed"]
            self.assertEqual(offered(got), offered(want))
        else:
            self.assertEqual(got, want)

    def transit_mount(self):
        mount = unique("offload-transit")
        self.vault.sys.enable_secrets_engine("transit", path=mount)
        return mount

    def pki_mount(self):
        """A PKI mount with an EC root, and that root's certificate."""
        mount = unique("offload-pki")
        self.vault.sys.enable_secrets_engine("pki", path=mount, config={"max_lease_ttl": "87600h"})
        root = self.pki.generate_root("internal", "Offload Root", extra_params={"ttl": "87600h", "key_type": "ec", "key_bits": 256}, mount_point=mount)
        return mount, root["data"]["certificate"]

    def role(self, mount, name, **params):
        params = {"allowed_domains": ["example.com"], "allow_subdomains": True, "key_type": "ec", "key_bits": 256, **params}
        self.pki.create_or_update_role(name, extra_params=params, mount_point=mount)

    # --- transit ---

    def test_every_offloaded_transit_operation_is_granted_and_settled_or_answered_first(self):
        mount = self.transit_mount()
        aes, signer = unique("aes"), unique("ed25519")
        self.transit.create_key(aes, mount_point=mount)
        self.transit.create_key(signer, key_type="ed25519", mount_point=mount)
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(self.transit.read_key(signer, mount_point=mount)["data"]["keys"]["1"]["public_key"]))
        self.expect_counts(mount)

        plaintext, data = b64(b"handed to the worker"), b"authenticate me"
        ciphertext = self.transit.encrypt_data(aes, plaintext, mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(ciphertext.startswith("vault:v1:"))
        self.assertEqual(self.transit.decrypt_data(aes, ciphertext, mount_point=mount)["data"]["plaintext"], plaintext)
        rewrapped = self.transit.rewrap_data(aes, ciphertext, mount_point=mount)["data"]
        self.assertEqual(rewrapped["key_version"], 1)
        self.assertNotEqual(rewrapped["ciphertext"], ciphertext)
        self.assertEqual(self.transit.decrypt_data(aes, rewrapped["ciphertext"], mount_point=mount)["data"]["plaintext"], plaintext)
        datakey = self.transit.generate_data_key(aes, "plaintext", mount_point=mount)["data"]
        self.assertEqual(len(base64.b64decode(datakey["plaintext"])), 32)
        self.assertEqual(self.transit.decrypt_data(aes, datakey["ciphertext"], mount_point=mount)["data"]["plaintext"], datakey["plaintext"])
        mac = self.transit.generate_hmac(aes, b64(data), mount_point=mount)["data"]["hmac"]
        self.assertTrue(mac.startswith("vault:v1:"))
        self.assertTrue(self.transit.verify_signed_data(aes, b64(data), hmac=mac, mount_point=mount)["data"]["valid"])
        signature = self.transit.sign_data(signer, b64(data), mount_point=mount)["data"]["signature"]
        self.assertTrue(signature.startswith("vault:v1:"))
        public.verify(base64.b64decode(signature.split(":")[2]), data)  # raises if the Worker signed anything else
        self.assertTrue(self.transit.verify_signed_data(signer, b64(data), signature=signature, mount_point=mount)["data"]["valid"])
        self.assertFalse(self.transit.verify_signed_data(signer, b64(b"other"), signature=signature, mount_point=mount)["data"]["valid"])

        # encrypt, 3 decrypts, rewrap, datakey, hmac, sign, 3 verifies: the second and third decrypt
        # and the second verify of the signer repeat a granted request of the same caller.
        self.expect_counts(mount, granted=8, settled=8, answered=3)

    def test_rotation_min_decryption_version_and_deletion_are_seen_at_once(self):
        mount = self.transit_mount()
        name = unique("key")
        self.transit.create_key(name, mount_point=mount)
        plaintext = b64(b"before and after")
        v1 = self.transit.encrypt_data(name, plaintext, mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(v1.startswith("vault:v1:"))

        self.transit.rotate_key(name, mount_point=mount)
        v2 = self.transit.encrypt_data(name, plaintext, mount_point=mount)["data"]
        self.assertTrue(v2["ciphertext"].startswith("vault:v2:"))
        self.assertEqual(v2["key_version"], 2)

        self.transit.update_key_configuration(name, min_decryption_version=2, mount_point=mount)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.transit.decrypt_data(name, v1, mount_point=mount)
        self.assertIn(TOO_OLD, str(refused.exception))
        self.assertEqual(self.transit.decrypt_data(name, v2["ciphertext"], mount_point=mount)["data"]["plaintext"], plaintext)

        self.transit.update_key_configuration(name, deletion_allowed=True, mount_point=mount)
        self.transit.delete_key(name, mount_point=mount)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as gone:
            self.transit.decrypt_data(name, v2["ciphertext"], mount_point=mount)
        self.assertIn("encryption key not found", str(gone.exception))

        # Upsert is on (config/keys, which hvac 0.11.2 has no method for): encrypt makes a new key.
        self.assertFalse(self.vault.read(mount + "/config/keys")["data"]["disable_upsert"])
        again = self.transit.encrypt_data(name, plaintext, mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(again.startswith("vault:v1:"))
        self.assertEqual(self.transit.read_key(name, mount_point=mount)["data"]["latest_version"], 1)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as other_key:
            self.transit.decrypt_data(name, v1, mount_point=mount)
        self.assertIn("cipher: message authentication failed", str(other_key.exception))
        self.assertEqual(self.transit.decrypt_data(name, again, mount_point=mount)["data"]["plaintext"], plaintext)

        # Turning upsert off is seen by the next encrypt of an unknown key.
        self.vault.write(mount + "/config/keys", disable_upsert=True)
        missing = unique("missing")
        with self.assertRaises(hvac.exceptions.InvalidRequest) as not_found:
            self.transit.encrypt_data(missing, plaintext, mount_point=mount)
        self.assertIn("encryption key not found", str(not_found.exception))
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.transit.read_key(missing, mount_point=mount)

        # Granted: the first encrypt, the first decrypt after each change, the upserting encrypt
        # (finished in the object) and the encrypt of a missing key. Answered first: the decrypts that
        # repeat one under an unchanged state. Computed first under a changed state (the rotation,
        # the deletion), so run in the object: the encrypt after the rotation, the decrypt after the deletion.
        self.expect_counts(mount, granted=5, settled=4, resumed=1, answered=2, recomputed=2)

    def test_upsert_creates_the_key_in_the_object(self):
        mount = self.transit_mount()
        name = unique("upsert")
        ciphertext = self.transit.encrypt_data(name, b64(b"first use"), mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(ciphertext.startswith("vault:v1:"))
        key = self.transit.read_key(name, mount_point=mount)["data"]
        self.assertEqual((key["type"], key["latest_version"]), ("aes256-gcm96", 1))
        self.expect_counts(mount, granted=1, resumed=1)
        self.assertEqual(self.transit.decrypt_data(name, ciphertext, mount_point=mount)["data"]["plaintext"], b64(b"first use"))

    def test_encrypt_after_upsert_is_handed_off_again(self):
        mount = self.transit_mount()
        name = unique("upsert")
        self.transit.encrypt_data(name, b64(b"first use"), mount_point=mount)
        self.assertEqual(self.transit.read_key(name, mount_point=mount)["data"]["latest_version"], 1)
        self.expect_counts(mount, granted=1, resumed=1)
        second = self.transit.encrypt_data(name, b64(b"second use"), mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(second.startswith("vault:v1:"))
        self.expect_counts(mount, granted=2, settled=1, resumed=1)

    def test_bad_input_and_policies_through_the_worker(self):
        mount = self.transit_mount()
        name = unique("key")
        self.transit.create_key(name, mount_point=mount)
        good = self.transit.encrypt_data(name, b64(b"x" * 40), mount_point=mount)["data"]["ciphertext"]
        payload = bytearray(base64.b64decode(good.split(":")[2]))
        payload[-1] ^= 1
        tampered = "vault:v1:" + b64(bytes(payload))
        for ciphertext, message in (
            ("garbage", "invalid ciphertext: no prefix"),
            ("vault:v1:%%%", "invalid ciphertext: could not decode base64"),
            ("vault:v9:" + good.split(":")[2], "invalid ciphertext: version is too new"),
            (tampered, "cipher: message authentication failed"),
        ):
            with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
                self.transit.decrypt_data(name, ciphertext, mount_point=mount)
            self.assertIn(message, str(refused.exception), ciphertext)

        # hvac sends plaintext=None as JSON null: the zero value, an empty plaintext, as in Vault.
        empty = self.transit.encrypt_data(name, None, mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(empty.startswith("vault:v1:"))
        self.assertEqual(self.transit.decrypt_data(name, empty, mount_point=mount)["data"]["plaintext"], "")
        # The encrypt and the first decrypt were granted; the other decrypts and the second encrypt repeat them.
        self.expect_counts(mount, granted=2, settled=2, answered=5)

        policy = unique("encrypt-only")
        self.vault.sys.create_or_update_policy(policy, 'path "%s/encrypt/%s" { capabilities = ["update"] }' % (mount, name))
        limited = client(self.vault.auth.token.create(policies=[policy], ttl="15m")["auth"]["client_token"])
        mine = limited.secrets.transit.encrypt_data(name, b64(b"allowed"), mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(mine.startswith("vault:v1:"))
        with self.assertRaises(hvac.exceptions.Forbidden) as denied:
            limited.secrets.transit.decrypt_data(name, mine, mount_point=mount)
        self.assertIn("permission denied", str(denied.exception))
        self.assertEqual(self.transit.decrypt_data(name, mine, mount_point=mount)["data"]["plaintext"], b64(b"allowed"))
        # The refused decrypt was never handed off (nor computed first: that caller had no grant for it).
        self.expect_counts(mount, granted=3, settled=3, answered=6)

    # --- PKI ---

    def test_no_store_issue_is_settled_by_the_worker(self):
        mount, root_pem = self.pki_mount()
        self.role(mount, "ephemeral", no_store=True, max_ttl="72h")
        issued = self.pki.generate_certificate("ephemeral", "eph.example.com", mount_point=mount)["data"]
        self.assertIn("OK", verify_with_openssl(issued["certificate"], root_pem))
        self.assertIn("CN = eph.example.com", openssl("x509", "-noout", "-subject", stdin=issued["certificate"]))
        self.assertIn("PRIVATE KEY", issued["private_key"])
        self.assertNotIn(issued["serial_number"], self.pki.list_certificates(mount_point=mount)["data"]["keys"])
        self.expect_counts(mount, granted=1, settled=1)

    def test_stored_issue_is_resumed_once_then_stays_in_the_object(self):
        mount, root_pem = self.pki_mount()
        self.role(mount, "stored", max_ttl="72h")
        # Back to back: the Worker sends a path that needed the object straight there for a while.
        first = self.pki.generate_certificate("stored", "one.example.com", mount_point=mount)["data"]
        second = self.pki.generate_certificate("stored", "two.example.com", mount_point=mount)["data"]
        # Only the first was handed off (and finished in the object, which stores it).
        self.expect_counts(mount, granted=1, resumed=1)
        listed = self.pki.list_certificates(mount_point=mount)["data"]["keys"]
        for issued in (first, second):
            self.assertIn("OK", verify_with_openssl(issued["certificate"], root_pem))
            self.assertIn(issued["serial_number"], listed)
            stored = self.pki.read_certificate(issued["serial_number"], mount_point=mount)["data"]["certificate"]
            self.assertEqual(stored.strip(), issued["certificate"].strip())

    def test_role_change_is_seen_by_the_next_issue(self):
        mount, root_pem = self.pki_mount()
        self.role(mount, "ephemeral", no_store=True, max_ttl="72h")
        started = datetime.datetime.now(datetime.timezone.utc)
        long = self.pki.generate_certificate("ephemeral", "a.example.com", extra_params={"ttl": "48h"}, mount_point=mount)
        self.assertGreater(not_after(long["data"]["certificate"]), started + datetime.timedelta(hours=47))
        self.assertFalse(long.get("warnings"))

        self.role(mount, "ephemeral", no_store=True, max_ttl="1h")
        started = datetime.datetime.now(datetime.timezone.utc)
        capped = self.pki.generate_certificate("ephemeral", "a.example.com", extra_params={"ttl": "48h"}, mount_point=mount)
        self.assertIn("OK", verify_with_openssl(capped["data"]["certificate"], root_pem))
        self.assertLessEqual(not_after(capped["data"]["certificate"]), started + datetime.timedelta(hours=1, seconds=5))
        self.assertGreater(not_after(capped["data"]["certificate"]), started + datetime.timedelta(minutes=59))
        self.assertIn('is longer than permitted maxTTL "1h0m0s"', " ".join(capped["warnings"] or []))
        self.assertEqual(self.counts(mount)["stale"], 0)
