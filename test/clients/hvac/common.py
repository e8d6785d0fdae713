"""What every hvac conformance module shares: a client as a user would make one, and names."""

import os
import unittest
import uuid

import hvac


def client(token=None):
    """An hvac client for the launcher under test. strict_http: Workers cannot receive LIST."""
    return hvac.Client(
        url=os.environ["VAULT_ADDR"],
        token=os.environ["VAULT_TOKEN"] if token is None else token,
        strict_http=True,
    )


def unique(prefix):
    """A name no other test (or run) uses: modules run in parallel against one server."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


class ClientTest(unittest.TestCase):
    """A test case with a root client in self.vault."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.vault = client()


def helper(path, body=None):
    """The suite's helper service (global-setup.ts): JWT minting and browser sign-in."""
    import json
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(os.environ["COFFER_HELPER_URL"] + path, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        return json.loads(reply.read())
