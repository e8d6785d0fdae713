"""hvac's transit methods (client.secrets.transit.*), every one, with results checked."""

import base64
import hashlib
import hmac as hmac_lib
import os

import hvac

from common import ClientTest, unique


def b64(data):
    return base64.b64encode(data).decode()


class Transit(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mount = unique("transit")
        cls.vault.sys.enable_secrets_engine("transit", path=cls.mount)
        cls.transit = cls.vault.secrets.transit

    def key(self, **kwargs):
        name = unique("key")
        self.transit.create_key(name, mount_point=self.mount, **kwargs)
        return name

    def test_create_read_list_delete(self):
        name = self.key(key_type="aes256-gcm96", exportable=True, allow_plaintext_backup=True)
        key = self.transit.read_key(name, mount_point=self.mount)["data"]
        self.assertEqual(key["type"], "aes256-gcm96")
        self.assertTrue(key["exportable"])
        self.assertEqual(key["latest_version"], 1)
        self.assertIn(name, self.transit.list_keys(mount_point=self.mount)["data"]["keys"])
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.transit.delete_key(name, mount_point=self.mount)
        self.transit.update_key_configuration(name, deletion_allowed=True, mount_point=self.mount)
        self.transit.delete_key(name, mount_point=self.mount)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.transit.read_key(name, mount_point=self.mount)

    def test_every_key_type(self):
        # hvac 0.11.2 refuses aes128-gcm96 and hmac itself, before sending anything.
        for key_type in ("aes256-gcm96", "chacha20-poly1305", "ed25519", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "rsa-2048"):
            name = self.key(key_type=key_type)
            self.assertEqual(self.transit.read_key(name, mount_point=self.mount)["data"]["type"], key_type)

    def test_encrypt_decrypt_rewrap(self):
        name = self.key()
        plaintext = b64(b"attack at dawn")
        ciphertext = self.transit.encrypt_data(name, plaintext, mount_point=self.mount)["data"]["ciphertext"]
        self.assertTrue(ciphertext.startswith("vault:v1:"))
        self.assertEqual(self.transit.decrypt_data(name, ciphertext, mount_point=self.mount)["data"]["plaintext"], plaintext)
        self.transit.rotate_key(name, mount_point=self.mount)
        rewrapped = self.transit.rewrap_data(name, ciphertext, mount_point=self.mount)["data"]["ciphertext"]
        self.assertTrue(rewrapped.startswith("vault:v2:"))
        self.assertEqual(self.transit.decrypt_data(name, rewrapped, mount_point=self.mount)["data"]["plaintext"], plaintext)
        pinned = self.transit.encrypt_data(name, plaintext, key_version=1, mount_point=self.mount)["data"]
        self.assertEqual(pinned["key_version"], 1)

    def test_encrypt_creates_the_key_on_first_use(self):
        name = unique("upsert")
        self.transit.encrypt_data(name, b64(b"x"), type="chacha20-poly1305", mount_point=self.mount)
        self.assertEqual(self.transit.read_key(name, mount_point=self.mount)["data"]["type"], "chacha20-poly1305")

    def test_a_type_named_like_an_object_property_is_unknown(self):
        # The server once looked such names up with JavaScript's `in`: an upsert asked for an RSA pair.
        for key_type in ("constructor", "__proto__", "toString"):
            name = unique("proto")
            with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
                self.transit.encrypt_data(name, b64(b"x"), type=key_type, mount_point=self.mount)
            self.assertEqual(refused.exception.errors, ["unknown key type " + key_type])
            with self.assertRaises(hvac.exceptions.InvalidPath):
                self.transit.read_key(name, mount_point=self.mount)

    def test_derived_and_convergent(self):
        name = self.key(derived=True, convergent_encryption=True)
        context = b64(b"tenant-1")
        one = self.transit.encrypt_data(name, b64(b"same"), context=context, mount_point=self.mount)["data"]["ciphertext"]
        two = self.transit.encrypt_data(name, b64(b"same"), context=context, mount_point=self.mount)["data"]["ciphertext"]
        self.assertEqual(one, two)
        self.assertEqual(self.transit.decrypt_data(name, one, context=context, mount_point=self.mount)["data"]["plaintext"], b64(b"same"))
        rewrapped = self.transit.rewrap_data(name, one, context=context, mount_point=self.mount)["data"]["ciphertext"]
        self.assertEqual(rewrapped, one)

    def test_batch(self):
        name = self.key()
        items = [{"plaintext": b64(b"one")}, {"plaintext": b64(b"two")}]
        encrypted = self.transit.encrypt_data(name, plaintext=None, batch_input=items, mount_point=self.mount)["data"]["batch_results"]
        self.assertEqual(len(encrypted), 2)
        decrypted = self.transit.decrypt_data(
            name, ciphertext=None, batch_input=[{"ciphertext": r["ciphertext"]} for r in encrypted], mount_point=self.mount
        )["data"]["batch_results"]
        self.assertEqual([r["plaintext"] for r in decrypted], [b64(b"one"), b64(b"two")])
        rewrapped = self.transit.rewrap_data(
            name, ciphertext=None, batch_input=[{"ciphertext": r["ciphertext"]} for r in encrypted], mount_point=self.mount
        )["data"]["batch_results"]
        self.assertTrue(all(r["ciphertext"].startswith("vault:v1:") for r in rewrapped))

    def test_key_configuration_and_trim(self):
        name = self.key()
        for _ in range(3):
            self.transit.rotate_key(name, mount_point=self.mount)
        self.transit.update_key_configuration(name, min_decryption_version=3, min_encryption_version=4, mount_point=self.mount)
        key = self.transit.read_key(name, mount_point=self.mount)["data"]
        self.assertEqual((key["min_decryption_version"], key["min_encryption_version"]), (3, 4))
        self.transit.trim_key(name, 3, mount_point=self.mount)
        key = self.transit.read_key(name, mount_point=self.mount)["data"]
        self.assertEqual(key["min_available_version"], 3)
        self.assertEqual(sorted(key["keys"]), ["3", "4"])

    def test_export(self):
        name = self.key(exportable=True)
        exported = self.transit.export_key(name, "encryption-key", mount_point=self.mount)["data"]
        self.assertEqual(len(base64.b64decode(exported["keys"]["1"])), 32)
        self.transit.rotate_key(name, mount_point=self.mount)
        latest = self.transit.export_key(name, "encryption-key", version="latest", mount_point=self.mount)["data"]
        self.assertEqual(list(latest["keys"]), ["2"])
        one = self.transit.export_key(name, "hmac-key", version="1", mount_point=self.mount)["data"]
        self.assertEqual(list(one["keys"]), ["1"])
        # hvac 0.11.2 knows no public-key export type; signing keys export as signing-key.
        signer = self.key(key_type="ecdsa-p256", exportable=True)
        private = self.transit.export_key(signer, "signing-key", mount_point=self.mount)["data"]
        self.assertIn("BEGIN EC PRIVATE KEY", private["keys"]["1"])

    def test_data_keys(self):
        name = self.key()
        plain = self.transit.generate_data_key(name, "plaintext", bits=512, mount_point=self.mount)["data"]
        self.assertEqual(len(base64.b64decode(plain["plaintext"])), 64)
        unwrapped = self.transit.decrypt_data(name, plain["ciphertext"], mount_point=self.mount)["data"]["plaintext"]
        self.assertEqual(unwrapped, plain["plaintext"])
        wrapped = self.transit.generate_data_key(name, "wrapped", mount_point=self.mount)["data"]
        self.assertNotIn("plaintext", wrapped)
        self.assertEqual(len(base64.b64decode(self.transit.decrypt_data(name, wrapped["ciphertext"], mount_point=self.mount)["data"]["plaintext"])), 32)

    def test_random_bytes(self):
        default = self.transit.generate_random_bytes(mount_point=self.mount)["data"]["random_bytes"]
        self.assertEqual(len(base64.b64decode(default)), 32)
        hexed = self.transit.generate_random_bytes(n_bytes=16, output_format="hex", mount_point=self.mount)["data"]["random_bytes"]
        self.assertRegex(hexed, r"^[0-9a-f]{32}$")

    def test_hash(self):
        data = b"hash me"
        default = self.transit.hash_data(b64(data), mount_point=self.mount)["data"]["sum"]
        self.assertEqual(default, hashlib.sha256(data).hexdigest())
        # hvac 0.11.2 offers the sha2 family only.
        for algorithm, expected in (("sha2-512", hashlib.sha512(data)), ("sha2-224", hashlib.sha224(data))):
            summed = self.transit.hash_data(b64(data), algorithm=algorithm, output_format="base64", mount_point=self.mount)["data"]["sum"]
            self.assertEqual(summed, b64(expected.digest()))

    def test_hmac_matches_the_exported_key(self):
        name = self.key(exportable=True)
        data = b"authenticate me"
        mac = self.transit.generate_hmac(name, b64(data), algorithm="sha2-384", mount_point=self.mount)["data"]["hmac"]
        key = base64.b64decode(self.transit.export_key(name, "hmac-key", mount_point=self.mount)["data"]["keys"]["1"])
        self.assertEqual(mac, "vault:v1:" + b64(hmac_lib.new(key, data, hashlib.sha384).digest()))
        valid = self.transit.verify_signed_data(name, b64(data), hmac=mac, hash_algorithm="sha2-384", mount_point=self.mount)["data"]["valid"]
        self.assertTrue(valid)
        pinned = self.transit.generate_hmac(name, b64(data), key_version=1, mount_point=self.mount)["data"]["hmac"]
        self.assertTrue(pinned.startswith("vault:v1:"))

    def test_sign_and_verify(self):
        data = b64(b"sign me")
        for key_type, options in (
            ("ed25519", {}),
            ("ecdsa-p256", {"hash_algorithm": "sha2-256", "marshaling_algorithm": "jws"}),
            ("rsa-2048", {"hash_algorithm": "sha2-512", "signature_algorithm": "pkcs1v15"}),
            ("rsa-2048", {"signature_algorithm": "pss"}),
        ):
            name = self.key(key_type=key_type)
            signature = self.transit.sign_data(name, data, mount_point=self.mount, **options)["data"]["signature"]
            self.assertTrue(signature.startswith("vault:v1:"))
            verified = self.transit.verify_signed_data(name, data, signature=signature, mount_point=self.mount, **options)["data"]
            self.assertTrue(verified["valid"], key_type)
            other = self.transit.verify_signed_data(name, b64(b"other"), signature=signature, mount_point=self.mount, **options)["data"]
            self.assertFalse(other["valid"])

    def test_ecdsa_signatures_verify_in_cryptography(self):
        """ASN.1 (DER) ECDSA signatures on every curve, checked by an implementation other than ours."""
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        for key_type, hash_algorithm, hash_cls in (
            ("ecdsa-p256", "sha2-256", hashes.SHA256),
            ("ecdsa-p384", "sha2-384", hashes.SHA384),
            ("ecdsa-p521", "sha2-512", hashes.SHA512),
        ):
            name = self.key(key_type=key_type)
            pem = self.transit.read_key(name, mount_point=self.mount)["data"]["keys"]["1"]["public_key"]
            public = serialization.load_pem_public_key(pem.encode())
            # Enough signatures that some r or s has a high first bit (its DER INTEGER then leads with 0x00).
            for i in range(12):
                message = f"message {i} for {key_type}".encode()
                signed = self.transit.sign_data(name, b64(message), hash_algorithm=hash_algorithm, mount_point=self.mount)["data"]["signature"]
                der = base64.b64decode(signed.split(":", 2)[2])
                public.verify(der, message, ec.ECDSA(hash_cls()))  # raises when invalid
                self.assertTrue(self.transit.verify_signed_data(name, b64(message), signature=signed, hash_algorithm=hash_algorithm, mount_point=self.mount)["data"]["valid"])

    def test_sign_prehashed_and_derived(self):
        name = self.key(key_type="ecdsa-p256")
        digest = b64(hashlib.sha256(b"message").digest())
        signature = self.transit.sign_data(name, digest, prehashed=True, mount_point=self.mount)["data"]["signature"]
        self.assertTrue(self.transit.verify_signed_data(name, digest, signature=signature, prehashed=True, mount_point=self.mount)["data"]["valid"])
        derived = self.key(key_type="ed25519", derived=True)
        context = b64(b"ctx")
        signed = self.transit.sign_data(derived, b64(b"m"), context=context, mount_point=self.mount)["data"]
        self.assertTrue(
            self.transit.verify_signed_data(derived, b64(b"m"), signature=signed["signature"], context=context, mount_point=self.mount)["data"]["valid"]
        )

    def test_backup_and_restore(self):
        name = self.key(exportable=True, allow_plaintext_backup=True)
        ciphertext = self.transit.encrypt_data(name, b64(b"kept"), mount_point=self.mount)["data"]["ciphertext"]
        backup = self.transit.backup_key(name, mount_point=self.mount)["data"]["backup"]
        restored = unique("restored")
        self.transit.restore_key(backup, name=restored, mount_point=self.mount)
        self.assertEqual(self.transit.decrypt_data(restored, ciphertext, mount_point=self.mount)["data"]["plaintext"], b64(b"kept"))
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.transit.restore_key(backup, name=restored, mount_point=self.mount)
        self.transit.restore_key(backup, name=restored, force=True, mount_point=self.mount)
        # Without a name the key comes back under its own (here: after deleting it).
        self.transit.update_key_configuration(name, deletion_allowed=True, mount_point=self.mount)
        self.transit.delete_key(name, mount_point=self.mount)
        self.transit.restore_key(backup, mount_point=self.mount)
        self.assertEqual(self.transit.read_key(name, mount_point=self.mount)["data"]["name"], name)

    def test_managed_key(self):
        """A managed_key key on the launcher's SoftHSM2 token, through a pkcs11 managed key."""
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        # hvac 0.11.2 has no managed-keys API, and its create_key knows neither the managed_key
        # type nor managed_key_name: those two requests go through the client's generic write.
        hsm = unique("hsm")
        self.vault.write(
            "sys/managed-keys/pkcs11/" + hsm,
            library=os.environ["HSM_LIBRARY"],
            token_label=os.environ["HSM_TOKEN_LABEL"],
            pin=os.environ["HSM_PIN"],
            key_label=hsm,
            mechanism="0x0001",
            key_bits=2048,
            usages="sign,verify,encrypt,decrypt",
            allow_generate_key=True,
            allow_replace_key=True,
        )
        mount = unique("transit-mk")
        self.vault.sys.enable_secrets_engine("transit", path=mount)
        self.vault.sys.tune_mount_configuration(mount, allowed_managed_keys=[hsm])
        name = unique("managed")
        self.vault.write("%s/keys/%s" % (mount, name), type="managed_key", managed_key_name=hsm)

        key = self.transit.read_key(name, mount_point=mount)["data"]
        self.assertEqual((key["type"], key["managed_key_name"], key["exportable"]), ("managed_key", hsm, False))
        self.assertTrue(key["supports_signing"] and key["supports_encryption"])
        public = serialization.load_pem_public_key(key["keys"]["1"]["public_key"].encode())
        self.assertEqual(public.key_size, 2048)

        data = b"sign me in the HSM"
        signature = self.transit.sign_data(name, b64(data), hash_algorithm="sha2-256", signature_algorithm="pkcs1v15", mount_point=mount)["data"]["signature"]
        self.assertTrue(signature.startswith("vault:v1:"))
        # Checked with the public key of the read, outside the server (raises when invalid).
        public.verify(base64.b64decode(signature.split(":")[2]), data, padding.PKCS1v15(), hashes.SHA256())
        verify = lambda d, sig, **kw: self.transit.verify_signed_data(name, b64(d), signature=sig, mount_point=mount, **kw)["data"]["valid"]
        self.assertTrue(verify(data, signature, signature_algorithm="pkcs1v15"))
        self.assertFalse(verify(b"other", signature, signature_algorithm="pkcs1v15"))
        pss = self.transit.sign_data(name, b64(data), mount_point=mount)["data"]["signature"]
        # The default salt of a managed key is the hash length (what cloud KMS sign with).
        public.verify(base64.b64decode(pss.split(":")[2]), data, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())

        plaintext = b64(b"kept in the HSM")
        ciphertext = self.transit.encrypt_data(name, plaintext, mount_point=mount)["data"]["ciphertext"]
        self.assertTrue(ciphertext.startswith("vault:v1:"))
        self.assertEqual(self.transit.decrypt_data(name, ciphertext, mount_point=mount)["data"]["plaintext"], plaintext)
        # RSA-OAEP with SHA-1 (what SoftHSM2 does): a ciphertext made here decrypts there.
        local = public.encrypt(b"from outside", padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None))
        self.assertEqual(self.transit.decrypt_data(name, "vault:v1:" + b64(local), mount_point=mount)["data"]["plaintext"], b64(b"from outside"))

        # hvac's rotate_key: a fresh key in the HSM (allow_replace_key); version 1 signatures still verify.
        self.transit.rotate_key(name, mount_point=mount)
        rotated = self.transit.read_key(name, mount_point=mount)["data"]
        self.assertEqual(rotated["latest_version"], 2)
        self.assertNotEqual(rotated["keys"]["2"]["public_key"], rotated["keys"]["1"]["public_key"])
        self.assertTrue(self.transit.sign_data(name, b64(data), mount_point=mount)["data"]["signature"].startswith("vault:v2:"))
        self.assertTrue(verify(data, signature, signature_algorithm="pkcs1v15"))

        # What such a key cannot do: hvac raises InvalidRequest for the 400s.
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.transit.export_key(name, "signing-key", mount_point=mount)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.transit.generate_hmac(name, b64(data), mount_point=mount)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.vault.write("%s/keys/%s" % (mount, unique("none")), type="managed_key")
        self.assertIn("missing argument managed_key_name or managed_key_id", str(refused.exception))
