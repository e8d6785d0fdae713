"""hvac's identity methods (client.secrets.identity.*) for entities, aliases, groups and lookups.
The identity OIDC provider (named keys, roles, signed id tokens) is not part of Coffer."""

import hvac

from common import ClientTest, client, unique


class Identity(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.identity = cls.vault.secrets.identity
        # Aliases name a mount by its accessor: a JWT mount gives one.
        cls.auth_path = unique("idauth")
        cls.vault.sys.enable_auth_method("jwt", path=cls.auth_path)
        cls.accessor = cls.vault.sys.list_auth_methods()["data"][cls.auth_path + "/"]["accessor"]

    def entity(self, **kwargs):
        return self.identity.create_or_update_entity(unique("entity"), **kwargs)["data"]

    def test_entities_by_id(self):
        created = self.entity(metadata={"team": "ops"}, policies=["reader"])
        entity = self.identity.read_entity(created["id"])["data"]
        self.assertEqual(entity["metadata"], {"team": "ops"})
        self.assertEqual(entity["policies"], ["reader"])
        self.identity.update_entity(created["id"], policies=["reader", "writer"], disabled=True)
        entity = self.identity.read_entity(created["id"])["data"]
        self.assertEqual(entity["policies"], ["reader", "writer"])
        self.assertTrue(entity["disabled"])
        self.assertIn(created["id"], self.identity.list_entities()["data"]["keys"])
        self.assertIn(created["id"], self.identity.list_entities(method="GET")["data"]["keys"])
        self.identity.delete_entity(created["id"])
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_entity(created["id"])

    def test_entities_by_name(self):
        name = unique("named")
        self.identity.create_or_update_entity_by_name(name, metadata={"k": "v"}, policies=["p1"])
        entity = self.identity.read_entity_by_name(name)["data"]
        self.assertEqual(entity["name"], name)
        self.assertEqual(entity["metadata"], {"k": "v"})
        self.assertIn(name, self.identity.list_entities_by_name()["data"]["keys"])
        self.assertIn(name, self.identity.list_entities_by_name(method="GET")["data"]["keys"])
        self.identity.delete_entity_by_name(name)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_entity_by_name(name)

    def test_entity_aliases(self):
        entity = self.entity()
        alias = self.identity.create_or_update_entity_alias(unique("user"), entity["id"], self.accessor)["data"]
        read = self.identity.read_entity_alias(alias["id"])["data"]
        self.assertEqual(read["canonical_id"], entity["id"])
        self.assertEqual(read["mount_accessor"], self.accessor)
        renamed = unique("renamed")
        self.identity.update_entity_alias(alias["id"], renamed, entity["id"], self.accessor)
        self.assertEqual(self.identity.read_entity_alias(alias["id"])["data"]["name"], renamed)
        self.assertIn(alias["id"], self.identity.list_entity_aliases()["data"]["keys"])
        found = self.identity.lookup_entity(alias_name=renamed, alias_mount_accessor=self.accessor)["data"]
        self.assertEqual(found["id"], entity["id"])
        self.assertEqual(self.identity.lookup_entity(alias_id=alias["id"])["data"]["id"], entity["id"])
        self.identity.delete_entity_alias(alias["id"])
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_entity_alias(alias["id"])

    def test_merge(self):
        keep, gone = self.entity(), self.entity()
        self.identity.create_or_update_entity_alias(unique("m"), gone["id"], self.accessor)
        self.identity.merge_entities([gone["id"]], keep["id"])
        self.assertEqual(len(self.identity.read_entity(keep["id"])["data"]["aliases"]), 1)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_entity(gone["id"])

    def test_lookup_entity_by_name_and_id(self):
        entity = self.entity()
        self.assertEqual(self.identity.lookup_entity(name=entity["name"])["data"]["id"], entity["id"])
        self.assertEqual(self.identity.lookup_entity(entity_id=entity["id"])["data"]["name"], entity["name"])
        missing = self.identity.lookup_entity(name=unique("nobody"))
        self.assertEqual(missing.status_code, 204)

    def test_internal_groups(self):
        member = self.entity()
        inner = self.identity.create_or_update_group(unique("inner"), policies=["inner-pol"], member_entity_ids=[member["id"]])["data"]
        outer = self.identity.create_or_update_group(unique("outer"), metadata={"env": "prod"}, member_group_ids=[inner["id"]])["data"]
        read = self.identity.read_group(outer["id"])["data"]
        self.assertEqual(read["member_group_ids"], [inner["id"]])
        self.assertEqual(read["metadata"], {"env": "prod"})
        self.identity.update_group(inner["id"], read_name(self.identity, inner["id"]), policies=["a", "b"], member_entity_ids=[member["id"]])
        self.assertEqual(self.identity.read_group(inner["id"])["data"]["policies"], ["a", "b"])
        self.assertIn(outer["id"], self.identity.list_groups()["data"]["keys"])
        self.assertEqual(self.identity.lookup_group(group_id=inner["id"])["data"]["name"], read_name(self.identity, inner["id"]))
        self.identity.delete_group(outer["id"])
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_group(outer["id"])

    def test_groups_by_name(self):
        name = unique("byname")
        self.identity.create_or_update_group_by_name(name, policies=["p"], metadata={"m": "1"})
        group = self.identity.read_group_by_name(name)["data"]
        self.assertEqual(group["policies"], ["p"])
        self.assertIn(name, self.identity.list_groups_by_name()["data"]["keys"])
        self.assertEqual(self.identity.lookup_group(name=name)["data"]["id"], group["id"])
        self.identity.delete_group_by_name(name)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_group_by_name(name)

    def test_external_group_and_alias(self):
        group = self.identity.create_or_update_group(unique("ext"), group_type="external", policies=["ext-pol"])["data"]
        alias_name = unique("ldap-group")
        alias = self.identity.create_or_update_group_alias(alias_name, mount_accessor=self.accessor, canonical_id=group["id"])["data"]
        read = self.identity.read_group_alias(alias["id"])["data"]
        self.assertEqual(read["canonical_id"], group["id"])
        self.assertEqual(read["name"], alias_name)
        self.assertIn(alias["id"], self.identity.list_group_aliases()["data"]["keys"])
        found = self.identity.lookup_group(alias_name=alias_name, alias_mount_accessor=self.accessor)["data"]
        self.assertEqual(found["id"], group["id"])
        renamed = unique("renamed-group")
        self.identity.update_group_alias(alias["id"], renamed, mount_accessor=self.accessor, canonical_id=group["id"])
        self.assertEqual(self.identity.read_group_alias(alias["id"])["data"]["name"], renamed)
        self.identity.delete_group_alias(alias["id"])
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.identity.read_group_alias(alias["id"])

    def test_entity_policies_reach_the_token(self):
        policy = unique("entpol")
        self.vault.sys.create_or_update_policy(policy, 'path "sys/mounts" { capabilities = ["read"] }')
        name = unique("tokenuser")
        entity = self.identity.create_or_update_entity_by_name(name, policies=[policy])["data"]
        token_accessor = self.vault.sys.list_auth_methods()["data"]["token/"]["accessor"]
        self.identity.create_or_update_entity_alias(name, entity["id"], token_accessor)
        role = unique("ent-role")
        self.vault.auth.token.create_or_update_role(role, allowed_entity_aliases=[name])
        auth = self.vault.auth.token.create(role_name=role, entity_alias=name, policies=["default"], ttl="5m")["auth"]
        self.assertEqual(auth["entity_id"], entity["id"])
        user = client(auth["client_token"])
        self.assertIn("cubbyhole/", user.sys.list_mounted_secrets_engines()["data"])


def read_name(identity, group_id):
    return identity.read_group(group_id)["data"]["name"]
