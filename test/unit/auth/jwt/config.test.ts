// auth/<mount>/config: exactly one key source, the OIDC client pairing, remote URLs checked at
// write time, algorithms, response modes/types, and the read view (never the client secret).
import { describe, expect, it } from 'vitest';
import { AsnConvert } from '@peculiar/asn1-schema';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { discoveryURL, jwksURL, putDiscovery, putJwks } from '../../../helpers/jwks-server';
import { CERT_PEM, engine, expectError, makeKey } from './harness';

const pemOf = (label: string, der: ArrayBuffer): string =>
  `-----BEGIN ${label}-----\n${btoa(String.fromCharCode(...new Uint8Array(der))).replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;

describe('config write: the key source', () => {
  it('reads 404 before any write', async () => {
    const { call } = engine();
    await expectError(call('read', 'config'), 404);
  });

  it('needs exactly one of the key sources', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    const msg = "exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set";
    await expectError(call('write', 'config', {}), 400, msg);
    await expectError(call('write', 'config', { jwt_validation_pubkeys: [key.pem], jwks_url: 'http://127.0.0.1:1/jwks' }), 400, msg);
    await expectError(call('write', 'config', { oidc_discovery_url: 'http://x', jwks_pairs: [{ jwks_url: 'http://y' }] }), 400, msg);
    await expectError(call('read', 'config'), 404);
  });

  it('needs both the OIDC client id and secret, and a discovery URL for them', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    const both = "both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC";
    await expectError(call('write', 'config', { jwt_validation_pubkeys: key.pem, oidc_client_id: 'c' }), 400, both);
    await expectError(call('write', 'config', { jwt_validation_pubkeys: key.pem, oidc_client_secret: 's' }), 400, both);
    await expectError(call('write', 'config', { jwt_validation_pubkeys: key.pem, oidc_client_id: 'c', oidc_client_secret: 's' }), 400, "'oidc_discovery_url' must be set for OIDC");
  });

  it('refuses jwks_ca_pem beside jwks_pairs, and bound_issuer with jwks_pairs', async () => {
    const { call } = engine();
    await expectError(
      call('write', 'config', { jwks_pairs: [{ jwks_url: jwksURL('none') }], jwks_ca_pem: CERT_PEM }),
      400,
      "CA PEMs must be provided as part of the 'jwks_pairs' when using multiple JWKS URLs",
    );
    await expectError(call('write', 'config', { jwks_pairs: [{ jwks_url: jwksURL('none') }], bound_issuer: 'x' }), 400, "Bound issuer is not supported for use with 'jwks_pairs'");
    await expectError(call('write', 'config', { jwks_pairs: [{ jwks_ca_pem: 'x' }] }), 400, "invalid jwks_pairs: 'jwks_url' is required in each pair");
    await expectError(call('write', 'config', { jwks_pairs: 'nope' }), 400, 'invalid jwks_pairs: expected a list of objects');
  });

  it('accepts PKIX, PKCS#1 and certificate PEMs of RSA, EC and Ed25519 keys, and refuses anything else', async () => {
    const { call } = engine();
    const rsa = await makeKey('RS256');
    const ec = await makeKey('ES384');
    const ed = await makeKey('EdDSA');
    const spki = AsnConvert.parse(Uint8Array.from(atob(rsa.pem.replace(/-----[^-]+-----|\s/g, '')), (c) => c.charCodeAt(0)), SubjectPublicKeyInfo);
    const pkcs1 = pemOf('RSA PUBLIC KEY', spki.subjectPublicKey);
    const cert = CERT_PEM;
    expect(await call('write', 'config', { jwt_validation_pubkeys: [rsa.pem, ec.pem, ed.pem, pkcs1, cert] })).toEqual({});
    const read = await call('read', 'config');
    // Comma-list fields are trimmed, as Vault's are.
    expect(read.data?.jwt_validation_pubkeys).toEqual([rsa.pem, ec.pem, ed.pem, pkcs1, cert].map((p) => p.trim()));

    await expectError(call('write', 'config', { jwt_validation_pubkeys: ['not a pem'] }), 400, 'error parsing public key: data does not contain any valid public keys');
    await expectError(
      call('write', 'config', { jwt_validation_pubkeys: ['-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----'] }),
      400,
      'error parsing public key: data does not contain any valid public keys',
    );
  });

  it('checks the signing algorithms, response types and response mode', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    const base = { jwt_validation_pubkeys: key.pem };
    await expectError(call('write', 'config', { ...base, jwt_supported_algs: 'RS256,HS256' }), 400, 'invalid jwt_supported_algs: unsupported signing algorithm "HS256"');
    await expectError(call('write', 'config', { ...base, jwt_supported_algs: ['none'] }), 400, 'invalid jwt_supported_algs: unsupported signing algorithm "none"');
    await expectError(call('write', 'config', { ...base, oidc_response_types: 'code,token' }), 400, "invalid response_types [code token]. 'code' and 'id_token' are allowed");
    await expectError(call('write', 'config', { ...base, oidc_response_types: 'id_token' }), 400, 'query response_mode may not be used with an id_token response_type');
    await expectError(call('write', 'config', { ...base, oidc_response_mode: 'query', oidc_response_types: 'code,id_token' }), 400, 'query response_mode may not be used with an id_token response_type');
    await expectError(call('write', 'config', { ...base, oidc_response_mode: 'fragment' }), 400, 'invalid response_mode: "fragment"');
    await expectError(call('write', 'config', { ...base, provider_config: { foo: 'bar' } }), 400, "invalid provider_config: 'provider' field not found in provider_config");
    await expectError(call('write', 'config', { ...base, unsupported_critical_cert_extensions: 'abc' }), 400, 'error parsing extension OID: invalid OID "abc"');
    await call('write', 'config', { ...base, oidc_response_mode: 'form_post', oidc_response_types: 'id_token', jwt_supported_algs: 'ES256,EdDSA', unsupported_critical_cert_extensions: '2.5.29.19' });
    const data = (await call('read', 'config')).data!;
    expect(data.oidc_response_mode).toBe('form_post');
    expect(data.oidc_response_types).toEqual(['id_token']);
    expect(data.jwt_supported_algs).toEqual(['ES256', 'EdDSA']);
    expect(data.unsupported_critical_cert_extensions).toEqual(['2.5.29.19']);
  });

  it('reads back every field, never the client secret; namespace_in_state defaults to true only for new configs', async () => {
    const { call } = engine();
    const key = await makeKey('ES256');
    await call('write', 'config', { jwt_validation_pubkeys: key.pem, bound_issuer: 'https://iss', default_role: 'Dev', provider_config: { provider: 'azure' } });
    expect((await call('read', 'config')).data).toEqual({
      oidc_discovery_url: '',
      oidc_discovery_ca_pem: '',
      oidc_client_id: '',
      oidc_response_mode: '',
      oidc_response_types: [],
      default_role: 'dev',
      jwt_validation_pubkeys: [key.pem],
      jwt_supported_algs: [],
      jwks_url: '',
      jwks_pairs: [],
      jwks_ca_pem: '',
      bound_issuer: 'https://iss',
      provider_config: { provider: 'azure' },
      namespace_in_state: true,
      unsupported_critical_cert_extensions: [],
    });
    await call('write', 'config', { jwt_validation_pubkeys: key.pem, namespace_in_state: false });
    expect((await call('read', 'config')).data?.namespace_in_state).toBe(false);
    // An update without the field keeps the stored value; the rest is replaced, as in Vault.
    await call('write', 'config', { jwt_validation_pubkeys: key.pem });
    const data = (await call('read', 'config')).data!;
    expect(data.namespace_in_state).toBe(false);
    expect(data.bound_issuer).toBe('');
  });
});

describe('config write: remote documents are fetched at write time', () => {
  it('accepts a reachable JWKS URL and refuses an unreachable or malformed one', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    await putJwks('cfg-good', { keys: [key.jwk] });
    await call('write', 'config', { jwks_url: jwksURL('cfg-good') });
    expect((await call('read', 'config')).data?.jwks_url).toBe(jwksURL('cfg-good'));

    await expectError(call('write', 'config', { jwks_url: jwksURL('cfg-missing') }), 400, `error checking jwks URL ${jwksURL('cfg-missing')}`);
    await putJwks('cfg-bad', 'this is not json');
    await expectError(call('write', 'config', { jwks_url: jwksURL('cfg-bad') }), 400, `error checking jwks URL ${jwksURL('cfg-bad')}`);
    await putJwks('cfg-nokeys', '{"foo": 1}');
    await expectError(call('write', 'config', { jwks_url: jwksURL('cfg-nokeys') }), 400, `error checking jwks URL ${jwksURL('cfg-nokeys')}`);
    await expectError(call('write', 'config', { jwks_url: jwksURL('cfg-good'), jwks_ca_pem: 'not a pem' }), 400, 'error checking jwks_ca_pem');
    // A failed write leaves the previous config.
    expect((await call('read', 'config')).data?.jwks_url).toBe(jwksURL('cfg-good'));
  });

  it('checks every URL of jwks_pairs', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    await putJwks('pair-a', { keys: [key.jwk] });
    await expectError(call('write', 'config', { jwks_pairs: [{ jwks_url: jwksURL('pair-a') }, { jwks_url: jwksURL('pair-none') }] }), 400, `error checking jwks URL ${jwksURL('pair-none')}`);
    const ca = CERT_PEM;
    await putJwks('pair-b', { keys: [] });
    await call('write', 'config', { jwks_pairs: [{ jwks_url: jwksURL('pair-a') }, { jwks_url: jwksURL('pair-b'), jwks_ca_pem: ca }] });
    expect((await call('read', 'config')).data?.jwks_pairs).toEqual([
      { jwks_url: jwksURL('pair-a'), jwks_ca_pem: '' },
      { jwks_url: jwksURL('pair-b'), jwks_ca_pem: ca },
    ]);
  });

  it('accepts a discovery URL whose document names it as issuer; refuses unreachable, mismatched or key-less ones', async () => {
    const { call } = engine();
    const key = await makeKey('RS256');
    await putJwks('disc-keys', { keys: [key.jwk] });
    await putDiscovery('disc-ok', { jwks_uri: jwksURL('disc-keys'), authorization_endpoint: 'http://idp/auth', token_endpoint: 'http://idp/token' });
    await call('write', 'config', { oidc_discovery_url: discoveryURL('disc-ok'), oidc_client_id: 'coffer', oidc_client_secret: 's3cret', default_role: 'web' });
    const data = (await call('read', 'config')).data!;
    expect(data.oidc_discovery_url).toBe(discoveryURL('disc-ok'));
    expect(data.oidc_client_id).toBe('coffer');
    expect(data).not.toHaveProperty('oidc_client_secret');
    expect(JSON.stringify(data)).not.toContain('s3cret');

    const msg = 'error checking oidc discovery URL';
    await expectError(call('write', 'config', { oidc_discovery_url: discoveryURL('disc-missing') }), 400, msg);
    await putDiscovery('disc-wrong-issuer', { issuer: 'https://elsewhere', jwks_uri: jwksURL('disc-keys') });
    await expectError(call('write', 'config', { oidc_discovery_url: discoveryURL('disc-wrong-issuer') }), 400, msg);
    await putDiscovery('disc-no-jwks', {});
    await expectError(call('write', 'config', { oidc_discovery_url: discoveryURL('disc-no-jwks') }), 400, msg);
    await putDiscovery('disc-dead-jwks', { jwks_uri: jwksURL('disc-nothing-here') });
    await expectError(call('write', 'config', { oidc_discovery_url: discoveryURL('disc-dead-jwks') }), 400, msg);
    await expectError(call('write', 'config', { oidc_discovery_url: discoveryURL('disc-ok'), oidc_discovery_ca_pem: 'garbage' }), 400, msg);
    expect((await call('read', 'config')).data?.oidc_discovery_url).toBe(discoveryURL('disc-ok'));
  });
});
