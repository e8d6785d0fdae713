"""hvac's JWT/OIDC auth methods (client.auth.jwt.*, client.auth.oidc.*): configuration, roles,
JWT login, and the OIDC authorization-code flow against a real OpenID provider."""

import os
import urllib.parse

import hvac

from common import ClientTest, client, helper, unique


class Jwt(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.path = unique("jwt")
        cls.vault.sys.enable_auth_method("jwt", path=cls.path)
        cls.public_key = helper("/jwt/public-key")["public_key"]
        cls.vault.auth.jwt.configure(jwt_validation_pubkeys=[cls.public_key], bound_issuer="https://ci.example", path=cls.path)

    def jwt(self, **claims):
        claims.setdefault("iss", "https://ci.example")
        claims.setdefault("aud", "coffer")
        return helper("/jwt", {"claims": claims})["jwt"]

    def test_read_config(self):
        config = self.vault.auth.jwt.read_config(path=self.path)["data"]
        self.assertEqual(config["jwt_validation_pubkeys"], [self.public_key])
        self.assertEqual(config["bound_issuer"], "https://ci.example")
        self.assertEqual(config["oidc_discovery_url"], "")

    def test_role_defaults_read_back_as_vault_stores_them(self):
        name = unique("defaults")
        self.vault.auth.jwt.create_role(name, user_claim="sub", allowed_redirect_uris=[], bound_audiences=["coffer"], path=self.path)
        role = self.vault.auth.jwt.read_role(name, path=self.path)["data"]
        self.assertEqual(role["role_type"], "jwt")
        self.assertEqual(role["expiration_leeway"], 150)
        self.assertEqual(role["not_before_leeway"], 150)
        self.assertEqual(role["clock_skew_leeway"], 60)
        self.assertEqual(role["bound_claims_type"], "string")

    def test_roles(self):
        name = unique("role")
        self.vault.auth.jwt.create_role(
            name,
            user_claim="sub",
            allowed_redirect_uris=[],
            bound_audiences=["coffer"],
            bound_claims={"repo": ["app", "lib"]},
            groups_claim="groups",
            claim_mappings={"repo": "repository"},
            token_ttl="30m",
            token_max_ttl=7200,
            token_policies=["ci"],
            token_bound_cidrs=["127.0.0.0/8"],
            token_no_default_policy=True,
            token_num_uses=0,
            token_type="service",
            clock_skew_leeway=30,
            expiration_leeway="1m",
            not_before_leeway=-1,
            path=self.path,
        )
        role = self.vault.auth.jwt.read_role(name, path=self.path)["data"]
        self.assertEqual(role["bound_claims"], {"repo": ["app", "lib"]})
        self.assertEqual(role["claim_mappings"], {"repo": "repository"})
        self.assertEqual(role["token_ttl"], 1800)
        self.assertEqual(role["token_max_ttl"], 7200)
        self.assertEqual(role["token_policies"], ["ci"])
        self.assertEqual(role["token_bound_cidrs"], ["127.0.0.0/8"])
        self.assertTrue(role["token_no_default_policy"])
        self.assertEqual((role["clock_skew_leeway"], role["expiration_leeway"], role["not_before_leeway"]), (30, 60, -1))
        self.assertIn(name, self.vault.auth.jwt.list_roles(path=self.path)["data"]["keys"])
        self.vault.auth.jwt.delete_role(name, path=self.path)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.vault.auth.jwt.read_role(name, path=self.path)

    def test_login(self):
        name = unique("login")
        self.vault.auth.jwt.create_role(
            name, user_claim="sub", allowed_redirect_uris=[], bound_audiences=["coffer"], bound_claims={"repo": "app"},
            claim_mappings={"repo": "repository"}, token_policies=["ci"], token_ttl="10m", path=self.path,
        )
        user = client(token="")
        reply = user.auth.jwt.jwt_login(name, self.jwt(sub="build-7", repo="app"), path=self.path)
        auth = reply["auth"]
        self.assertEqual(auth["policies"], ["ci", "default"])
        self.assertEqual(auth["metadata"], {"repository": "app", "role": name})
        self.assertEqual(auth["lease_duration"], 600)
        self.assertEqual(user.token, auth["client_token"])  # hvac uses the new token from now on
        self.assertEqual(user.auth.token.lookup_self()["data"]["meta"], {"repository": "app", "role": name})

    def test_login_refused(self):
        name = unique("refuse")
        self.vault.auth.jwt.create_role(name, user_claim="sub", allowed_redirect_uris=[], bound_audiences=["coffer"], bound_claims={"repo": "app"}, path=self.path)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            client(token="").auth.jwt.jwt_login(name, self.jwt(sub="x", repo="other"), path=self.path)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            client(token="").auth.jwt.jwt_login(name, self.jwt(sub="x", repo="app", aud="elsewhere"), path=self.path)


class Oidc(ClientTest):
    """The browser part of the flow (the provider's login and consent pages) is the helper's."""

    PATH = "hvac-oidc"  # the provider knows this mount's callback

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.redirect_uri = "%s/v1/auth/%s/oidc/callback" % (os.environ["VAULT_ADDR"], cls.PATH)
        cls.vault.sys.enable_auth_method("oidc", path=cls.PATH)
        cls.vault.auth.oidc.configure(
            oidc_discovery_url=os.environ["OIDC_ISSUER"],
            oidc_client_id="coffer",
            oidc_client_secret="coffer-client-secret-basic-0123456789",
            default_role="web",
            path=cls.PATH,
        )
        cls.vault.auth.oidc.create_role(
            "web", user_claim="email", allowed_redirect_uris=[cls.redirect_uri], groups_claim="groups",
            oidc_scopes=["email", "groups"], token_policies=["dev"], path=cls.PATH,
        )

    def test_config_hides_the_client_secret(self):
        config = self.vault.auth.oidc.read_config(path=self.PATH)["data"]
        self.assertEqual(config["oidc_client_id"], "coffer")
        self.assertNotIn("oidc_client_secret", config)

    def test_role_reads_back(self):
        role = self.vault.auth.oidc.read_role("web", path=self.PATH)["data"]
        self.assertEqual(role["role_type"], "oidc")
        self.assertEqual(role["allowed_redirect_uris"], [self.redirect_uri])
        self.assertEqual(role["oidc_scopes"], ["email", "groups"])

    def test_authorization_code_flow(self):
        user = client(token="")
        auth_url = user.auth.oidc.oidc_authorization_url_request("web", self.redirect_uri, path=self.PATH)["data"]["auth_url"]
        query = urllib.parse.parse_qs(urllib.parse.urlparse(auth_url).query)
        self.assertEqual(query["redirect_uri"], [self.redirect_uri])
        landed = helper("/sign-in", {"auth_url": auth_url, "user": "alice", "password": "alice-pw", "redirect_uri": self.redirect_uri})["url"]
        back = urllib.parse.parse_qs(urllib.parse.urlparse(landed).query)
        reply = user.auth.oidc.oidc_callback(back["state"][0], query["nonce"][0], back["code"][0], path=self.PATH)
        self.assertEqual(reply["auth"]["policies"], ["default", "dev"])
        self.assertEqual(client(reply["auth"]["client_token"]).auth.token.lookup_self()["data"]["meta"]["role"], "web")

    def test_unknown_redirect_uri_gets_no_url(self):
        # As in Vault: no error (it would tell an attacker which URIs are allowed), no URL.
        reply = client(token="").auth.oidc.oidc_authorization_url_request("web", "http://127.0.0.1/elsewhere", path=self.PATH)
        self.assertEqual(reply["data"]["auth_url"], "")
