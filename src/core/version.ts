// The Vault API version Coffer speaks, with Coffer's own version as build metadata.
// Clients such as the Terraform provider gate features on the Vault version they read here.
export const COFFER_VERSION = '0.1.0';
export const VAULT_API_VERSION = '1.21.0';
export const VERSION_STRING = `${VAULT_API_VERSION}+coffer.${COFFER_VERSION}`;
export const BUILD_DATE = '2026-11-22T00:00:00Z';
export const BUILTIN_PLUGIN_VERSION = `v${COFFER_VERSION}+builtin.coffer`;
