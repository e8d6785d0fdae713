"""hvac's seal and unseal methods, run by seal.test.ts against a launcher of its own (sealing the
shared one would stop every other test)."""

import os

from common import ClientTest


class SealUnseal(ClientTest):
    def test_seal_then_unseal_with_the_recovery_key(self):
        self.assertFalse(self.vault.sys.is_sealed())
        self.assertEqual(self.vault.sys.read_seal_status()["type"], os.environ["COFFER_SEAL_TYPE"])
        self.vault.sys.seal()
        self.assertTrue(self.vault.sys.is_sealed())
        status = self.vault.sys.read_seal_status()
        self.assertEqual((status["sealed"], status["t"], status["progress"]), (True, 1, 0))
        reply = self.vault.sys.submit_unseal_key(os.environ["COFFER_RECOVERY_KEY"])
        self.assertFalse(reply["sealed"])
        self.assertFalse(self.vault.sys.is_sealed())

    def test_submit_unseal_keys_and_reset(self):
        self.vault.sys.seal()
        self.vault.sys.submit_unseal_key(reset=True)
        self.assertEqual(self.vault.sys.read_seal_status()["progress"], 0)
        reply = self.vault.sys.submit_unseal_keys([os.environ["COFFER_RECOVERY_KEY"]])
        self.assertFalse(reply["sealed"])
