"""hvac's KV methods: secrets.kv.v1, secrets.kv.v2 (every method), and the Client's generic
read/write/list/delete."""

import hvac

from common import ClientTest, unique


class KvV1(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mount = unique("kv1")
        cls.vault.sys.enable_secrets_engine("kv", path=cls.mount, options={"version": "1"})
        cls.kv = cls.vault.secrets.kv.v1

    def test_write_read_list_delete(self):
        mount = unique("kv1rw")
        self.vault.sys.enable_secrets_engine("kv", path=mount)
        self.kv.create_or_update_secret("app/db", {"user": "app", "password": "s3cret"}, mount_point=mount)
        self.kv.create_or_update_secret("app/cache", {"url": "redis://x"}, method="PUT", mount_point=mount)
        self.kv.create_or_update_secret("app/cache", {"url": "redis://y"}, method="POST", mount_point=mount)
        self.assertEqual(self.kv.read_secret("app/db", mount_point=mount)["data"], {"user": "app", "password": "s3cret"})
        self.assertEqual(self.kv.read_secret("app/cache", mount_point=mount)["data"], {"url": "redis://y"})
        self.assertEqual(self.kv.list_secrets("app", mount_point=mount)["data"]["keys"], ["cache", "db"])
        self.assertEqual(self.kv.list_secrets("", mount_point=mount)["data"]["keys"], ["app/"])
        self.kv.delete_secret("app/db", mount_point=mount)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.read_secret("app/db", mount_point=mount)

    def test_values_of_every_json_type_round_trip(self):
        secret = {"s": "x", "n": 42, "f": 1.5, "b": True, "nil": None, "list": [1, "two"], "map": {"k": "v"}}
        self.kv.create_or_update_secret("typed", secret, mount_point=self.mount)
        self.assertEqual(self.kv.read_secret("typed", mount_point=self.mount)["data"], secret)

    def test_generic_client_methods(self):
        path = "%s/generic" % self.mount
        self.vault.write(path, user="u", password="p")
        self.assertEqual(self.vault.read(path)["data"], {"user": "u", "password": "p"})
        self.assertEqual(self.vault.list(self.mount)["data"]["keys"], sorted(self.vault.list(self.mount)["data"]["keys"]))
        self.assertIn("generic", self.vault.list(self.mount)["data"]["keys"])
        self.vault.delete(path)
        self.assertIsNone(self.vault.read(path))

    def test_missing_list_is_invalid_path(self):
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.list_secrets("nothing-here", mount_point=self.mount)


class KvV2(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mount = unique("kv2")
        cls.vault.sys.enable_secrets_engine("kv", path=cls.mount, options={"version": "2"})
        cls.kv = cls.vault.secrets.kv.v2

    def test_configure_and_read_configuration(self):
        mount = unique("kv2conf")
        self.vault.sys.enable_secrets_engine("kv", path=mount, options={"version": "2"})
        self.kv.configure(max_versions=5, cas_required=True, delete_version_after="1h", mount_point=mount)
        conf = self.kv.read_configuration(mount_point=mount)["data"]
        self.assertEqual(conf, {"max_versions": 5, "cas_required": True, "delete_version_after": "1h0m0s"})
        self.kv.configure(mount_point=mount)  # hvac's defaults: 10 versions, no expiry
        conf = self.kv.read_configuration(mount_point=mount)["data"]
        self.assertEqual(conf["max_versions"], 10)
        self.assertEqual(conf["delete_version_after"], "0s")

    def test_versions(self):
        path = unique("versions")
        first = self.kv.create_or_update_secret(path, {"v": 1}, mount_point=self.mount)["data"]
        self.assertEqual(first["version"], 1)
        second = self.kv.create_or_update_secret(path, {"v": 2}, cas=1, mount_point=self.mount)["data"]
        self.assertEqual(second["version"], 2)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.kv.create_or_update_secret(path, {"v": 3}, cas=1, mount_point=self.mount)
        self.assertEqual(self.kv.read_secret_version(path, mount_point=self.mount)["data"]["data"], {"v": 2})
        self.assertEqual(self.kv.read_secret_version(path, version=1, mount_point=self.mount)["data"]["data"], {"v": 1})
        self.assertEqual(self.kv.read_secret(path, mount_point=self.mount)["data"]["metadata"]["version"], 2)

    def test_patch(self):
        path = unique("patch")
        self.kv.create_or_update_secret(path, {"a": "1", "b": "2"}, mount_point=self.mount)
        self.kv.patch(path, {"b": "3", "c": "4"}, mount_point=self.mount)
        read = self.kv.read_secret_version(path, mount_point=self.mount)["data"]
        self.assertEqual(read["data"], {"a": "1", "b": "3", "c": "4"})
        self.assertEqual(read["metadata"]["version"], 2)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.patch(unique("absent"), {"x": "y"}, mount_point=self.mount)

    def test_delete_undelete_destroy(self):
        path = unique("lifecycle")
        for v in range(3):
            self.kv.create_or_update_secret(path, {"v": v}, mount_point=self.mount)
        self.kv.delete_latest_version_of_secret(path, mount_point=self.mount)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.read_secret_version(path, mount_point=self.mount)
        self.kv.undelete_secret_versions(path, [3], mount_point=self.mount)
        self.assertEqual(self.kv.read_secret_version(path, mount_point=self.mount)["data"]["data"], {"v": 2})
        self.kv.delete_secret_versions(path, [1], mount_point=self.mount)
        self.kv.destroy_secret_versions(path, [2], mount_point=self.mount)
        versions = self.kv.read_secret_metadata(path, mount_point=self.mount)["data"]["versions"]
        self.assertNotEqual(versions["1"]["deletion_time"], "")
        self.assertTrue(versions["2"]["destroyed"])
        self.assertFalse(versions["3"]["destroyed"])

    def test_metadata(self):
        path = unique("meta")
        self.kv.create_or_update_secret(path, {"k": "v"}, mount_point=self.mount)
        self.kv.update_metadata(path, max_versions=3, cas_required=False, delete_version_after="30m", mount_point=self.mount)
        meta = self.kv.read_secret_metadata(path, mount_point=self.mount)["data"]
        self.assertEqual(meta["max_versions"], 3)
        self.assertFalse(meta["cas_required"])
        self.assertEqual(meta["delete_version_after"], "30m0s")
        self.assertEqual(meta["current_version"], 1)
        self.kv.update_metadata(path, mount_point=self.mount)  # only hvac's default delete_version_after
        meta = self.kv.read_secret_metadata(path, mount_point=self.mount)["data"]
        self.assertEqual(meta["max_versions"], 3)
        self.assertEqual(meta["delete_version_after"], "0s")
        self.kv.delete_metadata_and_all_versions(path, mount_point=self.mount)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.read_secret_metadata(path, mount_point=self.mount)

    def test_list(self):
        folder = unique("folder")
        for name in ("a", "b", "sub/c"):
            self.kv.create_or_update_secret("%s/%s" % (folder, name), {"n": name}, mount_point=self.mount)
        self.assertEqual(self.kv.list_secrets(folder, mount_point=self.mount)["data"]["keys"], ["a", "b", "sub/"])
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.kv.list_secrets(unique("empty"), mount_point=self.mount)

    def test_secret_with_nested_and_null_values(self):
        path = unique("nested")
        secret = {"nested": {"list": [1, 2, {"deep": None}]}, "empty": "", "zero": 0, "off": False}
        self.kv.create_or_update_secret(path, secret, mount_point=self.mount)
        self.assertEqual(self.kv.read_secret_version(path, mount_point=self.mount)["data"]["data"], secret)

    def test_generic_client_methods_on_v2_paths(self):
        path = unique("generic")
        self.vault.write("%s/data/%s" % (self.mount, path), data={"x": "1"})
        self.assertEqual(self.vault.read("%s/data/%s" % (self.mount, path))["data"]["data"], {"x": "1"})
        self.assertIn(path, self.vault.list("%s/metadata" % self.mount)["data"]["keys"])
        self.vault.delete("%s/metadata/%s" % (self.mount, path))
        self.assertIsNone(self.vault.read("%s/data/%s" % (self.mount, path)))
