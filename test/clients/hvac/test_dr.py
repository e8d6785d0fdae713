"""DR replication driven by hvac, on two launchers of this module's own (DR_* in the environment).

hvac 0.11.2 has no replication methods, so the DR endpoints go through its generic read and write
(as its users call them); everything around them uses hvac's own methods (sys.enable_secrets_engine,
secrets.kv.v2, sys.unwrap, sys.read_seal_status, lookup_self). The steps build on each other and
run in name order: activation with a response-wrapped (JWT) token, sync, a secondary that serves
nothing, a DR operation token from the primary's recovery keys, promotion with every write there.
"""

import base64
import os
import time

import hvac

from common import ClientTest, unique

PRIMARY = os.environ.get("DR_PRIMARY_ADDR", "")
SECONDARY = os.environ.get("DR_SECONDARY_ADDR", "")
DR = "sys/replication/dr/"
DISABLED = "path disabled in replication DR secondary mode"


def at(url, token):
    return hvac.Client(url=url, token=token, strict_http=True)


def jwt_claims(token):
    """The claims of a JWT, unverified (the primary checks the signature when it is unwrapped)."""
    import json

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class DrFailover(ClientTest):
    mount = unique("dr-kv")
    written = {}

    @classmethod
    def setUpClass(cls):
        cls.primary = at(PRIMARY, os.environ["DR_PRIMARY_TOKEN"])
        cls.secondary = at(SECONDARY, os.environ["DR_SECONDARY_TOKEN"])
        cls.anonymous = at(PRIMARY, "")

    def refused(self, kind, call, *args, **kwargs):
        with self.assertRaises(kind) as caught:
            call(*args, **kwargs)
        return caught.exception.errors[0]

    def status(self, client):
        return client.read(DR + "status")["data"]

    def put(self, key, value):
        self.primary.secrets.kv.v2.create_or_update_secret(mount_point=self.mount, path=key, secret={"v": value})
        type(self).written[key] = value

    def test_1_status_is_unauthenticated_and_disabled(self):
        self.assertEqual(self.status(self.anonymous), {"mode": "disabled"})
        both = at(SECONDARY, "").read("sys/replication/status")["data"]
        self.assertEqual(both, {"dr": {"mode": "disabled"}, "performance": {"mode": "disabled"}})

    def test_2_wrong_state_calls_are_refused(self):
        invalid = hvac.exceptions.InvalidRequest
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "primary/secondary-token", id="x"), "Not a DR primary.")
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "primary/demote"), "Not a DR primary.")
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "secondary/promote", dr_operation_token="hvd.x"), "Not a DR secondary.")
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "secondary/reindex", dr_operation_token=None), "Not a DR secondary.")

    def test_3_primary_enables_under_load(self):
        self.primary.sys.enable_secrets_engine("kv", path=self.mount, options={"version": "2"})
        for i in range(5):
            self.put("before/%d" % i, "b%d" % i)
        self.assertIsNotNone(self.primary.write(DR + "primary/enable"))  # 204: hvac hands back the response
        status = self.status(self.anonymous)
        self.assertEqual(status["mode"], "primary")
        self.assertEqual(status["state"], "running")
        self.assertRegex(status["merkle_root"], "^[0-9a-f]{40}$")
        invalid = hvac.exceptions.InvalidRequest
        self.assertIn("already", self.refused(invalid, self.primary.write, DR + "primary/enable"))
        # JSON null is the zero value: no id.
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "primary/secondary-token", id=None), "missing secondary id")
        self.assertEqual(self.refused(invalid, self.primary.write, DR + "primary/secondary-token"), "missing secondary id")
        self.refused(invalid, self.primary.write, DR + "primary/secondary-token", id="x", ttl="banana")
        self.refused(invalid, self.primary.write, DR + "primary/secondary-token", id="x", secondary_public_key="AAAA")
        self.refused(invalid, self.primary.write, DR + "primary/revoke-secondary", id="nobody")
        narrow = self.primary.create_token(policies=["default"])["auth"]["client_token"]
        self.refused(hvac.exceptions.Forbidden, at(PRIMARY, narrow).write, DR + "primary/secondary-token", id="x")

    def test_4_wrapped_activation_token_is_a_jwt_naming_the_primary(self):
        reply = self.primary.write(DR + "primary/secondary-token", id="probe", ttl="5m")
        self.assertIsNone(reply["data"])
        wrap = reply["wrap_info"]
        self.assertEqual(wrap["creation_path"], "sys/replication/dr/primary/secondary-token")
        self.assertEqual(wrap["ttl"], 300)
        claims = jwt_claims(wrap["token"])
        self.assertEqual((claims["addr"], claims["type"]), (PRIMARY, "wrapping"))
        # hvac's own unwrap spends it: the payload says where and how to pull.
        payload = self.primary.sys.unwrap(token=wrap["token"])["data"]
        self.assertEqual(payload["secondary_id"], "probe")
        self.assertEqual(payload["primary_api_addr"], PRIMARY)
        self.assertEqual(payload["cluster_id"], self.status(self.anonymous)["cluster_id"])
        self.refused(hvac.exceptions.InvalidRequest, self.primary.sys.unwrap, token=wrap["token"])
        self.primary.write(DR + "primary/revoke-secondary", id="probe")

    def test_5_secondary_activates_mid_load_and_catches_up(self):
        token = self.primary.write(DR + "primary/secondary-token", id="hvac-east")["wrap_info"]["token"]
        self.refused(hvac.exceptions.InvalidRequest, self.secondary.write, DR + "secondary/enable", token="not-a-token")
        self.put("during/0", "d0")
        enabled = self.secondary.write(DR + "secondary/enable", token=token)
        self.assertIn("erased", enabled["warnings"][0])
        for i in range(1, 6):
            self.put("during/%d" % i, "d%d" % i)
        # A used activation token does not work twice.
        self.assertRaises(hvac.exceptions.VaultError, self.secondary.write, DR + "secondary/enable", token=token)
        anonymous = at(SECONDARY, "")
        for _ in range(150):
            p, s = self.status(self.anonymous), self.status(anonymous)
            if s.get("state") == "stream-wals" and s["last_remote_wal"] == p["last_wal"] and s["merkle_root"] == p["merkle_root"]:
                break
            time.sleep(0.2)
        self.assertEqual((s["mode"], s["secondary_id"], s["cluster_id"]), ("secondary", "hvac-east", p["cluster_id"]))
        self.assertEqual((s["state"], s["connection_state"]), ("stream-wals", "ready"))
        self.assertEqual(s["last_remote_wal"], p["last_wal"])
        self.assertEqual(s["merkle_root"], p["merkle_root"])
        self.assertIn("hvac-east", p["known_secondaries"])
        self.assertEqual(p["secondaries"][0]["connection_status"], "connected")

    def test_6_secondary_serves_nothing_but_status_and_seal(self):
        as_primary_root = at(SECONDARY, os.environ["DR_PRIMARY_TOKEN"])
        error = self.refused(hvac.exceptions.InvalidRequest, as_primary_root.secrets.kv.v2.read_secret_version, mount_point=self.mount, path="before/0")
        self.assertEqual(error, DISABLED)
        self.assertEqual(self.refused(hvac.exceptions.InvalidRequest, as_primary_root.lookup_token), DISABLED)
        self.assertFalse(at(SECONDARY, "").sys.read_seal_status()["sealed"])
        health = at(SECONDARY, "").sys.read_health_status(method="GET")
        self.assertEqual(health.status_code, 472)  # Vault's drsecondarycode
        self.assertEqual(health.json()["replication_dr_mode"], "secondary")
        self.assertEqual(self.primary.sys.read_health_status(method="GET")["replication_dr_mode"], "primary")
        # The primary's root token, in the replicated token store, authorises nothing here.
        self.refused(hvac.exceptions.Forbidden, as_primary_root.write, DR + "secondary/generate-operation-token/attempt")

    def test_7_operation_token_from_the_primary_recovery_keys(self):
        keys = os.environ["DR_PRIMARY_RECOVERY_KEYS"].split(",")
        anonymous = at(SECONDARY, "")
        attempt = anonymous.write(DR + "secondary/generate-operation-token/attempt", key=keys[0])
        self.assertTrue(attempt["started"])
        self.assertEqual(len(attempt["otp"]), 28)
        progress = attempt
        for key in keys[1:]:
            if progress["complete"]:
                break
            progress = anonymous.write(DR + "secondary/generate-operation-token/update", key=key, nonce=attempt["nonce"])
        self.assertTrue(progress["complete"])
        # A completed attempt is over: reading shows none in progress.
        self.assertFalse(anonymous.read(DR + "secondary/generate-operation-token/attempt")["started"])
        encoded = base64.b64decode(progress["encoded_token"] + "=" * (-len(progress["encoded_token"]) % 4))
        token = bytes(a ^ b for a, b in zip(encoded, attempt["otp"].encode())).decode()
        self.assertRegex(token, r"^hvd\.")
        type(self).operation_token = token
        invalid = hvac.exceptions.InvalidRequest
        self.assertEqual(self.refused(invalid, anonymous.write, DR + "secondary/promote", dr_operation_token="hvd.wrong"), "invalid DR operation token")
        self.assertEqual(self.refused(invalid, anonymous.write, DR + "secondary/promote", dr_operation_token=None), "missing dr_operation_token")

    def test_8_promotion_serves_every_write_with_the_same_tokens(self):
        anonymous = at(SECONDARY, "")
        promoted = anonymous.write(DR + "secondary/promote", dr_operation_token=self.operation_token)
        self.assertIn("primary", promoted["warnings"][0])
        self.assertEqual(self.status(anonymous)["mode"], "primary")
        as_primary_root = at(SECONDARY, os.environ["DR_PRIMARY_TOKEN"])
        self.assertEqual(as_primary_root.lookup_token()["data"]["policies"], ["root"])
        for key, value in self.written.items():
            got = as_primary_root.secrets.kv.v2.read_secret_version(mount_point=self.mount, path=key)
            self.assertEqual(got["data"]["data"], {"v": value}, key)
        self.assertEqual(len(self.written), 11)
