"""Cloud managed keys through hvac: AWS KMS (awskms), Azure Key Vault (azurekeyvault) and Google
Cloud KMS (gcpckms), on the suite's emulators (global-setup.ts), each class under an account, a
tenant and vault, or a project of its own (registered here through the emulators' control APIs).

hvac 0.11.2 has no managed-keys API, and its transit create_key knows neither the managed_key type
nor managed_key_name: those go through the client's generic write/read/list/delete. Everything else
uses hvac's own methods: sys.enable_secrets_engine(config=...), sys.tune_mount_configuration,
sys.disable_secrets_engine, secrets.transit.read_key/sign_data/verify_signed_data and
secrets.pki.generate_root("kms", ...). Signatures and certificates are checked with the
cryptography module against the public key of the transit read, which is the cloud's.

hvac's sign_data has no salt_length: PSS signatures are asked with transit's default salt, which
for managed keys is the hash's length, the one salt the three clouds sign with.
"""

import base64
import json
import os
import urllib.request
import uuid

import hvac
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

from common import ClientTest, unique


def b64(data):
    return base64.b64encode(data).decode()


def signature_bytes(versioned):
    """The bytes of "vault:v<N>:<base64>" (jws signatures use the URL alphabet, unpadded)."""
    text = versioned.split(":")[2]
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def spki(key):
    if isinstance(key, str):
        key = serialization.load_pem_public_key(key.encode())
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def control(method, url, body=None):
    """A call to an emulator's control API (unauthenticated JSON)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        text = reply.read()
    return json.loads(text) if text else None


class CloudManagedKey:
    """The cases every cloud runs (a mixin: a TestCase only with a cloud below)."""

    TYPE = None
    # Fields test/sign is given: a hash and padding the key signs with.
    TEST_SIGN = {}

    # ---- what each cloud defines

    @classmethod
    def register(cls):
        """This class's account/tenant/project at the emulator."""
        raise NotImplementedError

    @classmethod
    def fields(cls, name):
        """The key's fields with the emulator's credentials; generated when missing."""
        raise NotImplementedError

    def view(self, name):
        """What the read shows of the backend fields (secrets "redacted")."""
        raise NotImplementedError

    def secrets(self):
        raise NotImplementedError

    def cloud_public_key(self, name):
        """The key's public key (PEM) as the cloud holds it."""
        raise NotImplementedError

    def signatures(self):
        """[(sign_data keyword arguments, verify(public_key, signature_bytes, data))]."""
        raise NotImplementedError

    # PKI: root/generate/kms extra parameters and how the certificate's self-signature verifies.
    PKI_PARAMS = {}

    def verify_certificate(self, cert):
        raise NotImplementedError

    def wrong(self):
        """(fields replacing the credentials by wrong ones, the secrets involved, the cloud's error code)."""
        raise NotImplementedError

    # ---- shared setup

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.register()
        cls.transit = cls.vault.secrets.transit
        cls.pki = cls.vault.secrets.pki
        cls.name = unique("hvac-" + cls.TYPE)
        cls.path = "sys/managed-keys/%s/%s" % (cls.TYPE, cls.name)
        cls.vault.write(cls.path, **cls.fields(cls.name))
        # Generated at the cloud (allow_generate_key), signed and verified there.
        cls.vault.write(cls.path + "/test/sign", **cls.TEST_SIGN)
        cls.uuid = cls.vault.read(cls.path)["data"]["UUID"]
        # A transit mount allowing the key from the start, a PKI mount tuned to allow it.
        cls.transit_mount = unique("hvac-transit-cloud")
        cls.vault.sys.enable_secrets_engine("transit", path=cls.transit_mount, config={"allowed_managed_keys": [cls.name]})
        cls.pki_mount = unique("hvac-pki-cloud")
        cls.vault.sys.enable_secrets_engine("pki", path=cls.pki_mount, config={"max_lease_ttl": "87600h"})
        cls.vault.sys.tune_mount_configuration(cls.pki_mount, allowed_managed_keys=[cls.name])

    @classmethod
    def tearDownClass(cls):
        cls.vault.sys.disable_secrets_engine(cls.transit_mount)
        cls.vault.sys.disable_secrets_engine(cls.pki_mount)
        cls.vault.delete(cls.path)
        super().tearDownClass()

    # ---- the cases

    def test_read_list_and_cloud_key(self):
        read = self.vault.read(self.path)
        data = read["data"]
        self.assertEqual((data["name"], data["type"], data["allow_generate_key"], data["usages"]), (self.name, self.TYPE, True, ["sign", "verify"]))
        for field, value in self.view(self.name).items():
            self.assertEqual(data[field], value, field)
        for secret in self.secrets():
            self.assertNotIn(secret, json.dumps(read))
        self.assertIn(self.name, self.vault.list("sys/managed-keys/" + self.TYPE)["data"]["keys"])
        # The cloud holds the key test/sign generated.
        self.assertTrue(self.cloud_public_key(self.name).startswith("-----BEGIN PUBLIC KEY-----"))

    def test_transit_sign_and_verify(self):
        key = unique("signer")
        self.vault.write("%s/keys/%s" % (self.transit_mount, key), type="managed_key", managed_key_name=self.name)
        read = self.transit.read_key(key, mount_point=self.transit_mount)["data"]
        self.assertEqual((read["type"], read["managed_key_name"], read["managed_key_id"], read["exportable"]), ("managed_key", self.name, self.uuid, False))
        self.assertTrue(read["supports_signing"])
        pem = read["keys"]["1"]["public_key"]
        self.assertEqual(spki(pem), spki(self.cloud_public_key(self.name)))
        public = serialization.load_pem_public_key(pem.encode())

        data = ("signed at %s through hvac" % self.TYPE).encode()
        for options, check in self.signatures():
            signature = self.transit.sign_data(key, b64(data), mount_point=self.transit_mount, **options)["data"]["signature"]
            self.assertTrue(signature.startswith("vault:v1:"), signature)
            # Checked here (raises InvalidSignature when it does not verify).
            check(public, signature_bytes(signature), data)
            verify = lambda d: self.transit.verify_signed_data(key, b64(d), signature=signature, mount_point=self.transit_mount, **options)["data"]["valid"]
            self.assertTrue(verify(data))
            self.assertFalse(verify(b"something else"))

    def test_pki_root_generate_kms(self):
        common_name = "hvac %s Root" % self.TYPE
        root = self.pki.generate_root("kms", common_name, extra_params=dict(managed_key_name=self.name, ttl="8760h", **self.PKI_PARAMS), mount_point=self.pki_mount)["data"]
        self.assertNotIn("private_key", root)
        cert = x509.load_pem_x509_certificate(root["certificate"].encode())
        self.assertEqual(cert.subject.rfc4514_string(), "CN=" + common_name)
        self.assertEqual(cert.issuer, cert.subject)
        self.assertTrue(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        self.assertEqual(spki(cert.public_key()), spki(self.cloud_public_key(self.name)))
        self.verify_certificate(cert)
        key = self.vault.read("%s/key/%s" % (self.pki_mount, root["key_id"]))["data"]
        self.assertEqual((key["managed_key_name"], key["managed_key_id"]), (self.name, self.uuid))

    def test_wrong_credentials(self):
        name = unique("hvac-%s-wrong" % self.TYPE)
        fields, secrets, code = self.wrong()
        self.vault.write("sys/managed-keys/%s/%s" % (self.TYPE, name), **dict(self.fields(name), **fields))
        try:
            with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
                self.vault.write("sys/managed-keys/%s/%s/test/sign" % (self.TYPE, name), **self.TEST_SIGN)
            self.assertIn(code, str(refused.exception))
            self.assertEqual(len(refused.exception.errors), 1)
            for secret in secrets:
                self.assertNotIn(secret, str(refused.exception))
                self.assertNotIn(secret, json.dumps(self.vault.read("sys/managed-keys/%s/%s" % (self.TYPE, name))))
        finally:
            self.vault.delete("sys/managed-keys/%s/%s" % (self.TYPE, name))

    def test_delete(self):
        name = unique("hvac-%s-gone" % self.TYPE)
        path = "sys/managed-keys/%s/%s" % (self.TYPE, name)
        self.vault.write(path, **self.fields(name))
        mount = unique("hvac-transit-gone")
        self.vault.sys.enable_secrets_engine("transit", path=mount, config={"allowed_managed_keys": [name]})
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.vault.delete(path)
        self.assertIn('cannot delete managed key "%s": it is listed in the allowed_managed_keys of mount %s/' % (name, mount), str(refused.exception))
        self.vault.sys.disable_secrets_engine(mount)
        self.vault.delete(path)
        self.assertIsNone(self.vault.read(path))
        listed = self.vault.list("sys/managed-keys/" + self.TYPE)
        self.assertNotIn(name, listed["data"]["keys"] if listed else [])


class AwsKms(CloudManagedKey, ClientTest):
    """An RSA 2048 key generated in this class's tenant of the AWS KMS emulator."""

    TYPE = "awskms"
    REGION = "ap-southeast-2"

    @classmethod
    def register(cls):
        run = uuid.uuid4().hex[:10]
        cls.endpoint = "%s/t/hvac-cloud-%s" % (os.environ["AWS_KMS_EMULATOR"], run)
        cls.access_key = "AKIAHVACCLOUDKMS0001"
        cls.secret_key = "hvac/%s/Kms+Secret00000000000000001" % run
        cls.wrong_secret = "hvac/%s/Wrong+Secret000000000000002" % run
        control("POST", cls.endpoint + "/_emulator/reset", {"credentials": [{"accessKeyId": cls.access_key, "secretAccessKey": cls.secret_key, "userName": "hvac"}]})

    @classmethod
    def fields(cls, name):
        return dict(
            access_key=cls.access_key,
            secret_key=cls.secret_key,
            region=cls.REGION,
            endpoint=cls.endpoint,
            kms_key="alias/" + name,
            key_type="RSA",
            key_bits="2048",
            allow_generate_key=True,
        )

    def view(self, name):
        return dict(access_key="redacted", secret_key="redacted", region=self.REGION, endpoint=self.endpoint, kms_key="alias/" + name, key_type="RSA", key_bits="2048")

    def secrets(self):
        return [self.access_key, self.secret_key]

    def cloud_public_key(self, name):
        keys = [k for k in control("GET", self.endpoint + "/_emulator/state")["keys"] if "alias/" + name in k["Aliases"]]
        self.assertEqual([(k["KeySpec"], k["KeyUsage"], k["KeyState"], k["Region"]) for k in keys], [("RSA_2048", "SIGN_VERIFY", "Enabled", self.REGION)])
        return serialization.load_der_public_key(base64.b64decode(keys[0]["PublicKey"])).public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()

    def signatures(self):
        return [
            (dict(signature_algorithm="pkcs1v15", hash_algorithm="sha2-384"), lambda key, sig, data: key.verify(sig, data, padding.PKCS1v15(), hashes.SHA384())),
            # Transit's default for RSA (PSS) with a managed key's default salt: the hash's length, as KMS signs.
            (dict(), lambda key, sig, data: key.verify(sig, data, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())),
        ]

    def verify_certificate(self, cert):
        self.assertEqual(cert.signature_hash_algorithm.name, "sha256")
        cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), hashes.SHA256())

    def wrong(self):
        return {"secret_key": self.wrong_secret}, [self.wrong_secret, self.secret_key], "InvalidSignatureException"


class AzureKeyVault(CloudManagedKey, ClientTest):
    """An RSA-HSM 3072 key generated in this class's vault, under a tenant and app of its own."""

    TYPE = "azurekeyvault"
    TEST_SIGN = {"hash_algorithm": "sha2-384", "use_pss": True}

    @classmethod
    def register(cls):
        run = uuid.uuid4().hex[:10]
        cls.tenant = str(uuid.uuid4())
        cls.client_id = str(uuid.uuid4())
        cls.client_secret = "hvac-secret~%s-7e21" % run
        cls.wrong_secret = "hvac-wrong~%s-19cd" % run
        cls.vault_name = "hvackv-" + run
        cls.control = "%s/_emulator/tenants/%s" % (os.environ["AZURE_EMULATOR"], cls.tenant)
        control("POST", cls.control, {"clients": [{"client_id": cls.client_id, "client_secret": cls.client_secret}], "vaults": [{"name": cls.vault_name}]})

    @classmethod
    def fields(cls, name):
        return dict(
            tenant_id=cls.tenant,
            client_id=cls.client_id,
            client_secret=cls.client_secret,
            vault_name=cls.vault_name,
            key_name=name,
            key_type="RSA-HSM",
            key_bits="3072",
            allow_generate_key=True,
        )

    def view(self, name):
        return dict(tenant_id=self.tenant, client_id=self.client_id, client_secret="redacted", vault_name=self.vault_name, key_name=name, key_type="RSA-HSM", key_bits="3072", environment="AZUREPUBLICCLOUD")

    def secrets(self):
        return [self.client_secret]

    def cloud_public_key(self, name):
        vault = [v for v in control("GET", self.control)["vaults"] if v["name"] == self.vault_name][0]
        versions = vault["keys"][name.lower()]
        self.assertEqual([(v["kty"], v["key_size"], v["enabled"]) for v in versions], [("RSA-HSM", 3072, True)])
        return versions[0]["public_key"]

    def signatures(self):
        return [
            (dict(signature_algorithm="pkcs1v15"), lambda key, sig, data: key.verify(sig, data, padding.PKCS1v15(), hashes.SHA256())),
            (dict(signature_algorithm="pkcs1v15", hash_algorithm="sha2-512"), lambda key, sig, data: key.verify(sig, data, padding.PKCS1v15(), hashes.SHA512())),
            (dict(signature_algorithm="pss", hash_algorithm="sha2-384"), lambda key, sig, data: key.verify(sig, data, padding.PSS(padding.MGF1(hashes.SHA384()), 48), hashes.SHA384())),
        ]

    def verify_certificate(self, cert):
        self.assertEqual(cert.signature_hash_algorithm.name, "sha256")
        cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), hashes.SHA256())

    def wrong(self):
        return {"client_secret": self.wrong_secret}, [self.wrong_secret, self.client_secret], "AADSTS7000215"


class GcpCkms(CloudManagedKey, ClientTest):
    """An EC P-384 crypto key generated in this class's project's key ring of the Cloud KMS emulator."""

    TYPE = "gcpckms"
    ALGORITHM = "EC_SIGN_P384_SHA384"
    TEST_SIGN = {"hash_algorithm": "sha2-384"}
    PKI_PARAMS = {"signature_bits": 384}

    @classmethod
    def register(cls):
        base = os.environ["GCP_KMS_EMULATOR"]
        cls.project = "hvac-cloud-" + uuid.uuid4().hex[:10]
        control("POST", "%s/_emulator/projects/%s/reset" % (base, cls.project), {})
        cls.account = control("POST", base + "/_emulator/service-accounts", {"project": cls.project, "name": "hvac"})
        cls.other_account = control("POST", base + "/_emulator/service-accounts", {"project": cls.project, "name": "someone-else"})
        control("POST", "%s/_emulator/projects/%s/key-rings" % (base, cls.project), {"location": "global", "keyRingId": "ring"})
        cls.state_url = "%s/_emulator/projects/%s/state" % (base, cls.project)

    @classmethod
    def fields(cls, name):
        return dict(
            credentials=json.dumps(cls.account),
            project=cls.project,
            region="global",
            key_ring="ring",
            crypto_key=name,
            algorithm=cls.ALGORITHM,
            allow_generate_key=True,
        )

    def view(self, name):
        return dict(credentials="redacted", project=self.project, region="global", key_ring="ring", crypto_key=name, crypto_key_version="1", algorithm=self.ALGORITHM)

    def secrets(self):
        return [self.account["private_key"].split("\n")[1], self.account["private_key_id"], "PRIVATE KEY"]

    def cloud_public_key(self, name):
        ring = [r for r in control("GET", self.state_url)["keyRings"] if r["name"] == "projects/%s/locations/global/keyRings/ring" % self.project][0]
        keys = [k for k in ring["cryptoKeys"] if k["name"].endswith("/cryptoKeys/" + name)]
        self.assertEqual([(k["purpose"], k["algorithm"], [v["state"] for v in k["versions"]]) for k in keys], [("ASYMMETRIC_SIGN", self.ALGORITHM, ["ENABLED"])])
        return keys[0]["versions"][0]["publicKeyPem"]

    def signatures(self):
        def jws(key, sig, data):
            # r‖s, 48 bytes each on P-384, as DER for cryptography.
            self.assertEqual(len(sig), 96)
            key.verify(utils.encode_dss_signature(int.from_bytes(sig[:48], "big"), int.from_bytes(sig[48:], "big")), data, ec.ECDSA(hashes.SHA384()))

        return [
            (dict(hash_algorithm="sha2-384"), lambda key, sig, data: key.verify(sig, data, ec.ECDSA(hashes.SHA384()))),
            (dict(hash_algorithm="sha2-384", marshaling_algorithm="jws"), jws),
        ]

    def test_other_hash_refused(self):
        """Cloud KMS signs P-384 keys' SHA-384 digests only: transit's default hash is a 400 naming the algorithm."""
        key = unique("p384")
        self.vault.write("%s/keys/%s" % (self.transit_mount, key), type="managed_key", managed_key_name=self.name)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.transit.sign_data(key, b64(b"data"), mount_point=self.transit_mount)
        self.assertIn("Google Cloud KMS algorithm EC_SIGN_P384_SHA384 signs sha2-384 digests only, not sha2-256", str(refused.exception))

    def verify_certificate(self, cert):
        self.assertIsInstance(cert.public_key(), ec.EllipticCurvePublicKey)
        self.assertEqual(cert.public_key().curve.name, "secp384r1")
        self.assertEqual(cert.signature_hash_algorithm.name, "sha384")
        cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(hashes.SHA384()))

    def wrong(self):
        # A key file whose private key is another account's: Google answers invalid_grant.
        forged = dict(self.account, private_key=self.other_account["private_key"])
        return {"credentials": json.dumps(forged)}, [self.other_account["private_key"].split("\n")[1], self.account["private_key"].split("\n")[1], "PRIVATE KEY"], "invalid_grant"
