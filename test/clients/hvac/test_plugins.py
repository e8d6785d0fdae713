"""Catalog plugins through hvac: the TOTP secrets engine and the userpass auth method shipped in
plugins/, built into the launcher's plugin directory by global-setup.ts (PLUGIN_DIR, with their
sha256 in TOTP_SHA256 / USERPASS_SHA256 / MISBEHAVE_SHA256).

hvac 0.11.2 has no plugin-catalog or TOTP API: registration, reloads and TOTP keys and codes go
through the client's generic write/read/list/delete. Mounting uses sys.enable_secrets_engine and
sys.enable_auth_method (with the legacy plugin_name form too), users and logins hvac's own
auth.userpass methods. Codes are checked against Debian's oathtool, an independent TOTP.
"""

import base64
import os
import shutil
import subprocess
import time
import urllib.parse

import hvac

from common import ClientTest, client, unique

PLUGIN_DIR = os.environ.get("PLUGIN_DIR", "")


def oathtool(secret, algorithm="SHA1", digits=6, period=30, at=None):
    args = ["oathtool", "--totp=%s" % algorithm.lower(), "-d", str(digits), "-s", "%ds" % period, "-b", secret]
    if at is not None:
        args += ["-N", "@%d" % at]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def copy_bundle(name):
    """A private copy of a built plugin under a unique command (tests that tamper with it)."""
    command = "%s.js" % unique(name)
    shutil.copyfile(os.path.join(PLUGIN_DIR, "%s.js" % name), os.path.join(PLUGIN_DIR, command))
    return command


class Totp(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.name = unique("totp")
        cls.vault.write("sys/plugins/catalog/secret/%s" % cls.name, sha256=os.environ["TOTP_SHA256"], command="totp.js", version="v1.0.0")
        cls.path = unique("totp")
        cls.vault.sys.enable_secrets_engine(backend_type=cls.name, path=cls.path, plugin_version="v1.0.0")

    def code_matches(self, key, secret, **oath):
        # A period may turn between the two reads: a second pair then agrees.
        for _ in range(2):
            code = self.vault.read("%s/code/%s" % (self.path, key))["data"]["code"]
            if code == oathtool(secret, **oath):
                return code
        self.fail("Coffer's code %s does not match oathtool's" % code)

    def test_catalog_and_mount_listing(self):
        catalog = self.vault.read("sys/plugins/catalog")["data"]
        self.assertIn(self.name, catalog["secret"])
        entry = [d for d in catalog["detailed"] if d["name"] == self.name][0]
        self.assertEqual((entry["type"], entry["version"], entry["builtin"], entry["sha256"]), ("secret", "v1.0.0", False, os.environ["TOTP_SHA256"]))
        mount = self.vault.sys.list_mounted_secrets_engines()["data"]["%s/" % self.path]
        self.assertEqual(mount["type"], self.name)
        self.assertEqual(mount["running_plugin_version"], "v1.0.0")
        self.assertEqual(mount["running_sha256"], os.environ["TOTP_SHA256"])

    def test_generated_key_agrees_with_oathtool(self):
        key = unique("gen")
        made = self.vault.write("%s/keys/%s" % (self.path, key), generate=True, issuer="Coffer", account_name="ada@example.com")["data"]
        url = urllib.parse.urlparse(made["url"])
        self.assertEqual((url.scheme, url.netloc), ("otpauth", "totp"))
        secret = urllib.parse.parse_qs(url.query)["secret"][0]
        self.assertTrue(base64.b64decode(made["barcode"]).startswith(b"\x89PNG\r\n\x1a\n"))
        self.assertEqual(self.vault.read("%s/keys/%s" % (self.path, key))["data"], {"account_name": "ada@example.com", "algorithm": "SHA1", "digits": 6, "issuer": "Coffer", "period": 30})
        self.code_matches(key, secret)

    def test_imported_sha256_eight_digits(self):
        key = unique("imp")
        secret = base64.b32encode(os.urandom(20)).decode().rstrip("=")
        self.vault.write("%s/keys/%s" % (self.path, key), key=secret, issuer="Coffer", account_name="bob", algorithm="SHA256", digits=8, period=60)
        self.code_matches(key, secret, algorithm="SHA256", digits=8, period=60)
        self.assertIn(key, self.vault.list("%s/keys" % self.path)["data"]["keys"])

    def test_validation_of_oathtool_codes_and_replay(self):
        key = unique("val")
        secret = base64.b32encode(os.urandom(20)).decode().rstrip("=")
        self.vault.write("%s/keys/%s" % (self.path, key), key=secret, issuer="Coffer", account_name="eve")
        code = oathtool(secret)
        self.assertTrue(self.vault.write("%s/code/%s" % (self.path, key), code=code)["data"]["valid"])
        with self.assertRaises(hvac.exceptions.InvalidRequest) as replay:
            self.vault.write("%s/code/%s" % (self.path, key), code=code)
        self.assertIn("already used", str(replay.exception))
        old = oathtool(secret, at=int(time.time()) - 3600)
        self.assertFalse(self.vault.write("%s/code/%s" % (self.path, key), code=old)["data"]["valid"])
        self.vault.delete("%s/keys/%s" % (self.path, key))
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.vault.read("%s/code/%s" % (self.path, key))


class Userpass(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.name = unique("userpass")
        cls.vault.write("sys/plugins/catalog/auth/%s" % cls.name, sha256=os.environ["USERPASS_SHA256"], command="userpass.js")
        cls.path = unique("up")
        # The legacy form: type "plugin" naming the plugin.
        cls.vault.sys.enable_auth_method(method_type="plugin", path=cls.path, plugin_name=cls.name)
        cls.vault.sys.create_or_update_policy(name="%s-reader" % cls.path, policy='path "secret/*" { capabilities = ["read"] }')

    def test_listed_as_the_plugin(self):
        mount = self.vault.sys.list_auth_methods()["data"]["%s/" % self.path]
        self.assertEqual(mount["type"], self.name)
        self.assertEqual(mount["running_sha256"], os.environ["USERPASS_SHA256"])

    def test_login_gives_a_coffer_token(self):
        userpass = self.vault.auth.userpass
        userpass.create_or_update_user(username="Ada", password="correct horse", policies=["%s-reader" % self.path], mount_point=self.path)
        self.assertIn("ada", userpass.list_user(mount_point=self.path)["data"]["keys"])
        user = userpass.read_user(username="ada", mount_point=self.path)["data"]
        self.assertNotIn("password", user)
        self.assertEqual(user["token_policies"], ["%s-reader" % self.path])
        login = client(token="").auth.userpass.login(username="ada", password="correct horse", mount_point=self.path)
        auth = login["auth"]
        self.assertEqual(sorted(auth["policies"]), sorted(["default", "%s-reader" % self.path]))
        self.assertEqual(auth["metadata"], {"username": "ada"})
        self.assertTrue(auth["entity_id"])
        me = client(token=auth["client_token"]).lookup_token()["data"]
        self.assertEqual(me["path"], "auth/%s/login/ada" % self.path)
        self.assertEqual(me["display_name"], "%s-ada" % self.path)
        renewed = client(token=auth["client_token"]).renew_self_token()
        self.assertTrue(renewed["auth"]["renewable"])
        # The user's policies changed since the login: the plugin refuses the renewal, as Vault does.
        self.vault.write("auth/%s/users/ada/policies" % self.path, token_policies=["default"])
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            client(token=auth["client_token"]).renew_self_token()
        self.assertIn("policies have changed, not renewing", str(refused.exception))

    def test_wrong_password_and_unknown_user_alike(self):
        self.vault.auth.userpass.create_or_update_user(username="bob", password="right", mount_point=self.path)
        for user, password in (("bob", "wrong"), ("nobody", "right")):
            with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
                client(token="").auth.userpass.login(username=user, password=password, mount_point=self.path)
            self.assertIn("invalid username or password", str(refused.exception))

    def test_password_change(self):
        userpass = self.vault.auth.userpass
        userpass.create_or_update_user(username="carol", password="one", mount_point=self.path)
        userpass.update_password_on_user(username="carol", password="two", mount_point=self.path)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            client(token="").auth.userpass.login(username="carol", password="one", mount_point=self.path)
        self.assertTrue(client(token="").auth.userpass.login(username="carol", password="two", mount_point=self.path)["auth"]["client_token"])


class PinnedBytes(ClientTest):
    def test_replaced_bundle_is_refused_after_reload(self):
        name, path = unique("mb"), unique("mb")
        command = copy_bundle("misbehave")
        self.vault.write("sys/plugins/catalog/secret/%s" % name, sha256=os.environ["MISBEHAVE_SHA256"], command=command, env=["ECHO_VERSION=7"])
        self.vault.sys.enable_secrets_engine(backend_type=name, path=path)
        self.assertEqual(self.vault.read("%s/version" % path)["data"]["version"], "7")
        with open(os.path.join(PLUGIN_DIR, command), "a") as bundle:
            bundle.write("\n// replaced\n")
        reply = self.vault.write("sys/plugins/reload/backend", plugin=name)
        self.assertTrue(reply["data"]["reload_id"])
        with self.assertRaises(hvac.exceptions.InternalServerError) as refused:
            self.vault.read("%s/version" % path)
        self.assertIn("the catalog entry it runs pins %s" % os.environ["MISBEHAVE_SHA256"], str(refused.exception))
        self.assertEqual(self.vault.sys.list_mounted_secrets_engines()["data"]["%s/" % path]["plugin_status"], "failed")
        os.remove(os.path.join(PLUGIN_DIR, command))

    def test_registration_checks_the_file(self):
        with self.assertRaises(hvac.exceptions.InvalidRequest) as wrong:
            self.vault.write("sys/plugins/catalog/secret/%s" % unique("x"), sha256="0" * 64, command="totp.js")
        self.assertIn("sha256", str(wrong.exception))
        with self.assertRaises(hvac.exceptions.InvalidRequest) as missing:
            self.vault.write("sys/plugins/catalog/secret/%s" % unique("x"), sha256="0" * 64, command="absent.js")
        self.assertIn("absent.js", str(missing.exception))
