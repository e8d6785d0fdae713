"""hvac's AWS secrets engine methods (client.secrets.aws.*) against the IAM/STS emulator.

What hvac 0.11.2 sends, and what follows from it:
  * configure_root_iam_credentials always sends max_retries, null unless given (read back as 0);
  * create_or_update_role knows no session_token credential type (it refuses it itself), nor
    iam_groups, user_path, session_tags or external_id: those go through the generic write;
  * generate_credentials puts name, role_arn and ttl in the query string, also for the PUT it sends
    to sts/<name>, where Vault (and Coffer) read only the body: role_arn and ttl reach the engine
    through endpoint="creds" (a GET) only.
"""

import json
import os
import re
import urllib.request

import hvac

from common import ClientTest, unique

ACCOUNT = "123456789012"
ADMIN_USER = "vault-admin"
ADMIN_KEY = ("AKIAHVACADMIN0000001", "hvac/admin/secret/EXAMPLE00000000000001")
READ_ONLY = "arn:aws:iam::aws:policy/ReadOnlyAccess"
GROUP_POLICY = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}'
DOCUMENT = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}]}
# hvac sends a dict policy_document as json.dumps(indent=4, sort_keys=True); the engine compacts it.
DOCUMENT_COMPACT = json.dumps(DOCUMENT, separators=(",", ":"), sort_keys=True)

SEED = {
    "users": [{"userName": ADMIN_USER, "accessKeys": [{"accessKeyId": ADMIN_KEY[0], "secretAccessKey": ADMIN_KEY[1]}]}],
    "groups": [{"groupName": "developers", "inlinePolicies": {"dev-s3": GROUP_POLICY}}, {"groupName": "auditors"}],
    "roles": [{"roleName": "deployer", "maxSessionDuration": 7200}, {"roleName": "reader"}],
}

DEFAULT_TEMPLATE = (
    '{{ if (eq .Type "STS") }}{{ printf "vault-%s-%s"  (unix_time) (random 20) | truncate 32 }}'
    '{{ else }}{{ printf "vault-%s-%s-%s" (printf "%s-%s" (.DisplayName) (.PolicyName) | truncate 42) (unix_time) (random 20) | truncate 64 }}{{ end }}'
)

# A role's read shape with nothing set (lists and maps never written read as null).
NOTHING = {
    "credential_type": "",
    "policy_arns": None,
    "role_arns": None,
    "policy_document": "",
    "iam_groups": None,
    "iam_tags": None,
    "session_tags": None,
    "external_id": "",
    "default_sts_ttl": 0,
    "max_sts_ttl": 0,
    "user_path": "",
    "permissions_boundary_arn": "",
    "mfa_serial_number": "",
    "wait_for_usable": False,
}


def role_arn(name):
    return "arn:aws:iam::%s:role/%s" % (ACCOUNT, name)


class Emulator:
    """One tenant (an account of its own) of the suite's AWS emulator, through its control API."""

    def __init__(self, tenant):
        self.endpoint = "%s/t/%s" % (os.environ["AWS_EMULATOR"], tenant)

    def _call(self, method, route, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.endpoint + "/_emulator/" + route, data=data, method=method, headers={"content-type": "application/json"})
        with urllib.request.urlopen(request) as reply:
            return json.loads(reply.read())

    def reset(self, seed=SEED):
        return self._call("POST", "reset", seed)

    def state(self):
        return self._call("GET", "state")

    def calls(self):
        return self._call("GET", "calls")

    def users(self):
        """The users the engine made (everyone but the admin)."""
        return [u for u in self.state()["users"] if u["userName"] != ADMIN_USER]

    def last_temp(self):
        return self.state()["tempCredentials"][-1]


class AwsTest(ClientTest):
    """A mount of its own configured with hvac against a tenant of its own."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.aws = cls.vault.secrets.aws
        cls.mount = unique("aws")
        cls.emu = Emulator(cls.mount)
        cls.emu.reset()
        cls.vault.sys.enable_secrets_engine("aws", path=cls.mount)
        response = cls.aws.configure_root_iam_credentials(
            ADMIN_KEY[0], ADMIN_KEY[1], region="us-east-1", iam_endpoint=cls.emu.endpoint, sts_endpoint=cls.emu.endpoint, mount_point=cls.mount
        )
        assert response.status_code == 204, response.text


class Config(AwsTest):
    def test_root_config_reads_back_without_the_secret_key(self):
        raw = self.vault.read("%s/config/root" % self.mount)
        self.assertEqual(
            raw["data"],
            {
                "access_key": ADMIN_KEY[0],
                "region": "us-east-1",
                "iam_endpoint": self.emu.endpoint,
                "sts_endpoint": self.emu.endpoint,
                "sts_region": "",
                "sts_fallback_endpoints": [],
                "sts_fallback_regions": [],
                # hvac sent max_retries: null, which the engine takes as 0 (Vault's zero value).
                "max_retries": 0,
                "username_template": DEFAULT_TEMPLATE,
                "role_arn": "",
                "identity_token_audience": "",
                "identity_token_ttl": 0,
                "rotation_period": 0,
                "rotation_schedule": "",
                "rotation_window": 0,
                "disable_automated_rotation": False,
            },
        )
        self.assertNotIn(ADMIN_KEY[1], json.dumps(raw))
        # Given explicitly, max_retries is kept.
        self.aws.configure_root_iam_credentials(
            ADMIN_KEY[0], ADMIN_KEY[1], region="us-east-1", iam_endpoint=self.emu.endpoint, sts_endpoint=self.emu.endpoint, max_retries=3, mount_point=self.mount
        )
        self.assertEqual(self.vault.read("%s/config/root" % self.mount)["data"]["max_retries"], 3)

    def test_lease_config(self):
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.aws.read_lease_config(mount_point=self.mount)
        response = self.aws.configure_lease("30m", "12h", mount_point=self.mount)
        self.assertEqual(response.status_code, 204)
        self.assertEqual(self.aws.read_lease_config(mount_point=self.mount)["data"], {"lease": "30m0s", "lease_max": "12h0m0s"})
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.aws.configure_lease("soon", "1h", mount_point=self.mount)
        self.assertIn('Invalid lease: time: invalid duration "soon"', str(refused.exception))
        self.assertEqual(self.aws.read_lease_config(mount_point=self.mount)["data"], {"lease": "30m0s", "lease_max": "12h0m0s"})


class Roles(AwsTest):
    def test_every_credential_type_reads_back_lists_and_deletes(self):
        m = self.mount
        self.assertEqual(
            self.aws.create_or_update_role(
                "user", "iam_user", policy_document=DOCUMENT, policy_arns=[READ_ONLY], iam_tags=["team=platform", "env=test"], mount_point=m
            ).status_code,
            204,
        )
        # hvac's method has no iam_groups: the generic write adds them, keeping the rest.
        self.vault.write("%s/roles/user" % m, iam_groups=["developers", "auditors"])
        self.assertEqual(
            self.aws.read_role("user", mount_point=m)["data"],
            dict(
                NOTHING,
                credential_type="iam_user",
                policy_arns=[READ_ONLY],
                policy_document=DOCUMENT_COMPACT,
                iam_tags={"team": "platform", "env": "test"},
                iam_groups=["developers", "auditors"],
            ),
        )

        self.aws.create_or_update_role(
            "assumer", "assumed_role", role_arns=[role_arn("deployer"), role_arn("reader")], policy_arns=READ_ONLY, default_sts_ttl="15m", max_sts_ttl="2h", mount_point=m
        )
        self.assertEqual(
            self.aws.read_role("assumer", mount_point=m)["data"],
            dict(
                NOTHING,
                credential_type="assumed_role",
                role_arns=[role_arn("deployer"), role_arn("reader")],
                policy_arns=[READ_ONLY],
                default_sts_ttl=900,
                max_sts_ttl=7200,
            ),
        )

        self.aws.create_or_update_role("federated", "federation_token", policy_document=json.dumps(DOCUMENT), default_sts_ttl=1800, mount_point=m)
        self.assertEqual(
            self.aws.read_role("federated", mount_point=m)["data"],
            # A string document is compacted as written (keys in their order).
            dict(NOTHING, credential_type="federation_token", policy_document=json.dumps(DOCUMENT, separators=(",", ":")), default_sts_ttl=1800),
        )

        # hvac 0.11.2 refuses session_token itself, before sending anything.
        with self.assertRaises(hvac.exceptions.ParamValidationError):
            self.aws.create_or_update_role("session", "session_token", mount_point=m)
        self.vault.write("%s/roles/session" % m, credential_type="session_token", max_sts_ttl="1h")
        self.assertEqual(self.aws.read_role("session", mount_point=m)["data"], dict(NOTHING, credential_type="session_token", max_sts_ttl=3600))

        self.assertEqual(self.aws.list_roles(mount_point=m)["data"]["keys"], ["assumer", "federated", "session", "user"])

        # The engine's own validation, reported through hvac's exception.
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.aws.create_or_update_role("bad", "iam_user", policy_arns=[READ_ONLY], default_sts_ttl="1h", mount_point=m)
        self.assertIn("default_sts_ttl parameter only valid for", str(refused.exception))
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.aws.read_role("bad", mount_point=m)

        self.assertEqual(self.aws.delete_role("federated", mount_point=m).status_code, 204)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.aws.read_role("federated", mount_point=m)
        with self.assertRaises(hvac.exceptions.InvalidPath):
            self.aws.delete_role("federated", mount_point=m)
        self.assertEqual(self.aws.list_roles(mount_point=m)["data"]["keys"], ["assumer", "session", "user"])


class Credentials(AwsTest):
    def test_iam_user_made_renewed_and_revoked(self):
        m = self.mount
        self.aws.configure_lease("1h", "2h", mount_point=m)
        self.aws.create_or_update_role("app", "iam_user", policy_document=DOCUMENT, policy_arns=[READ_ONLY], iam_tags=["team=platform"], mount_point=m)
        self.vault.write("%s/roles/app" % m, iam_groups=["developers"])

        issued = self.aws.generate_credentials("app", mount_point=m)
        data = issued["data"]
        self.assertRegex(data["access_key"], r"^AKIA[A-Z0-9]{16}$")
        self.assertIsNone(data["security_token"])
        self.assertEqual(sorted(data), ["access_key", "secret_key", "security_token"])
        self.assertRegex(issued["lease_id"], r"^%s/creds/app/[A-Za-z0-9]{24}$" % re.escape(m))
        self.assertEqual((issued["lease_duration"], issued["renewable"]), (3600, True))

        [user] = self.emu.users()
        self.assertRegex(user["userName"], r"^vault-root-app-\d{10}-[A-Za-z0-9]{20}$")
        self.assertEqual(user["attachedPolicies"], [READ_ONLY])
        self.assertEqual(user["inlinePolicies"], {"app": DOCUMENT_COMPACT})
        self.assertEqual(user["groups"], ["developers"])
        self.assertEqual(user["tags"], [{"Key": "team", "Value": "platform"}])
        self.assertEqual([(k["accessKeyId"], k["secretAccessKey"]) for k in user["accessKeys"]], [(data["access_key"], data["secret_key"])])

        renewed = self.vault.sys.renew_lease(issued["lease_id"], increment=7200)
        self.assertEqual((renewed["lease_id"], renewed["lease_duration"], renewed["renewable"]), (issued["lease_id"], 3600, True))

        before = len(self.emu.calls())
        self.assertEqual(self.vault.sys.revoke_lease(issued["lease_id"]).status_code, 204)
        self.assertEqual(
            [c["action"] for c in self.emu.calls()[before:]],
            [
                "ListGroupsForUser",
                "ListUserPolicies",
                "ListAttachedUserPolicies",
                "ListAccessKeys",
                "DeleteAccessKey",
                "DetachUserPolicy",
                "DeleteUserPolicy",
                "RemoveUserFromGroup",
                "DeleteUser",
            ],
        )
        self.assertEqual(self.emu.users(), [])
        self.assertEqual([g["members"] for g in self.emu.state()["groups"]], [[], []])
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.vault.sys.renew_lease(issued["lease_id"])

    def test_assumed_role_through_sts(self):
        m = self.mount
        self.aws.create_or_update_role("deploy", "assumed_role", role_arns=[role_arn("deployer")], policy_arns=[READ_ONLY], mount_point=m)
        issued = self.aws.generate_credentials("deploy", endpoint="sts", mount_point=m)
        data = issued["data"]
        self.assertRegex(data["access_key"], r"^ASIA[A-Z0-9]{16}$")
        self.assertRegex(data["arn"], r"^arn:aws:sts::%s:assumed-role/deployer/vault-root-deploy-\d{10}-[A-Za-z0-9]{20}$" % ACCOUNT)
        self.assertEqual(sorted(data), ["access_key", "arn", "secret_key", "security_token"])
        self.assertRegex(issued["lease_id"], r"^%s/sts/deploy/[A-Za-z0-9]{24}$" % re.escape(m))
        self.assertFalse(issued["renewable"])
        self.assertTrue(3590 < issued["lease_duration"] <= 3600)

        temp = self.emu.last_temp()
        self.assertEqual(
            (temp["accessKeyId"], temp["secretAccessKey"], temp["sessionToken"], temp["action"], temp["roleArn"], temp["arn"], temp["issuedTo"]),
            (data["access_key"], data["secret_key"], data["security_token"], "AssumeRole", role_arn("deployer"), data["arn"], ADMIN_KEY[0]),
        )
        self.assertEqual(temp["policyArns"], [READ_ONLY])
        self.assertEqual(temp["durationSeconds"], 3600)

        # STS credentials cannot be withdrawn: revoking calls nothing; renewing is refused.
        before = len(self.emu.calls())
        self.assertEqual(self.vault.sys.revoke_lease(issued["lease_id"]).status_code, 204)
        self.assertEqual(len(self.emu.calls()), before)
        again = self.aws.generate_credentials("deploy", endpoint="sts", mount_point=m)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.vault.sys.renew_lease(again["lease_id"])
        self.assertIn("lease is not renewable", str(refused.exception))

    def test_role_arn_and_ttl_reach_the_engine_only_through_creds(self):
        m = self.mount
        self.aws.create_or_update_role("two", "assumed_role", role_arns=[role_arn("deployer"), role_arn("reader")], mount_point=m)
        # hvac puts role_arn and ttl in the query string of its PUT to sts/, which Vault ignores.
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.aws.generate_credentials("two", role_arn=role_arn("reader"), ttl="15m", endpoint="sts", mount_point=m)
        self.assertIn("did not supply a role_arn parameter and unable to determine one", str(refused.exception))
        # Through creds (a GET), the query string is the request's data.
        issued = self.aws.generate_credentials("two", role_arn=role_arn("reader"), ttl="15m", mount_point=m)
        self.assertIn(":assumed-role/reader/vault-root-two-", issued["data"]["arn"])
        self.assertTrue(890 < issued["lease_duration"] <= 900)
        temp = self.emu.last_temp()
        self.assertEqual((temp["roleArn"], temp["durationSeconds"]), (role_arn("reader"), 900))
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.aws.generate_credentials("two", role_arn=role_arn("other"), mount_point=m)
        self.assertIn('role_arn "%s" not in allowed role arns for Vault role "two"' % role_arn("other"), str(refused.exception))

    def test_federation_and_session_tokens(self):
        m = self.mount
        self.aws.create_or_update_role("fed", "federation_token", policy_document=DOCUMENT, mount_point=m)
        fed = self.aws.generate_credentials("fed", endpoint="sts", mount_point=m)
        self.assertEqual(sorted(fed["data"]), ["access_key", "secret_key", "security_token"])
        self.assertFalse(fed["renewable"])
        temp = self.emu.last_temp()
        self.assertEqual((temp["accessKeyId"], temp["sessionToken"], temp["action"], temp["policy"]), (fed["data"]["access_key"], fed["data"]["security_token"], "GetFederationToken", DOCUMENT_COMPACT))
        self.assertRegex(temp["name"], r"^vault-\d{10}-[A-Za-z0-9]{15}$")
        self.assertEqual(temp["arn"], "arn:aws:sts::%s:federated-user/%s" % (ACCOUNT, temp["name"]))

        self.vault.write("%s/roles/session" % m, credential_type="session_token")
        session = self.aws.generate_credentials("session", endpoint="sts", mount_point=m)
        self.assertEqual(sorted(session["data"]), ["access_key", "secret_key", "security_token"])
        temp = self.emu.last_temp()
        self.assertEqual((temp["accessKeyId"], temp["action"], temp["arn"]), (session["data"]["access_key"], "GetSessionToken", "arn:aws:iam::%s:user/%s" % (ACCOUNT, ADMIN_USER)))
        # An unknown role: Vault's message.
        with self.assertRaises(hvac.exceptions.InvalidRequest) as refused:
            self.aws.generate_credentials("nope", mount_point=m)
        self.assertIn('Role "nope" not found', str(refused.exception))


class RotateRoot(AwsTest):
    def test_rotate_root(self):
        m = self.mount
        rotated = self.aws.rotate_root_iam_credentials(mount_point=m)
        new_key = rotated["data"]["access_key"]
        self.assertRegex(new_key, r"^AKIA[A-Z0-9]{16}$")
        self.assertEqual(list(rotated["data"]), ["access_key"])
        self.assertEqual([(c["action"], c["accessKeyId"]) for c in self.emu.calls()], [("GetUser", ADMIN_KEY[0]), ("CreateAccessKey", ADMIN_KEY[0]), ("DeleteAccessKey", new_key)])
        [admin] = [u for u in self.emu.state()["users"] if u["userName"] == ADMIN_USER]
        self.assertEqual([k["accessKeyId"] for k in admin["accessKeys"]], [new_key])
        self.assertEqual(self.vault.read("%s/config/root" % m)["data"]["access_key"], new_key)
        # The engine goes on with the new key.
        self.aws.create_or_update_role("after", "iam_user", policy_arns=[READ_ONLY], mount_point=m)
        before = len(self.emu.calls())
        self.aws.generate_credentials("after", mount_point=m)
        self.assertEqual({c["accessKeyId"] for c in self.emu.calls()[before:]}, {new_key})
