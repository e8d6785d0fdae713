// Where an Azure Key Vault key lives: the Entra ID (Azure AD) authority of its cloud, the key store
// DNS suffix its vault is under, the token scope, and the key's URLs (the Worker's
// AZURE_AUTHORITY_HOST / AZURE_KEYVAULT_URL replace the public hosts: tests point them at emulators).

import type { AzureKeyVaultConfig, CloudEndpoints } from './types';

/** The Key Vault REST version spoken (its JSON shapes are the ones parsed here). */
export const KEYVAULT_API_VERSION = '7.4';

interface AzureCloud {
  authority: string;
  keyVaultSuffix: string;
}

/** Each national cloud's sign-in host and key store DNS suffix. */
const CLOUDS: Readonly<Record<string, AzureCloud>> = Object.freeze({
  AZUREPUBLICCLOUD: { authority: 'https://login.microsoftonline.com', keyVaultSuffix: 'vault.azure.net' },
  AZURECHINACLOUD: { authority: 'https://login.chinacloudapi.cn', keyVaultSuffix: 'vault.azure.cn' },
  AZUREUSGOVERNMENTCLOUD: { authority: 'https://login.microsoftonline.us', keyVaultSuffix: 'vault.usgovcloudapi.net' },
  AZUREGERMANCLOUD: { authority: 'https://login.microsoftonline.de', keyVaultSuffix: 'vault.microsoftazure.de' },
});

const PUBLIC = CLOUDS.AZUREPUBLICCLOUD;

export interface AzureTarget {
  /** POST here for a token (client credentials). */
  tokenUrl: string;
  /** The authority host the token comes from (part of the token cache's key). */
  authority: string;
  /** "https://<suffix>/.default": what the token must be valid for. */
  scope: string;
  /** The vault's base URL, without a trailing slash. */
  vaultUrl: string;
}

const trimSlashes = (u: string): string => u.replace(/\/+$/, '');

/**
 * The key store suffix: the configured `resource`, except that the public cloud's suffix (the
 * field's default) stands for the environment's own suffix in the other clouds.
 */
export function keyVaultSuffix(config: AzureKeyVaultConfig): string {
  const cloud = CLOUDS[config.environment] ?? PUBLIC;
  const resource = config.resource.trim().toLowerCase();
  return resource === '' || resource === PUBLIC.keyVaultSuffix ? cloud.keyVaultSuffix : resource;
}

export function azureTarget(config: AzureKeyVaultConfig, endpoints: CloudEndpoints | undefined): AzureTarget {
  const cloud = CLOUDS[config.environment] ?? PUBLIC;
  const suffix = keyVaultSuffix(config);
  const authority = trimSlashes(endpoints?.azureAuthority || cloud.authority);
  const override = endpoints?.azureKeyVault;
  const vaultUrl = trimSlashes(override ? override.replaceAll('{vault_name}', encodeURIComponent(config.vault_name)) : `https://${config.vault_name}.${suffix}`);
  return {
    tokenUrl: `${authority}/${encodeURIComponent(config.tenant_id)}/oauth2/v2.0/token`,
    authority,
    scope: `https://${suffix}/.default`,
    vaultUrl,
  };
}

/** `<vault>/keys/<name>[/<version>][/<operation>]?api-version=…` */
export function keyUrl(target: AzureTarget, name: string, version?: string, operation?: string): string {
  const parts = [target.vaultUrl, 'keys', encodeURIComponent(name)];
  if (version !== undefined) parts.push(encodeURIComponent(version));
  if (operation) parts.push(operation);
  return `${parts.join('/')}?api-version=${KEYVAULT_API_VERSION}`;
}
