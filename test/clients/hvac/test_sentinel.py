"""Sentinel role- and endpoint-governing policies (RGPs, EGPs) through hvac. hvac 0.11.2 has no
methods for sys/policies/rgp and sys/policies/egp, so those go through the Client's generic
write/read/list/delete; everything the policies govern uses hvac's own methods.

The client modules share one server and run in parallel: every EGP here governs only this
module's own mounts and paths, and the one on "*" is guarded by a token metadata tag no other
module's token carries. Every policy is deleted by a cleanup, whatever the test's outcome."""

import base64

import hvac

from common import ClientTest, client, unique

ALLOW = "main = rule { true }"
DENY = "main = rule { false }"
DENIAL = '%s standard policy "root/%s" evaluation resulted in denial (enforcement level: %s)'


class SentinelTest(ClientTest):
    """A kv v1 mount of the class's own, an ACL policy over it, and helpers that clean up."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.mount = unique("sentinel")
        cls.vault.sys.enable_secrets_engine("kv", path=cls.mount, options={"version": "1"})
        cls.acl = unique("sentinel-acl")
        cls.vault.sys.create_or_update_policy(
            cls.acl,
            'path "%s/*" { capabilities = ["create", "read", "update", "delete", "list"] }\n'
            'path "auth/token/create" { capabilities = ["update"] }' % cls.mount,
        )
        for path in ("app", "team/a", "spin"):
            cls.vault.secrets.kv.v1.create_or_update_secret(path, {"v": path}, method="PUT", mount_point=cls.mount)

    @classmethod
    def tearDownClass(cls):
        cls.vault.sys.disable_secrets_engine(cls.mount)
        cls.vault.sys.delete_policy(cls.acl)

    def drop(self, kind, name):
        self.vault.delete("sys/policies/%s/%s" % (kind, name))

    def put_rgp(self, name, policy, level="hard-mandatory"):
        self.addCleanup(self.drop, "rgp", name)
        return self.vault.write("sys/policies/rgp/%s" % name, policy=policy, enforcement_level=level)

    def put_egp(self, name, paths, policy, level="hard-mandatory"):
        self.addCleanup(self.drop, "egp", name)
        return self.vault.write("sys/policies/egp/%s" % name, policy=policy, enforcement_level=level, paths=paths)

    def token(self, policies=None, meta=None):
        return self.vault.auth.token.create(policies=policies or [self.acl], meta=meta, ttl="15m")["auth"]["client_token"]

    def kv(self, token):
        return client(token).secrets.kv.v1

    def forbidden(self, call, *args, **kwargs):
        """The error text of a call that must be refused with a 403."""
        with self.assertRaises(hvac.exceptions.Forbidden) as caught:
            call(*args, **kwargs)
        return caught.exception.errors[0]

    def invalid(self, call, *args, **kwargs):
        """The error text of a call that must be refused with a 400."""
        with self.assertRaises(hvac.exceptions.InvalidRequest) as caught:
            call(*args, **kwargs)
        return caught.exception.errors[0]

    def keys(self, kind):
        listed = self.vault.list("sys/policies/%s" % kind)
        return [] if listed is None else listed["data"]["keys"]


class Managing(SentinelTest):
    def test_rgp_write_read_list_delete(self):
        raw = unique("Sentinel-Rule")
        name = raw.lower()
        written = self.put_rgp(raw, ALLOW, "advisory")
        self.assertEqual(written["warnings"], ["policy name was converted to %s" % name])
        read = self.vault.read("sys/policies/rgp/%s" % name)["data"]
        self.assertEqual(read, {"name": name, "policy": ALLOW, "enforcement_level": "advisory"})
        # The name is canonical on reads too.
        self.assertEqual(self.vault.read("sys/policies/rgp/%s" % raw)["data"]["name"], name)
        self.assertIn(name, self.keys("rgp"))
        self.vault.delete("sys/policies/rgp/%s" % name)
        self.assertIsNone(self.vault.read("sys/policies/rgp/%s" % name))
        self.assertNotIn(name, self.keys("rgp"))

    def test_egp_paths_as_list_and_comma_string_with_name_path_map(self):
        listed, comma = unique("egp-list"), unique("egp-comma")
        self.put_egp(listed, ["/%s/*" % self.mount, "%s/app" % self.mount], ALLOW, "soft-mandatory")
        # base64 of the text is decoded before it is stored.
        self.put_egp(comma, "%s/x, %s/y/*" % (self.mount, self.mount), base64.b64encode(ALLOW.encode()).decode(), "advisory")
        read = self.vault.read("sys/policies/egp/%s" % listed)["data"]
        self.assertEqual(
            read,
            {"name": listed, "policy": ALLOW, "enforcement_level": "soft-mandatory", "paths": ["%s/*" % self.mount, "%s/app" % self.mount]},
        )
        read = self.vault.read("sys/policies/egp/%s" % comma)["data"]
        self.assertEqual(read["policy"], ALLOW)
        self.assertEqual(read["paths"], ["%s/x" % self.mount, "%s/y/*" % self.mount])
        data = self.vault.list("sys/policies/egp")["data"]
        self.assertIn(listed, data["keys"])
        self.assertIn(comma, data["keys"])
        self.assertEqual(data["name_path_map"][listed], [{"path": "%s/*" % self.mount, "glob": True}, {"path": "%s/app" % self.mount, "glob": False}])
        self.assertEqual(data["name_path_map"][comma], [{"path": "%s/x" % self.mount, "glob": False}, {"path": "%s/y/*" % self.mount, "glob": True}])
        self.vault.delete("sys/policies/egp/%s" % listed)
        self.assertIsNone(self.vault.read("sys/policies/egp/%s" % listed))
        self.assertNotIn(listed, self.keys("egp"))

    def test_json_null_fields_are_refused(self):
        name = unique("nulls")
        self.addCleanup(self.drop, "egp", name)
        self.addCleanup(self.drop, "rgp", name)
        cases = [
            ("rgp", {"policy": None, "enforcement_level": "advisory"}, "'policy' parameter not supplied or empty"),
            ("rgp", {"policy": ALLOW, "enforcement_level": None}, "missing enforcement_level"),
            ("egp", {"policy": ALLOW, "enforcement_level": "advisory", "paths": None}, "paths cannot be empty"),
            ("egp", {"policy": None, "enforcement_level": "advisory", "paths": ["%s/app" % self.mount]}, "'policy' parameter not supplied or empty"),
            ("egp", {"policy": ALLOW, "enforcement_level": None, "paths": ["%s/app" % self.mount]}, "missing enforcement_level"),
        ]
        for kind, body, message in cases:
            error = self.invalid(self.vault.write, "sys/policies/%s/%s" % (kind, name), **body)
            self.assertIn(message, error, msg="%s %r" % (kind, body))
            self.assertIsNone(self.vault.read("sys/policies/%s/%s" % (kind, name)))

    def test_syntax_error_names_line_and_column(self):
        name = unique("broken")
        self.addCleanup(self.drop, "egp", name)
        self.addCleanup(self.drop, "rgp", name)
        error = self.invalid(self.vault.write, "sys/policies/rgp/%s" % name, policy="main = rule {\n  true and\n}", enforcement_level="advisory")
        self.assertRegex(error, r"^failed to parse policy: rgp/%s:3:1: expected " % name)
        error = self.invalid(
            self.vault.write, "sys/policies/egp/%s" % name, policy="main = rule { 1 + }", enforcement_level="advisory", paths="%s/app" % self.mount
        )
        self.assertRegex(error, r"^failed to parse policy: egp/%s:1:19: expected expression" % name)
        self.assertIsNone(self.vault.read("sys/policies/rgp/%s" % name))
        self.assertIsNone(self.vault.read("sys/policies/egp/%s" % name))

    def test_unknown_level_bad_paths_and_names_shared_with_acls(self):
        name = unique("bad")
        self.addCleanup(self.drop, "egp", name)
        self.addCleanup(self.drop, "rgp", name)
        error = self.invalid(self.vault.write, "sys/policies/rgp/%s" % name, policy=ALLOW, enforcement_level="strict")
        self.assertIn('unknown enforcement_level "strict"', error)
        error = self.invalid(self.vault.write, "sys/policies/egp/%s" % name, policy=ALLOW, enforcement_level="advisory", paths=["%s/*/x" % self.mount])
        self.assertIn('"*" may only end a path', error)
        self.assertIsNone(self.vault.read("sys/policies/rgp/%s" % name))
        self.assertIsNone(self.vault.read("sys/policies/egp/%s" % name))
        # RGPs share the ACL namespace (both are attached by name), both ways.
        error = self.invalid(self.vault.write, "sys/policies/rgp/%s" % self.acl, policy=ALLOW, enforcement_level="advisory")
        self.assertIn("an ACL policy has that name", error)
        self.put_rgp(name, ALLOW, "advisory")
        with self.assertRaises(hvac.exceptions.InvalidRequest) as caught:
            self.vault.sys.create_or_update_policy(name, 'path "x" { capabilities = ["read"] }')
        self.assertIn("an RGP has that name", caught.exception.errors[0])


class Egps(SentinelTest):
    def test_hard_mandatory_glob_names_the_policy_and_lifts_on_delete(self):
        name = unique("no-team")
        kv = self.kv(self.token())
        self.put_egp(name, "%s/team/*" % self.mount, "main = rule { not strings.has_prefix(request.path, \"%s/team/\") }" % self.mount)
        error = self.forbidden(kv.read_secret, "team/a", mount_point=self.mount)
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), error)
        self.assertIn("permission denied", error)
        self.forbidden(kv.create_or_update_secret, "team/b", {"v": 1}, method="PUT", mount_point=self.mount)
        # Other paths are not governed by it; root tokens never are.
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        self.assertEqual(self.vault.secrets.kv.v1.read_secret("team/a", mount_point=self.mount)["data"], {"v": "team/a"})
        self.drop("egp", name)
        self.assertEqual(kv.read_secret("team/a", mount_point=self.mount)["data"], {"v": "team/a"})

    def test_hard_mandatory_on_kv_v2_api_paths(self):
        mount = unique("sentinel-kv2")
        self.vault.sys.enable_secrets_engine("kv", path=mount, options={"version": "2"})
        self.addCleanup(self.vault.sys.disable_secrets_engine, mount)
        policy = unique("kv2-acl")
        self.vault.sys.create_or_update_policy(policy, 'path "%s/*" { capabilities = ["create", "read", "update", "list"] }' % mount)
        self.addCleanup(self.vault.sys.delete_policy, policy)
        self.vault.secrets.kv.v2.create_or_update_secret("locked/a", {"v": "1"}, mount_point=mount)
        kv2 = client(self.token([policy])).secrets.kv.v2
        name = unique("kv2-lock")
        # EGP paths are API paths: data/ is governed, metadata/ is not.
        self.put_egp(name, ["%s/data/locked/*" % mount], DENY)
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), self.forbidden(kv2.read_secret_version, "locked/a", mount_point=mount))
        self.forbidden(kv2.create_or_update_secret, "locked/b", {"v": "2"}, mount_point=mount)
        self.assertEqual(kv2.read_secret_metadata("locked/a", mount_point=mount)["data"]["current_version"], 1)
        kv2.create_or_update_secret("open/b", {"v": "3"}, mount_point=mount)
        self.assertEqual(kv2.read_secret_version("open/b", mount_point=mount)["data"]["data"], {"v": "3"})
        self.drop("egp", name)
        self.assertEqual(kv2.read_secret_version("locked/a", mount_point=mount)["data"]["data"], {"v": "1"})

    def test_soft_mandatory_needs_the_override_header(self):
        name = unique("soft")
        token = self.token()
        kv = self.kv(token)
        override = client(token)
        override.adapter.session.headers["X-Vault-Policy-Override"] = "true"
        refused = client(token)
        refused.adapter.session.headers["X-Vault-Policy-Override"] = "false"
        self.put_egp(name, "%s/app" % self.mount, DENY, "soft-mandatory")
        self.assertIn(DENIAL % ("egp", name, "soft-mandatory"), self.forbidden(kv.read_secret, "app", mount_point=self.mount))
        self.forbidden(refused.secrets.kv.v1.read_secret, "app", mount_point=self.mount)
        self.assertEqual(override.secrets.kv.v1.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        override.secrets.kv.v1.create_or_update_secret("app", {"v": "app"}, method="PUT", mount_point=self.mount)
        # The override never lifts a hard-mandatory policy.
        self.put_egp(name, "%s/app" % self.mount, DENY, "hard-mandatory")
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), self.forbidden(override.secrets.kv.v1.read_secret, "app", mount_point=self.mount))

    def test_advisory_never_denies(self):
        name = unique("advise")
        kv = self.kv(self.token())
        self.put_egp(name, "%s/*" % self.mount, DENY, "advisory")
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        kv.create_or_update_secret("advised", {"v": "w"}, method="PUT", mount_point=self.mount)
        self.assertEqual(kv.read_secret("advised", mount_point=self.mount)["data"], {"v": "w"})
        self.assertIn("advised", kv.list_secrets("", mount_point=self.mount)["data"]["keys"])
        kv.delete_secret("advised", mount_point=self.mount)

    def test_a_when_guard_on_undefined_denies_so_guards_use_else(self):
        # The reason the "*" policy below is guarded with `else`: a `when` on undefined leaves the
        # rule undefined, which denies. Shown on this module's own mount only.
        name = unique("guard")
        kv = self.kv(self.token(meta={"other": "x"}))
        self.put_egp(name, "%s/app" % self.mount, 'main = rule when token.metadata.suite is "%s" { false }' % name)
        error = self.forbidden(kv.read_secret, "app", mount_point=self.mount)
        self.assertIn("rule main (1:8) = undefined", error)
        self.put_egp(name, "%s/app" % self.mount, 'main = rule when (token.metadata.suite else "") is "%s" { false }' % name)
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        tagged = self.kv(self.token(meta={"suite": name}))
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), self.forbidden(tagged.read_secret, "app", mount_point=self.mount))

    def test_egp_on_everything_for_a_tagged_token(self):
        tag = unique("hvac-suite")
        name = unique("ticketed")
        policy = (
            'main = rule when (token.metadata.suite else "") is "%s" {\n'
            '  request.operation not in ["create", "update"] or "ticket" in keys(request.data)\n'
            "}" % tag
        )
        tagged_token = self.token(meta={"suite": tag})
        tagged = client(tagged_token)
        plain = client(self.token())
        # First on this module's mount alone: the guard passes untagged and unauthenticated callers.
        self.put_egp(name, "%s/*" % self.mount, policy)
        plain.secrets.kv.v1.create_or_update_secret("plain", {"v": 1}, method="PUT", mount_point=self.mount)
        self.assertEqual(self.forbidden(client("").secrets.kv.v1.read_secret, "app", mount_point=self.mount), "1 error occurred:\n\t* permission denied\n\n")
        self.forbidden(tagged.secrets.kv.v1.create_or_update_secret, "new", {"v": 1}, method="PUT", mount_point=self.mount)
        # Then on every path.
        self.put_egp(name, "*", policy)
        error = self.forbidden(tagged.secrets.kv.v1.create_or_update_secret, "new", {"v": 1}, method="PUT", mount_point=self.mount)
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), error)
        tagged.secrets.kv.v1.create_or_update_secret("new", {"v": 1, "ticket": "T-1"}, method="PUT", mount_point=self.mount)
        self.assertEqual(tagged.secrets.kv.v1.read_secret("new", mount_point=self.mount)["data"], {"v": 1, "ticket": "T-1"})
        # auth/token requests of the tagged token: writes are refused, reads are not.
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), self.forbidden(tagged.auth.token.renew_self))
        self.forbidden(tagged.auth.token.create, policies=[self.acl], ttl="5m")
        self.assertEqual(tagged.auth.token.lookup_self()["data"]["meta"], {"suite": tag})
        # Untagged tokens are not affected.
        plain.secrets.kv.v1.create_or_update_secret("plain", {"v": 2}, method="PUT", mount_point=self.mount)
        self.assertTrue(plain.auth.token.renew_self()["auth"]["renewable"])
        self.drop("egp", name)
        tagged.secrets.kv.v1.create_or_update_secret("new", {"v": 2}, method="PUT", mount_point=self.mount)
        self.assertEqual(tagged.auth.token.renew_self()["auth"]["client_token"], tagged_token)

    def test_unauthenticated_login_path(self):
        path = unique("sentinel-jwt")
        self.vault.sys.enable_auth_method("jwt", path=path)
        self.addCleanup(self.vault.sys.disable_auth_method, path)
        name = unique("login-guard")
        self.put_egp(
            name,
            "auth/%s/login" % path,
            'main = rule { request.unauthenticated and token.policies is not defined and request.data.role is not "blocked" }',
        )
        anonymous = client("")
        error = self.forbidden(anonymous.auth.jwt.jwt_login, role="blocked", jwt="a.b.c", path=path)
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), error)
        # Any other role reaches the method, which refuses it itself.
        error = self.invalid(anonymous.auth.jwt.jwt_login, role="other", jwt="a.b.c", path=path)
        self.assertNotIn(name, error)
        self.drop("egp", name)
        self.assertNotIn(name, self.invalid(anonymous.auth.jwt.jwt_login, role="blocked", jwt="a.b.c", path=path))

    def test_runaway_policy_is_denied_with_its_limit(self):
        name = unique("spin")
        kv = self.kv(self.token())
        self.put_egp(name, "%s/spin" % self.mount, "main = rule { all range(1000000000) as i { i >= 0 } }")
        error = self.forbidden(kv.read_secret, "spin", mount_point=self.mount)
        self.assertIn(DENIAL % ("egp", name, "hard-mandatory"), error)
        self.assertRegex(error, r"The specific error was:\n.*step limit")
        # The mount keeps serving while the policy is in place, and after it is gone.
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        self.drop("egp", name)
        self.assertEqual(kv.read_secret("spin", mount_point=self.mount)["data"], {"v": "spin"})


class Rgps(SentinelTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Tokens tied to entities: a token role that allows this class's entity aliases.
        cls.role = unique("sentinel-role")
        cls.aliases = [unique("erin"), unique("fay")]
        cls.vault.auth.token.create_or_update_role(cls.role, allowed_policies=[cls.acl], allowed_entity_aliases=cls.aliases)

    @classmethod
    def tearDownClass(cls):
        cls.vault.auth.token.delete_role(cls.role)
        super().tearDownClass()

    def entity_token(self, alias):
        auth = self.vault.auth.token.create(role_name=self.role, entity_alias=alias, policies=[self.acl], ttl="15m")["auth"]
        self.addCleanup(self.vault.secrets.identity.delete_entity, auth["entity_id"])
        return auth["client_token"], auth["entity_id"]

    def test_rgp_in_token_policies_with_token_metadata(self):
        name = unique("team-only")
        self.put_rgp(name, 'main = rule { token.metadata.team is "blue" }')
        blue_token = self.token([self.acl, name], {"team": "blue"})
        blue = self.kv(blue_token)
        red = self.kv(self.token([self.acl, name], {"team": "red"}))
        plain = self.kv(self.token())
        self.assertEqual(blue.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        error = self.forbidden(red.read_secret, "app", mount_point=self.mount)
        self.assertIn(DENIAL % ("rgp", name, "hard-mandatory"), error)
        self.assertIn("rule main (1:8) = false", error)
        self.assertEqual(plain.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        # An RGP grants nothing: the ACL decides first.
        self.assertEqual(self.forbidden(client(blue_token).sys.list_mounted_secrets_engines), "1 error occurred:\n\t* permission denied\n\n")
        self.drop("rgp", name)
        self.assertEqual(red.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})

    def test_rgp_in_entity_policies_with_entity_metadata(self):
        identity = self.vault.secrets.identity
        token, entity_id = self.entity_token(self.aliases[0])
        kv = self.kv(token)
        name = unique("org-block")
        self.put_rgp(name, 'precond = rule { (identity.entity.metadata.org else "") is "acme" }\nmain = rule when precond { false }')
        identity.update_entity(entity_id, policies=[name], metadata={"org": "acme"})
        self.assertEqual(identity.read_entity(entity_id)["data"]["policies"], [name])
        self.assertIn(DENIAL % ("rgp", name, "hard-mandatory"), self.forbidden(kv.read_secret, "app", mount_point=self.mount))
        identity.update_entity(entity_id, metadata={"org": "other"})
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        identity.update_entity(entity_id, metadata={"org": "acme"})
        self.forbidden(kv.read_secret, "app", mount_point=self.mount)
        # Detached from the entity, the RGP no longer applies.
        identity.update_entity(entity_id, policies=[])
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})

    def test_rgp_in_group_policies_with_group_data(self):
        identity = self.vault.secrets.identity
        token, entity_id = self.entity_token(self.aliases[1])
        kv = self.kv(token)
        group = unique("ops")
        name = unique("ops-only")
        self.put_rgp(name, 'main = rule { "%s" in identity.groups.names and identity.groups.by_name["%s"].metadata.tier is "1" }' % (group, group))
        created = identity.create_or_update_group(group, policies=[name], member_entity_ids=[entity_id], metadata={"tier": "2"})["data"]
        self.addCleanup(identity.delete_group, created["id"])
        self.assertIn(DENIAL % ("rgp", name, "hard-mandatory"), self.forbidden(kv.read_secret, "app", mount_point=self.mount))
        identity.update_group(created["id"], group, metadata={"tier": "1"}, policies=[name], member_entity_ids=[entity_id])
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        # Another entity outside the group is not governed by the group's RGP.
        other, _ = self.entity_token(self.aliases[0])
        self.assertEqual(self.kv(other).read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
        identity.update_group(created["id"], group, metadata={"tier": "3"}, policies=[name], member_entity_ids=[entity_id])
        self.forbidden(kv.read_secret, "app", mount_point=self.mount)
        self.drop("rgp", name)
        self.assertEqual(kv.read_secret("app", mount_point=self.mount)["data"], {"v": "app"})
