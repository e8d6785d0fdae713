"""hvac's token auth method (client.auth.token.*) and the Client's older token helpers."""

import time

import hvac

from common import ClientTest, client, unique


class Create(ClientTest):
    def test_create_with_every_argument(self):
        created = self.vault.auth.token.create(
            policies=["default", "reader"],
            meta={"team": "ops"},
            no_default_policy=False,
            renewable=True,
            ttl="1h",
            explicit_max_ttl="2h",
            display_name="ci job",
            num_uses=5,
        )
        auth = created["auth"]
        self.assertEqual(auth["policies"], ["default", "reader"])
        self.assertEqual(auth["metadata"], {"team": "ops"})
        self.assertEqual(auth["lease_duration"], 3600)
        self.assertTrue(auth["renewable"])
        self.assertEqual(auth["num_uses"], 5)
        looked = self.vault.auth.token.lookup(auth["client_token"])["data"]
        self.assertEqual(looked["display_name"], "token-ci-job")
        self.assertEqual(looked["explicit_max_ttl"], 7200)
        self.assertEqual(looked["num_uses"], 5)

    def test_create_with_defaults_inherits_the_parent(self):
        created = self.vault.auth.token.create()
        self.assertEqual(created["auth"]["policies"], ["root"])
        looked = self.vault.auth.token.lookup(created["auth"]["client_token"])["data"]
        # hvac sends its default display_name "token", which Vault prefixes like any other.
        self.assertEqual(looked["display_name"], "token-token")

    def test_orphan_periodic_and_batch(self):
        orphan = self.vault.auth.token.create(policies=["default"], no_parent=True, ttl="10m")["auth"]
        self.assertTrue(orphan["orphan"])
        periodic = self.vault.auth.token.create(policies=["default"], period="30m")["auth"]
        self.assertEqual(periodic["lease_duration"], 1800)
        self.assertEqual(self.vault.auth.token.lookup(periodic["client_token"])["data"]["period"], 1800)
        batch = self.vault.auth.token.create(policies=["default"], type="batch", ttl="5m")["auth"]
        self.assertTrue(batch["client_token"].startswith("hvb."))
        self.assertEqual(batch["token_type"], "batch")
        self.assertFalse(batch["renewable"])

    def test_create_with_a_custom_id(self):
        token_id = unique("custom")
        created = self.vault.auth.token.create(id=token_id, policies=["default"], ttl="10m")
        self.assertEqual(created["auth"]["client_token"], token_id)

    def test_create_wrapped(self):
        wrapped = self.vault.auth.token.create(policies=["default"], wrap_ttl="1m")
        self.assertEqual(wrapped["wrap_info"]["ttl"], 60)
        self.assertEqual(wrapped["wrap_info"]["creation_path"], "auth/token/create")

    def test_legacy_client_create_token(self):
        # Client.create_token sends JSON null for every argument left out: renewable null keeps
        # Vault's default (renewable), display_name null the default name.
        created = self.vault.create_token(policies=["default"], ttl="10m")
        self.assertTrue(created["auth"]["renewable"])
        self.assertEqual(self.vault.lookup_token(created["auth"]["client_token"])["data"]["display_name"], "token")
        orphan = self.vault.create_token(policies=["default"], orphan=True, lease="15m")["auth"]
        self.assertTrue(orphan["orphan"])
        self.assertEqual(orphan["lease_duration"], 900)


class LookupRenewRevoke(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.creator = unique("creator")
        cls.vault.sys.create_or_update_policy(cls.creator, 'path "auth/token/create" { capabilities = ["update"] }')

    def _token(self, **kwargs):
        kwargs.setdefault("policies", ["default"])
        kwargs.setdefault("ttl", "1h")
        return self.vault.auth.token.create(**kwargs)["auth"]

    def test_lookup_self_and_accessor(self):
        auth = self._token()
        mine = client(auth["client_token"]).auth.token.lookup_self()["data"]
        self.assertEqual(mine["id"], auth["client_token"])
        self.assertEqual(mine["policies"], ["default"])
        by_accessor = self.vault.auth.token.lookup_accessor(auth["accessor"])["data"]
        self.assertEqual(by_accessor["id"], "")
        self.assertEqual(by_accessor["accessor"], auth["accessor"])
        legacy = self.vault.lookup_token(auth["accessor"], accessor=True)["data"]
        self.assertEqual(legacy["accessor"], auth["accessor"])

    def test_renew_renew_self_renew_accessor(self):
        auth = self._token(ttl="10m", explicit_max_ttl="2h")
        renewed = self.vault.auth.token.renew(auth["client_token"], increment="30m")
        self.assertEqual(renewed["auth"]["lease_duration"], 1800)
        own = client(auth["client_token"]).auth.token.renew_self(increment=2400)
        self.assertEqual(own["auth"]["lease_duration"], 2400)
        by_accessor = self.vault.auth.token.renew_accessor(auth["accessor"], increment="20m")
        self.assertEqual(by_accessor["auth"]["lease_duration"], 1200)
        legacy = self.vault.renew_token(auth["client_token"], increment=600)
        self.assertEqual(legacy["auth"]["lease_duration"], 600)

    def test_revoke_revokes_children(self):
        parent = self._token(policies=["default", self.creator])
        child = client(parent["client_token"]).auth.token.create(policies=["default"], ttl="10m")["auth"]
        self.vault.auth.token.revoke(parent["client_token"])
        for token in (parent["client_token"], child["client_token"]):
            with self.assertRaises(hvac.exceptions.Forbidden):
                self.vault.auth.token.lookup(token)

    def test_expired_tokens_are_revoked_with_their_children(self):
        # The shard's alarm revokes expired tokens a batch at a time: their children go too (their
        # own TTL is an hour), their accessors leave the list, and a token beside them stays.
        parents = [self._token(policies=["default", self.creator], ttl="3s") for _ in range(3)]
        children = [client(p["client_token"]).auth.token.create(policies=["default"], ttl="1h")["auth"] for p in parents]
        bystander = self._token()
        gone = {a["accessor"] for a in parents + children}
        deadline = time.time() + 30
        while True:
            keys = set(self.vault.auth.token.list_accessors()["data"]["keys"])
            if not gone & keys:
                break
            if time.time() > deadline:
                self.fail(f"still listed after 30 s: {sorted(gone & keys)}")
            time.sleep(0.5)
        for auth in parents + children:
            with self.assertRaises(hvac.exceptions.Forbidden):
                self.vault.auth.token.lookup(auth["client_token"])
        self.assertIn(bystander["accessor"], keys)
        self.assertEqual(self.vault.auth.token.lookup(bystander["client_token"])["data"]["accessor"], bystander["accessor"])

    def test_revoke_and_orphan_children(self):
        parent = self._token(policies=["default", self.creator])
        child = client(parent["client_token"]).auth.token.create(policies=["default"], ttl="10m")["auth"]
        self.vault.auth.token.revoke_and_orphan_children(parent["client_token"])
        looked = self.vault.auth.token.lookup(child["client_token"])["data"]
        self.assertTrue(looked["orphan"])

    def test_revoke_self_and_accessor(self):
        first, second = self._token(), self._token()
        client(first["client_token"]).auth.token.revoke_self()
        self.vault.auth.token.revoke_accessor(second["accessor"])
        for token in (first["client_token"], second["client_token"]):
            with self.assertRaises(hvac.exceptions.Forbidden):
                self.vault.auth.token.lookup(token)

    def test_legacy_revoke_token(self):
        auth = self._token()
        self.vault.revoke_token(auth["accessor"], accessor=True)
        with self.assertRaises(hvac.exceptions.Forbidden):
            self.vault.auth.token.lookup(auth["client_token"])

    def test_is_authenticated_and_logout(self):
        auth = self._token()
        user = client(auth["client_token"])
        self.assertTrue(user.is_authenticated())
        user.logout(revoke_token=True)
        self.assertFalse(client(auth["client_token"]).is_authenticated())

    def test_list_accessors(self):
        auth = self._token()
        self.assertIn(auth["accessor"], self.vault.auth.token.list_accessors()["data"]["keys"])

    def test_tidy(self):
        reply = self.vault.auth.token.tidy()
        self.assertTrue(reply["warnings"])


class Roles(ClientTest):
    def test_create_read_list_use_delete(self):
        name = unique("role")
        self.vault.auth.token.create_or_update_role(
            name, allowed_policies=["default", "app"], disallowed_policies=["admin"], orphan=True, renewable=True, path_suffix="ci"
        )
        role = self.vault.auth.token.read_role(name)["data"]
        self.assertEqual(role["allowed_policies"], ["app", "default"])
        self.assertEqual(role["disallowed_policies"], ["admin"])
        self.assertTrue(role["orphan"])
        self.assertEqual(role["path_suffix"], "ci")
        self.assertIn(name, self.vault.auth.token.list_roles()["data"]["keys"])
        auth = self.vault.auth.token.create(role_name=name, policies=["app"], ttl="5m")["auth"]
        self.assertTrue(auth["orphan"])
        self.assertEqual(self.vault.auth.token.lookup(auth["client_token"])["data"]["path"], "auth/token/create/%s/ci" % name)
        self.vault.auth.token.delete_role(name)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.vault.auth.token.read_role(name)

    def test_role_with_defaults(self):
        name = unique("plain")
        self.vault.auth.token.create_or_update_role(name)
        role = self.vault.auth.token.read_role(name)["data"]
        self.assertFalse(role["orphan"])
        self.assertTrue(role["renewable"])

    def test_entity_alias(self):
        name = unique("aliased")
        self.vault.auth.token.create_or_update_role(name, allowed_entity_aliases=["svc-*"])
        auth = self.vault.auth.token.create(role_name=name, entity_alias="svc-web", ttl="5m")["auth"]
        self.assertTrue(auth["entity_id"])

    def test_legacy_role_helpers(self):
        # Client.create_token_role sends JSON null for each argument left out.
        name = unique("legacy")
        self.vault.create_token_role(name, allowed_policies=["default"])
        role = self.vault.token_role(name)["data"]
        self.assertEqual(role["allowed_policies"], ["default"])
        self.assertFalse(role["orphan"])
        self.assertIn(name, self.vault.list_token_roles()["data"]["keys"])
        self.vault.delete_token_role(name)
        self.assertNotIn(name, self.vault.list_token_roles()["data"]["keys"])
