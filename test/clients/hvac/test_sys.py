"""hvac's system backend methods (client.sys.*) against Coffer, with the arguments users pass."""

import base64
import os

import hvac

from common import ClientTest, client, unique


class InitSealHealth(ClientTest):
    def test_is_initialized(self):
        self.assertTrue(self.vault.sys.is_initialized())
        self.assertEqual(self.vault.sys.read_init_status(), {"initialized": True})

    def test_seal_status(self):
        status = self.vault.sys.read_seal_status()
        self.assertFalse(status["sealed"])
        self.assertTrue(status["initialized"])
        self.assertEqual((status["t"], status["n"]), (1, 1))
        self.assertFalse(self.vault.sys.is_sealed())

    def test_health(self):
        health = self.vault.sys.read_health_status(method="GET")
        self.assertEqual(health["initialized"], True)
        self.assertEqual(health["sealed"], False)
        self.assertEqual(health["standby"], False)
        self.assertIsInstance(health["server_time_utc"], int)
        head = self.vault.sys.read_health_status(method="HEAD")
        self.assertEqual(head.status_code, 200)

    def test_health_status_codes(self):
        # hvac passes the query parameters through; an active node answers activecode.
        reply = self.vault.sys.read_health_status(active_code=299, method="GET")
        self.assertEqual(reply.status_code, 299)

    def test_leader(self):
        leader = self.vault.sys.read_leader_status()
        self.assertIn("ha_enabled", leader)
        self.assertIn("is_self", leader)

    def test_key_status_and_rotate(self):
        before = self.vault.sys.get_encryption_key_status()
        term = before["data"]["term"]
        self.assertEqual(before["term"], term)  # top-level copy, as Vault sends
        self.vault.sys.rotate_encryption_key()
        after = self.vault.sys.get_encryption_key_status()
        self.assertEqual(after["data"]["term"], term + 1)


class Mounts(ClientTest):
    def test_enable_kv2_as_in_every_tutorial(self):
        path = unique("kv2")
        self.vault.sys.enable_secrets_engine("kv", path=path, options={"version": "2"})
        mounts = self.vault.sys.list_mounted_secrets_engines()
        self.assertEqual(mounts["data"][path + "/"]["type"], "kv")
        self.assertEqual(mounts["data"][path + "/"]["options"], {"version": "2"})
        self.assertEqual(mounts[path + "/"]["options"], {"version": "2"})  # top-level copy
        self.assertEqual(self.vault.sys.retrieve_mount_option(path, "version"), "2")

    def test_enable_with_every_argument(self):
        path = unique("kv1")
        self.vault.sys.enable_secrets_engine(
            backend_type="kv",
            path=path,
            description="team secrets",
            config={"default_lease_ttl": "1h", "max_lease_ttl": "2h", "listing_visibility": "unauth"},
            options={"version": "1"},
            local=True,
            seal_wrap=False,
        )
        info = self.vault.sys.list_mounted_secrets_engines()["data"][path + "/"]
        self.assertEqual(info["description"], "team secrets")
        self.assertTrue(info["local"])
        self.assertEqual(info["config"]["default_lease_ttl"], 3600)
        self.assertEqual(info["config"]["max_lease_ttl"], 7200)
        self.assertEqual(info["config"]["listing_visibility"], "unauth")

    def test_enable_transit_and_pki_without_options(self):
        for kind in ("transit", "pki"):
            path = unique(kind)
            self.vault.sys.enable_secrets_engine(kind, path=path)
            self.assertEqual(self.vault.sys.list_mounted_secrets_engines()["data"][path + "/"]["type"], kind)

    def test_tune_and_read(self):
        path = unique("tune")
        self.vault.sys.enable_secrets_engine("kv", path=path)
        self.vault.sys.tune_mount_configuration(
            path,
            default_lease_ttl=600,
            max_lease_ttl="1h",
            description="tuned",
            audit_non_hmac_request_keys=["a", "b"],
            listing_visibility="hidden",
            passthrough_request_headers=["X-Custom"],
        )
        conf = self.vault.sys.read_mount_configuration(path)
        self.assertEqual(conf["data"]["default_lease_ttl"], 600)
        self.assertEqual(conf["data"]["max_lease_ttl"], 3600)
        self.assertEqual(conf["data"]["description"], "tuned")
        self.assertEqual(conf["data"]["audit_non_hmac_request_keys"], ["a", "b"])
        self.assertEqual(conf["data"]["passthrough_request_headers"], ["X-Custom"])

    def test_tune_upgrades_kv_to_version_2(self):
        path = unique("upgrade")
        self.vault.sys.enable_secrets_engine("kv", path=path, options={"version": "1"})
        self.vault.sys.tune_mount_configuration(path, options={"version": "2"})
        self.assertEqual(self.vault.sys.retrieve_mount_option(path, "version"), "2")

    def test_move_and_disable(self):
        src, dst = unique("from"), unique("to")
        self.vault.sys.enable_secrets_engine("kv", path=src, options={"version": "1"})
        self.vault.secrets.kv.v1.create_or_update_secret("moved", {"v": "1"}, mount_point=src)
        self.vault.sys.move_backend(src, dst)
        self.assertEqual(self.vault.secrets.kv.v1.read_secret("moved", mount_point=dst)["data"], {"v": "1"})
        mounts = self.vault.sys.list_mounted_secrets_engines()["data"]
        self.assertNotIn(src + "/", mounts)
        self.vault.sys.disable_secrets_engine(dst)
        self.assertNotIn(dst + "/", self.vault.sys.list_mounted_secrets_engines()["data"])

    def test_conflict_is_a_client_error(self):
        path = unique("dup")
        self.vault.sys.enable_secrets_engine("kv", path=path)
        with self.assertRaises(hvac.exceptions.InvalidRequest) as caught:
            self.vault.sys.enable_secrets_engine("kv", path=path)
        self.assertIn("path is already in use", str(caught.exception))


class AuthMethods(ClientTest):
    def test_enable_list_tune_disable(self):
        path = unique("jwt")
        self.vault.sys.enable_auth_method("jwt", path=path, description="ci logins", config={"default_lease_ttl": "30m"})
        methods = self.vault.sys.list_auth_methods()
        self.assertEqual(methods["data"][path + "/"]["type"], "jwt")
        self.assertEqual(methods[path + "/"]["description"], "ci logins")
        self.assertEqual(methods["data"]["token/"]["type"], "token")
        self.vault.sys.tune_auth_method(path, default_lease_ttl="15m", max_lease_ttl=7200, token_type="batch")
        tuning = self.vault.sys.read_auth_method_tuning(path)
        self.assertEqual(tuning["data"]["default_lease_ttl"], 900)
        self.assertEqual(tuning["data"]["max_lease_ttl"], 7200)
        self.assertEqual(tuning["data"]["token_type"], "batch")
        self.vault.sys.disable_auth_method(path)
        self.assertNotIn(path + "/", self.vault.sys.list_auth_methods()["data"])

    def test_enable_with_defaults_only(self):
        path = unique("oidc")
        self.vault.sys.enable_auth_method("oidc", path=path)
        self.assertEqual(self.vault.sys.list_auth_methods()["data"][path + "/"]["type"], "oidc")


class Policies(ClientTest):
    RULES = 'path "secret/data/app/*" {\n  capabilities = ["read", "list"]\n}\n'

    def test_create_read_list_delete(self):
        name = unique("pol")
        self.vault.sys.create_or_update_policy(name, self.RULES)
        self.assertEqual(self.vault.sys.read_policy(name)["data"]["rules"], self.RULES)
        self.assertIn(name, self.vault.sys.list_policies()["data"]["policies"])
        self.vault.sys.delete_policy(name)
        self.assertNotIn(name, self.vault.sys.list_policies()["data"]["policies"])

    def test_policy_as_a_dict(self):
        # hvac serialises a dict policy to JSON text (Vault accepts JSON policies).
        name = unique("jsonpol")
        self.vault.sys.create_or_update_policy(name, {"path": {"transit/encrypt/app": {"capabilities": ["update"]}}})
        caps = self.vault.sys.get_capabilities(["transit/encrypt/app"], token=self._token_with(name))
        self.assertEqual(caps["capabilities"], ["update"])

    def test_pretty_print_false(self):
        name = unique("compact")
        self.vault.sys.create_or_update_policy(name, {"path": {"kv/x": {"capabilities": ["read"]}}}, pretty_print=False)
        self.assertIn("kv/x", self.vault.sys.read_policy(name)["data"]["rules"])

    def _token_with(self, policy):
        return self.vault.auth.token.create(policies=[policy], ttl="10m")["auth"]["client_token"]


class Capabilities(ClientTest):
    def test_self_token_and_accessor(self):
        name = unique("cap")
        self.vault.sys.create_or_update_policy(name, 'path "kv/app/*" { capabilities = ["read", "update"] }')
        created = self.vault.auth.token.create(policies=[name], ttl="10m")["auth"]
        self.assertEqual(self.vault.sys.get_capabilities(["kv/app/x"])["capabilities"], ["root"])
        by_token = self.vault.sys.get_capabilities(["kv/app/x", "kv/other"], token=created["client_token"])
        self.assertEqual(by_token["kv/app/x"], ["read", "update"])
        self.assertEqual(by_token["data"]["kv/other"], ["deny"])
        by_accessor = self.vault.sys.get_capabilities(["kv/app/x"], accessor=created["accessor"])
        self.assertEqual(by_accessor["capabilities"], ["read", "update"])
        own = client(created["client_token"]).sys.get_capabilities(["kv/app/y"])
        self.assertEqual(own["capabilities"], ["read", "update"])


class Audit(ClientTest):
    def test_enable_hash_list_disable(self):
        path = unique("audit")
        self.vault.sys.enable_audit_device("file", path=path, description="to the log", options={"file_path": "discard"})
        devices = self.vault.sys.list_enabled_audit_devices()
        self.assertEqual(devices["data"][path + "/"]["type"], "file")
        self.assertEqual(devices["data"][path + "/"]["options"]["file_path"], "discard")
        hashed = self.vault.sys.calculate_hash(path, "my-secret")
        self.assertRegex(hashed["data"]["hash"], r"^hmac-sha256:[0-9a-f]{64}$")
        self.assertEqual(hashed["data"]["hash"], self.vault.sys.calculate_hash(path, "my-secret")["data"]["hash"])
        self.vault.sys.disable_audit_device(path)
        self.assertNotIn(path + "/", self.vault.sys.list_enabled_audit_devices()["data"])


    def test_http_device_records_concurrent_requests_in_one_chain(self):
        self.check_http_device({})

    def test_batch_http_device_posts_groups_of_lines(self):
        posts = self.check_http_device({"batch": "true"})
        self.assertTrue(all(body.endswith("\n") for body in posts))

    def check_http_device(self, options):
        """Many requests at once through an http device: each recorded once, and the chain links
        (checked here with hashlib, apart from the server's and the npm checker's code). Answers
        the bodies the device POSTed."""
        import hashlib
        import http.server
        import json
        import threading
        from concurrent.futures import ThreadPoolExecutor

        delivered = []

        class Sink(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                delivered.append(body)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
        threading.Thread(target=sink.serve_forever, daemon=True).start()
        path = unique("audit-http")
        mount = unique("kv")
        self.vault.sys.enable_secrets_engine("kv", path=mount, options={"version": "1"})
        try:
            url = "http://127.0.0.1:%d/log" % sink.server_address[1]
            self.vault.sys.enable_audit_device("http", path=path, options=dict(options, url=url))

            def write_then_read(i):
                own = client()
                own.secrets.kv.v1.create_or_update_secret("k%d" % i, {"v": str(i)}, mount_point=mount)
                return own.secrets.kv.v1.read_secret("k%d" % i, mount_point=mount)

            with ThreadPoolExecutor(max_workers=16) as pool:
                reads = list(pool.map(write_then_read, range(32)))
            head = self.vault.sys.list_enabled_audit_devices()["data"][path + "/"]["chain_head"]
        finally:
            # Disabled before the sink goes: a device that cannot deliver refuses every request.
            self.vault.sys.disable_audit_device(path)
            sink.shutdown()
        self.assertEqual([r["data"]["v"] for r in reads], [str(i) for i in range(32)])
        # A batch device's body holds one entry per line.
        texts = [line for body in delivered for line in body.splitlines() if line]
        entries = [json.loads(text) for text in texts]
        for i, r in enumerate(reads):
            self.assertEqual([e["type"] for e in entries if e["request"]["id"] == r["request_id"]], ["request", "response"])
            written = [e["type"] for e in entries if e["request"]["path"] == "%s/k%d" % (mount, i) and e["request"]["operation"] == "update"]
            self.assertEqual(written, ["request", "response"])
        previous = "sha256:" + "0" * 64
        hashes = []
        for n, text in enumerate(texts, start=1):
            chain = json.loads(text)["chain"]
            self.assertEqual((chain["seq"], chain["prev"]), (n, previous), "entry %d" % n)
            previous = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
            hashes.append(previous)
        self.assertIn(head["hash"], hashes)
        return delivered


class Leases(ClientTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # PKI issues a lease for each certificate of a role with generate_lease.
        cls.mount = unique("pkilease")
        cls.vault.sys.enable_secrets_engine("pki", path=cls.mount, config={"max_lease_ttl": "24h"})
        cls.vault.secrets.pki.generate_root("internal", "lease.example", extra_params={"ttl": "24h"}, mount_point=cls.mount)
        cls.vault.secrets.pki.create_or_update_role(
            "leased", {"allowed_domains": "example.com", "allow_subdomains": True, "generate_lease": True, "ttl": "1h"}, mount_point=cls.mount
        )

    def _issue(self):
        reply = self.vault.secrets.pki.generate_certificate("leased", "a.example.com", mount_point=self.mount)
        self.assertTrue(reply["lease_id"].startswith(self.mount + "/issue/leased/"))
        return reply["lease_id"]

    def test_read_renew_revoke(self):
        lease_id = self._issue()
        lease = self.vault.sys.read_lease(lease_id)
        self.assertEqual(lease["data"]["id"], lease_id)
        self.assertGreater(lease["data"]["ttl"], 3000)
        # A certificate's lease cannot be renewed (as in Vault): the certificate's dates are fixed.
        with self.assertRaises(hvac.exceptions.InvalidRequest) as caught:
            self.vault.sys.renew_lease(lease_id, increment=1800)
        self.assertIn("lease is not renewable", str(caught.exception))
        self.vault.sys.revoke_lease(lease_id)
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.vault.sys.read_lease(lease_id)

    def test_list_and_revoke_prefix(self):
        first, second = self._issue(), self._issue()
        prefix = self.mount + "/issue/leased/"
        listed = self.vault.sys.list_leases(prefix)["data"]["keys"]
        for lease_id in (first, second):
            self.assertIn(lease_id[len(prefix):], listed)
        self.vault.sys.revoke_prefix(prefix)
        for lease_id in (first, second):
            with self.assertRaises(hvac.exceptions.InvalidRequest):
                self.vault.sys.read_lease(lease_id)

    def test_revoke_force(self):
        lease_id = self._issue()
        self.vault.sys.revoke_force(self.mount + "/issue/")
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.vault.sys.read_lease(lease_id)


class Wrapping(ClientTest):
    def test_wrap_a_token_and_unwrap_it(self):
        wrapped = self.vault.auth.token.create(policies=["default"], ttl="10m", wrap_ttl="2m")
        wrap_token = wrapped["wrap_info"]["token"]
        self.assertEqual(wrapped["wrap_info"]["ttl"], 120)
        unwrapped = self.vault.sys.unwrap(wrap_token)
        self.assertEqual(unwrapped["auth"]["policies"], ["default"])
        with self.assertRaises(hvac.exceptions.InvalidRequest):
            self.vault.sys.unwrap(wrap_token)

    def test_unwrap_with_the_wrapping_token_itself(self):
        wrapped = self.vault.auth.token.create(policies=["default"], ttl="10m", wrap_ttl=60)
        unwrapped = client(wrapped["wrap_info"]["token"]).sys.unwrap()
        self.assertTrue(unwrapped["auth"]["client_token"])


class GenerateRoot(ClientTest):
    def test_generate_a_root_token_with_an_otp(self):
        self.vault.sys.cancel_root_generation()
        # hvac requires otp or pgp_key; a user passes a 28-character OTP of their own.
        otp = "0123456789abcdefABCDEFghijkl"
        started = self.vault.sys.start_root_token_generation(otp=otp)
        self.assertTrue(started["started"])
        progress = self.vault.sys.read_root_generation_progress()
        self.assertEqual(progress["nonce"], started["nonce"])
        done = self.vault.sys.generate_root(os.environ["COFFER_RECOVERY_KEY"], started["nonce"])
        self.assertTrue(done["complete"])
        encoded = base64.b64decode(done["encoded_token"] + "=" * (-len(done["encoded_token"]) % 4))
        token = bytes(a ^ b for a, b in zip(encoded, otp.encode())).decode()
        self.assertEqual(client(token).auth.token.lookup_self()["data"]["policies"], ["root"])

    def test_cancel(self):
        self.vault.sys.cancel_root_generation()
        self.vault.sys.start_root_token_generation(otp="abcdefghijklmnopqrstuvwxyz01")
        self.vault.sys.cancel_root_generation()
        self.assertFalse(self.vault.sys.read_root_generation_progress()["started"])


class Operational(ClientTest):
    """sys/metrics, sys/host-info and sys/internal/counters through hvac's generic methods (hvac
    0.11.2 has no dedicated ones), the Prometheus text checked by Prometheus's own Python client."""

    def test_metrics_json(self):
        self.vault.secrets.kv.v1.create_or_update_secret("probe", {"v": "1"}, mount_point=self._kv())
        metrics = self.vault.adapter.get("/v1/sys/metrics")
        self.assertIn("Samples", metrics)
        names = {m["Name"] for m in metrics["Samples"]}
        self.assertIn("vault.core.handle_request", names)
        self.assertIn("vault.core.unsealed", {g["Name"] for g in metrics["Gauges"]})

    def test_metrics_prometheus_parses_with_prometheus_client(self):
        from prometheus_client.parser import text_string_to_metric_families

        text = self.vault.adapter.get("/v1/sys/metrics", params={"format": "prometheus"}).text
        families = {f.name: f for f in text_string_to_metric_families(text)}
        self.assertEqual(families["vault_core_unsealed"].type, "gauge")
        self.assertEqual(families["vault_core_unsealed"].samples[0].value, 1)
        self.assertEqual(families["vault_core_handle_request"].type, "summary")
        counts = [s for s in families["vault_core_handle_request"].samples if s.name.endswith("_count")]
        self.assertGreater(counts[0].value, 0)
        self.assertEqual(families["vault_token_creation"].type, "counter")

    def test_host_info(self):
        info = self.vault.read("sys/host-info")
        self.assertEqual(info["data"]["host"]["os"], "workerd")
        self.assertIsNone(info["data"]["memory"])
        self.assertTrue(info["warnings"])

    def test_counters(self):
        # Other modules create and revoke tokens on the same server meanwhile: the exact count is
        # checked in the integration tests, the shape and a lower bound here.
        self.vault.auth.token.create(policies=["default"], ttl="5m")
        total = self.vault.read("sys/internal/counters/tokens")["data"]["counters"]["service_tokens"]["total"]
        self.assertIsInstance(total, int)
        self.assertGreaterEqual(total, 2)
        monthly = self.vault.read("sys/internal/counters/activity/monthly")["data"]
        self.assertGreaterEqual(monthly["clients"], 1)
        activity = self.vault.read("sys/internal/counters/activity")["data"]
        self.assertEqual(len(activity["months"]), 12)
        self.vault.write("sys/internal/counters/config", retention_months=48, default_report_months=12)
        self.assertEqual(self.vault.read("sys/internal/counters/config")["data"]["retention_months"], 48)

    def _kv(self):
        path = unique("opkv")
        self.vault.sys.enable_secrets_engine("kv", path=path, options={"version": "1"})
        return path
